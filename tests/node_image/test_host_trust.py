"""Hosts trust no spec value with root (issue 37, items 3 and 4): the Flink user and group are never
root or a privileged group, the discovery script is never installed where another user can write
or the system reads on its own, and ``node/provision.sh`` checks the same on the host itself."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from accelplane.checks.host_accounts import PRIVILEGED_GROUPS

from tests.support.node_provisioning import make_fake_root, run_provisioner
from tests.support.specs import findings_by_code

BASE = """\
cluster: {name: hosts, platforms: [yarn]}
nodePools:
  - {name: t4, platform: yarn, nodes: 2, gpu: {vendor: nvidia, perNode: 2}}
yarn: {cgroups: v1}
flink:
  clusters:
    - {name: s, target: yarn, taskManager: {gpu: {amount: 1}}}
"""


def _codes(write_spec: Any, discovery: str) -> dict[str, tuple[str, str, str]]:
    return findings_by_code(write_spec(BASE + f"discovery: {discovery}\n"))


@pytest.mark.parametrize("user", ["root", "toor"])
def test_root_user_is_refused(user: str, write_spec: Any) -> None:
    found = _codes(write_spec, f"{{user: {user}}}")
    assert found["AP6160"][:2] == ("error", "discovery.user")


@pytest.mark.parametrize(
    "group", ["root", "docker", "disk", "shadow", "sudo", "wheel", "adm", "lxd", "kvm", "libvirt", "staff"]
)
def test_privileged_groups_are_refused(group: str, write_spec: Any) -> None:
    assert group in PRIVILEGED_GROUPS
    found = _codes(write_spec, f"{{group: {group}}}")
    assert found["AP6161"][:2] == ("error", "discovery.group")
    assert "AP6160" not in found


@pytest.mark.parametrize("group", ["flink", "video", "render", "hadoop"])
def test_gpu_and_dedicated_groups_are_allowed(group: str, write_spec: Any) -> None:
    found = _codes(write_spec, f"{{group: {group}}}")
    assert not {"AP6160", "AP6161"} & set(found)


@pytest.mark.parametrize(
    "install_dir",
    [
        "/tmp", "/tmp/accelplane", "/var/tmp/x", "/dev/shm", "/dev/shm/gpu", "/etc/sudoers.d", "/etc/cron.d",
        "/etc/cron.hourly", "/etc/update-motd.d", "/usr/lib/systemd/system-generators", "/root/.ssh",
        "/proc/self", "/sys/kernel", "/run/user/1000", "/home/alice/bin", "/run/lock/x",
    ],
)  # fmt: skip
def test_unsafe_install_dirs_are_refused(install_dir: str, write_spec: Any) -> None:
    found = _codes(write_spec, f"{{installDir: '{install_dir}'}}")
    assert found["AP8060"][:2] == ("error", "discovery.installDir"), found


@pytest.mark.parametrize(
    "install_dir", ["/opt/flink/plugins/external-resource-gpu", "/usr/local/libexec/accelplane", "/usr/lib/flink/gpu"]
)
def test_dedicated_install_dirs_are_allowed(install_dir: str, write_spec: Any) -> None:
    assert "AP8060" not in _codes(write_spec, f"{{installDir: '{install_dir}'}}")


# --- provision.sh at install time ----------------------------------------------------------------


# `rendered` and `fake_root` are fixtures of tests/node_image/conftest.py.


def _installed(root: Path) -> list[str]:
    """Files below ``root`` other than the fake ``etc/passwd`` and ``etc/group``."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and p.relative_to(root).parts[0] != "etc")


@pytest.mark.parametrize(
    ("passwd", "group", "message"),
    [
        ("flinkgpu:x:0:4322::/nonexistent:/usr/sbin/nologin\n", "gpu-users:x:4322:\n", "user flinkgpu has uid 0"),
        ("flinkgpu:x:4321:0::/nonexistent:/usr/sbin/nologin\n", "gpu-users:x:0:\n", "group gpu-users has gid 0"),
    ],
    ids=["uid-0", "gid-0"],
)
def test_provision_refuses_a_root_alias(
    passwd: str, group: str, message: str, rendered: Path, fake_root: Path
) -> None:
    """The spec names ``flinkgpu``/``gpu-users``; on this host they are root under another name."""
    (fake_root / "etc").mkdir()
    (fake_root / "etc/passwd").write_text("root:x:0:0:root:/root:/bin/sh\n" + passwd)
    (fake_root / "etc/group").write_text("root:x:0:\n" + group)
    result = run_provisioner(rendered / "node/provision.sh", "--root", str(fake_root))
    assert result.returncode == 1
    assert f"error: {message}" in result.stderr
    assert _installed(fake_root) == []  # refused before anything is installed


@pytest.mark.parametrize(
    ("directory", "mode", "owner", "refused"),
    [
        ("usr/local", 0o777, 0, "writable by group or others (mode 777)"),
        ("usr/local/libexec", 0o775, 0, "writable by group or others (mode 775)"),
        ("opt", 0o757, 0, "writable by group or others (mode 757)"),
        ("usr/local", 0o1777, 1234, "belongs to uid 1234"),
        ("usr/local", 0o755, 1234, "belongs to uid 1234"),
        ("usr/local", 0o1777, 0, None),  # sticky and root's, like /tmp (the spec check refuses /tmp by name)
        ("usr/local", 0o755, 0, None),
    ],
)
def test_provision_refuses_an_install_path_others_can_write(
    directory: str, mode: int, owner: int, refused: str | None, rendered: Path, fake_root: Path
) -> None:
    if owner and os.geteuid() != 0:
        pytest.skip("chown to another uid needs root")
    make_fake_root(fake_root, "flinkgpu", "gpu-users")
    path = fake_root / directory
    path.mkdir(parents=True)
    if owner:
        os.chown(path, owner, owner)
    path.chmod(mode)
    result = run_provisioner(rendered / "node/provision.sh", "--root", str(fake_root))
    if refused is None:
        assert result.returncode == 0, result.stderr
    else:
        assert result.returncode == 1
        assert f"error: /{directory} " in result.stderr and refused in result.stderr, result.stderr
        assert not (fake_root / "usr/local/libexec/accelplane").exists()
