"""node/cloud-init.yaml: cloud-init's own schema validator, an allow-list of top-level keys,
and cloud-init's own write_files code applied to a fake root, compared with provision.sh."""

from __future__ import annotations

import grp
import importlib.util
import json
import os
import pwd
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from accelplane.builders import node_image
from accelplane.discovery_install import COMPILE_PROGRAM, MODULE_PATH, entry_stub, script_text
from accelplane.render import bundle_files

from tests.conftest import STACKS_DIR
from tests.support.node_provisioning import (
    FULL_SPEC,
    SPEC_CASES,
    artifact,
    make_fake_root,
    run_provisioner,
    write_rendered,
)
from tests.support.render import files_for
from tests.support.specs import model_of
from tests.support.validators import tool

# cloud-init silently ignores unknown top-level keys, so a typo ("write_file") would be a no-op.
# Every top-level key we emit must be one of these real cloud-init module keys.
ALLOWED_TOP_LEVEL_KEYS = frozenset({"write_files", "runcmd"})


def cloud_init_python() -> str:
    """The interpreter that runs cloud-init (its ``cloudinit`` package is importable there)."""
    exe = tool("cloud-init")
    first = Path(exe).read_text(errors="replace").splitlines()[0]
    assert first.startswith("#!"), f"unexpected cloud-init launcher {exe}"
    return first[2:].strip().split()[0]


def cloud_init_schema(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [tool("cloud-init"), "schema", "--config-file", str(path)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def unknown_top_level_keys(text: str) -> set[str]:
    """Top-level keys of a cloud-config that are not on the allow-list."""
    return set(yaml.safe_load(text)) - ALLOWED_TOP_LEVEL_KEYS


@pytest.mark.parametrize("name", SPEC_CASES)
def test_cloud_init_schema_accepts_user_data(name, write_spec, tmp_path):
    text = artifact(name, write_spec, "node/cloud-init.yaml")
    if text is None:
        return
    assert text.startswith("#cloud-config\n")
    path = tmp_path / "user-data"
    path.write_text(text)
    result = cloud_init_schema(path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Valid cloud-config" in result.stdout
    assert unknown_top_level_keys(text) == set()


def test_allow_list_names_real_cloud_init_modules():
    """Each allowed key is a configuration key of a cloud-init module, per cloud-init's own schema."""
    code = (
        "import json; from cloudinit.config.schema import get_schema; s = get_schema(); "
        "print(json.dumps(sorted({k for n, d in s['$defs'].items() if n.startswith('cc_') "
        "for k in d.get('properties', {})})))"
    )
    out = subprocess.run([cloud_init_python(), "-c", code], capture_output=True, text=True, check=True)
    module_keys = set(json.loads(out.stdout))
    assert module_keys >= ALLOWED_TOP_LEVEL_KEYS


def test_validators_are_not_blind(tmp_path):
    """Controls: cloud-init's schema rejects a wrong key inside write_files; a top-level typo,
    which cloud-init accepts, is caught by the allow-list."""
    text = files_for(STACKS_DIR / "yarn-analytics.yaml")["node/cloud-init.yaml"][0]
    broken = tmp_path / "broken"
    broken.write_text(text.replace("    permissions: '0755'", "    perms: '0755'", 1))
    assert cloud_init_schema(broken).returncode != 0
    typo = text.replace("\nruncmd:\n", "\nruncmds:\n")
    typo_path = tmp_path / "typo"
    typo_path.write_text(typo)
    assert cloud_init_schema(typo_path).returncode == 0  # cloud-init itself says nothing ...
    assert unknown_top_level_keys(typo) == {"runcmds"}  # ... so we check it ourselves


def test_content_and_commands(write_spec):
    text = files_for(write_spec(FULL_SPEC))["node/cloud-init.yaml"][0]
    doc = yaml.safe_load(text)
    module, stub, conf = doc["write_files"]
    # The script as a module, byte-compiled by runcmd; the stub at script_path runs it (-I -S).
    assert module == {
        "path": MODULE_PATH,
        "owner": "root:root",
        "permissions": "0644",
        "content": script_text(),
    }
    assert stub == {
        "path": "/usr/local/libexec/accelplane/accelplane-gpu-discovery",
        "owner": "root:root",
        "permissions": "0755",
        "content": entry_stub("/usr/bin/python3"),
    }
    assert conf["path"] == "/etc/tmpfiles.d/accelplane-gpu.conf"
    assert conf["permissions"] == "0644"
    rules = [line for line in conf["content"].splitlines() if line and not line.startswith("#")]
    assert rules == [
        "d /var/lib/accelplane 2770 flinkgpu gpu-users -",
        "r! /var/lib/accelplane/gpu-coordination",
        "r! /var/lib/accelplane/gpu-coordination.labels",
        "d /var/lib/accelplane/yarn 2770 flinkgpu gpu-users -",
        "r! /var/lib/accelplane/yarn/t4-coordination",
        "r! /var/lib/accelplane/yarn/t4-coordination.labels",
        "d /var/lib/accelplane-flink-pids 755 flinkgpu gpu-users -",
    ]
    assert doc["runcmd"] == [
        "getent group gpu-users >/dev/null || groupadd --system gpu-users",
        "getent passwd flinkgpu >/dev/null || useradd --system --gid gpu-users --no-create-home"
        " --home-dir /nonexistent --shell /usr/sbin/nologin flinkgpu",
        ["/usr/bin/python3", "-I", "-S", "-c", COMPILE_PROGRAM, MODULE_PATH],
        ["systemd-tmpfiles", "--create", "/etc/tmpfiles.d/accelplane-gpu.conf"],
    ]


@pytest.mark.parametrize("present", [False, True])
def test_runcmd_account_commands_with_stubbed_tools(present, write_spec, tmp_path):
    """The runcmd shell lines run by /bin/sh create group and user only when missing."""
    doc = yaml.safe_load(files_for(write_spec(FULL_SPEC))["node/cloud-init.yaml"][0])
    bin_dir, log = tmp_path / "bin", tmp_path / "calls.log"
    bin_dir.mkdir()
    for name, body in (
        ("getent", f'echo "getent $*" >>{log}; exit {0 if present else 2}'),
        ("groupadd", f'echo "groupadd $*" >>{log}'),
        ("useradd", f'echo "useradd $*" >>{log}'),
    ):
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / name).chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    for cmd in doc["runcmd"][:2]:
        subprocess.run(["/bin/sh", "-c", cmd], env=env, check=True)
    expected = ["getent group gpu-users", "getent passwd flinkgpu"]
    if not present:
        expected = [
            "getent group gpu-users",
            "groupadd --system gpu-users",
            "getent passwd flinkgpu",
            "useradd --system --gid gpu-users --no-create-home --home-dir /nonexistent"
            " --shell /usr/sbin/nologin flinkgpu",
        ]
    assert log.read_text().splitlines() == expected


def _apply_cloud_init(user_data: Path, root: Path) -> None:
    """Run cloud-init's own write_files on the user data (paths moved below ``root``, files owned
    by us), then the runcmd's systemd-tmpfiles command with --root."""
    me = f"{pwd.getpwuid(os.geteuid()).pw_name}:{grp.getgrgid(os.getegid()).gr_name}"
    code = f"""
import json, sys
from cloudinit import util
from cloudinit.config.cc_write_files import write_files
cfg = util.load_yaml(open({str(user_data)!r}).read())
files = [dict(f, path={str(root)!r} + f["path"], owner={me!r}) for f in cfg["write_files"]]
write_files("write_files", files, {me!r})
print(json.dumps(cfg["runcmd"]))
"""
    out = subprocess.run([cloud_init_python(), "-c", code], capture_output=True, text=True, check=True)
    runcmd = json.loads(out.stdout)
    compile_cmd, tmpfiles_cmd = runcmd[-2:]
    assert compile_cmd[:5] == ["/usr/bin/python3", "-I", "-S", "-c", COMPILE_PROGRAM]
    # the node's python3 byte-compiles the module it wrote (here: ours, on the copy below root)
    subprocess.run([sys.executable, *compile_cmd[1:-1], str(root) + compile_cmd[-1]], check=True, capture_output=True)
    assert tmpfiles_cmd[:2] == ["systemd-tmpfiles", "--create"]
    subprocess.run(
        [tool("systemd-tmpfiles"), "--create", f"--root={root}", str(root) + tmpfiles_cmd[2]],
        check=True,
        capture_output=True,
    )


def _state(root: Path, paths: list[str]) -> dict[str, tuple[object, ...]]:
    out = {}
    for rel in paths:
        p = root / rel
        st = p.lstat()
        content = p.read_bytes() if stat.S_ISREG(st.st_mode) else b""
        out[rel] = (stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid, content)
    return out


def test_cloud_init_and_provisioner_have_the_same_effect(write_spec, tmp_path):
    out = write_rendered(files_for(write_spec(FULL_SPEC)), tmp_path / "out")
    by_cloud_init, by_script = tmp_path / "a", tmp_path / "b"
    for root in (by_cloud_init, by_script):
        root.mkdir()
        make_fake_root(root, "flinkgpu", "gpu-users")
    _apply_cloud_init(out / "node/cloud-init.yaml", by_cloud_init)
    result = run_provisioner(out / "node/provision.sh", "--root", str(by_script))
    assert result.returncode == 0, result.stderr
    paths = [
        MODULE_PATH.lstrip("/"),
        "usr/local/libexec/accelplane/accelplane-gpu-discovery",
        "etc/tmpfiles.d/accelplane-gpu.conf",
        "var/lib/accelplane",
        "var/lib/accelplane/yarn",
    ]
    assert _state(by_cloud_init, paths) == _state(by_script, paths)
    assert (by_script / paths[0]).read_text() == script_text()
    assert (by_script / paths[1]).read_text() == entry_stub("/usr/bin/python3")
    # provision.sh compiles only on a real host (never below --root); cloud-init's runcmd compiled
    pyc = importlib.util.cache_from_source(str(by_cloud_init / paths[0]))
    assert Path(pyc).is_file()
    assert not (by_script / MODULE_PATH.lstrip("/")).parent.joinpath("__pycache__").exists()


def test_base64_when_the_script_cannot_be_a_literal_block(write_spec, tmp_path, monkeypatch):
    text = "#!/usr/bin/env python3\nprint('crlf and trailing blank lines')\r\n\n\n"
    monkeypatch.setattr(node_image, "script_text", lambda: text)
    files = bundle_files(node_image.build(model_of(write_spec(FULL_SPEC))))
    user_data = files["node/cloud-init.yaml"][0]
    module, stub = yaml.safe_load(user_data)["write_files"][:2]
    assert module["encoding"] == "b64"
    assert "encoding" not in stub
    path = tmp_path / "user-data"
    path.write_text(user_data)
    assert cloud_init_schema(path).returncode == 0
    root = tmp_path / "root"
    root.mkdir()
    make_fake_root(root, "flinkgpu", "gpu-users")
    _apply_cloud_init(path, root)
    assert (root / MODULE_PATH.lstrip("/")).read_bytes() == text.encode()


def test_literal_block_rules():
    assert node_image.literal_block("a\n\tb\n", 2) == "|\n  a\n  \tb"
    assert node_image.literal_block("a\n\nb\n", 2) == "|\n  a\n\n  b"
    for unsafe in ("no newline", "two\n\n", " leading\n", "cr\r\n", "nel\x85\n", "ls\u2028\n"):
        assert node_image.literal_block(unsafe, 2) is None


def test_no_node_artifacts_without_yarn_or_standalone_gpu_pools(write_spec):
    files = files_for(STACKS_DIR / "prod-eu.yaml")
    assert not [k for k in files if k.startswith("node/")]
    # A YARN platform whose pools have no GPUs gets nothing either.
    spec = """\
cluster: {name: cpu-only, platforms: [yarn]}
nodePools:
  - {name: cpu, platform: yarn, nodes: 2}
"""
    assert not [k for k in files_for(write_spec(spec)) if k.startswith("node")]
