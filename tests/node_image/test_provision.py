"""node/provision.sh and the tmpfiles.d rule: shellcheck, idempotence in a fake root, ownership,
systemd-tmpfiles' own reading of the rule, and the installed discovery script in that root."""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
from pathlib import Path

import pytest
from accelplane.builders import node_image
from accelplane.digests import sha256
from accelplane.discovery_install import COMPILE_PROGRAM, MODULE_DIR, MODULE_PATH, entry_stub, script_text
from accelplane.render import bundle_files

from tests.support.node_provisioning import (
    FAKES_DIR,
    FULL_SPEC,
    SPEC_CASES,
    artifact,
    make_fake_root,
    run_provisioner,
    sha256_file,
    snapshot,
    write_rendered,
)
from tests.support.render import files_for
from tests.support.specs import model_of
from tests.support.validators import tool

SCRIPT = "usr/local/libexec/accelplane/accelplane-gpu-discovery"  # the entry stub (discovery.script_path)
MODULE = MODULE_PATH.lstrip("/")  # the script itself, as a module
HOST_STUB = entry_stub("/usr/bin/python3")
TMPFILES = "etc/tmpfiles.d/accelplane-gpu.conf"
NODE_DIRS = ["var/lib/accelplane", "var/lib/accelplane/yarn"]


# `rendered` and `fake_root` are fixtures of tests/node_image/conftest.py.


def changes(stderr: str) -> list[str]:
    return [line.removeprefix("accelplane: changed: ") for line in stderr.splitlines() if "changed:" in line]


@pytest.mark.parametrize("name", SPEC_CASES)
def test_shellcheck_clean(name, write_spec, tmp_path):
    text = artifact(name, write_spec, "node/provision.sh")
    if text is None:
        return
    script = tmp_path / "provision.sh"
    script.write_text(text)
    result = subprocess.run(
        [tool("shellcheck"), "-S", "style", "--shell=bash", str(script)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_shellcheck_is_not_blind(tmp_path):
    """Control: the same shellcheck invocation reports an unquoted expansion."""
    bad = tmp_path / "bad.sh"
    bad.write_text("#!/usr/bin/env bash\nrm -rf $1\n")
    result = subprocess.run(
        [tool("shellcheck"), "-S", "style", str(bad)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 1 and "SC2086" in result.stdout


def test_provision_twice_second_run_changes_nothing(rendered, fake_root):
    uid, gid = make_fake_root(fake_root, "flinkgpu", "gpu-users")
    first = run_provisioner(rendered / "node/provision.sh", "--root", str(fake_root))
    assert first.returncode == 0, first.stderr
    assert changes(first.stderr) == [
        f"created directory {MODULE_DIR}",
        f"installed /{MODULE}",
        "created directory /usr/local/libexec/accelplane",
        f"installed /{SCRIPT}",
        "created directory /etc/tmpfiles.d",
        f"installed /{TMPFILES}",
        "created directory /var/lib",  # an empty fake root; a host has /var/lib
        "created directory /var/lib/accelplane",
        *([f"owner of /var/lib/accelplane set to {uid}:{gid}"] if os.geteuid() == 0 else []),
        "created directory /var/lib/accelplane/yarn",
        *([f"owner of /var/lib/accelplane/yarn set to {uid}:{gid}"] if os.geteuid() == 0 else []),
        "created directory /var/lib/accelplane-flink-pids",
        *([f"owner of /var/lib/accelplane-flink-pids set to {uid}:{gid}"] if os.geteuid() == 0 else []),
    ]

    assert "not byte-compiled below --root" in first.stderr  # the image's python3 may differ
    assert not (fake_root / MODULE).parent.joinpath("__pycache__").exists()
    script, module = fake_root / SCRIPT, fake_root / MODULE
    assert script.read_text() == HOST_STUB
    assert stat.S_IMODE(script.stat().st_mode) == 0o755
    assert module.read_text() == script_text()
    assert stat.S_IMODE(module.stat().st_mode) == 0o644
    assert stat.S_IMODE(module.parent.stat().st_mode) == 0o755
    tmpfiles = fake_root / TMPFILES
    assert tmpfiles.read_text() == (rendered / "node/tmpfiles.d/accelplane-gpu.conf").read_text()
    assert stat.S_IMODE(tmpfiles.stat().st_mode) == 0o644
    for f in (script, module, tmpfiles):  # root-owned on a real host; never the Flink user's
        assert (f.stat().st_uid, f.stat().st_gid) == (os.geteuid(), os.getegid())
    for d in NODE_DIRS:
        st = (fake_root / d).lstat()
        assert stat.S_ISDIR(st.st_mode)
        assert stat.S_IMODE(st.st_mode) == 0o2770  # Flink user + group, nobody else, setgid
        assert (st.st_uid, st.st_gid) == (uid, gid)
    # The unused coordination directory (coordination: false) and the Kubernetes one are not created,
    # and no coordination FILE is ever created: the first TaskManager creates it as itself.
    assert not (fake_root / "var/lib/unused").exists()
    assert not (fake_root / "run").exists()
    assert not [p for p in fake_root.rglob("*coordination*")]

    before = snapshot(fake_root)
    second = run_provisioner(rendered / "node/provision.sh", "--root", str(fake_root))
    assert second.returncode == 0, second.stderr
    assert changes(second.stderr) == []
    assert second.stderr.strip().endswith(f"done: 0 change(s) below {fake_root.resolve()}")
    assert snapshot(fake_root) == before


def test_root_from_environment(rendered, fake_root):
    make_fake_root(fake_root, "flinkgpu", "gpu-users")
    result = run_provisioner(rendered / "node/provision.sh", env={"ACCELPLANE_ROOT": str(fake_root)})
    assert result.returncode == 0, result.stderr
    assert (fake_root / MODULE).read_text() == script_text()
    assert (fake_root / SCRIPT).read_text() == HOST_STUB


def test_repairs_drift(rendered, fake_root):
    make_fake_root(fake_root, "flinkgpu", "gpu-users")
    assert run_provisioner(rendered / "node/provision.sh", "--root", str(fake_root)).returncode == 0
    (fake_root / MODULE).write_text("#!/bin/sh\necho 0,1\n")
    (fake_root / SCRIPT).chmod(0o777)
    (fake_root / TMPFILES).chmod(0o666)
    (fake_root / NODE_DIRS[0]).chmod(0o777)
    result = run_provisioner(rendered / "node/provision.sh", "--root", str(fake_root))
    assert result.returncode == 0, result.stderr
    assert changes(result.stderr) == [
        f"installed /{MODULE}",
        f"mode of /{SCRIPT} set to 755",
        f"mode of /{TMPFILES} set to 644",
        "mode of /var/lib/accelplane set to 2770",
    ]
    assert (fake_root / MODULE).read_text() == script_text()
    assert stat.S_IMODE((fake_root / NODE_DIRS[0]).stat().st_mode) == 0o2770
    again = run_provisioner(rendered / "node/provision.sh", "--root", str(fake_root))
    assert changes(again.stderr) == []


def test_directory_not_created_until_accounts_exist(rendered, fake_root):
    """With --root, users are never created; without them in ROOT/etc/passwd the coordination
    directory is not created (it could not be handed over, and a later run must not re-own a
    directory it cannot tell it created); a later run creates and owns it."""
    make_fake_root(fake_root, None, None)
    result = run_provisioner(rendered / "node/provision.sh", "--root", str(fake_root))
    assert result.returncode == 0, result.stderr
    assert "note: flinkgpu or gpu-users is not in" in result.stderr
    assert "/var/lib/accelplane is not created yet" in result.stderr
    assert not (fake_root / NODE_DIRS[0]).exists()

    uid, gid = make_fake_root(fake_root, "flinkgpu", "gpu-users")
    result = run_provisioner(rendered / "node/provision.sh", "--root", str(fake_root))
    assert result.returncode == 0, result.stderr
    if (uid, gid) != (os.geteuid(), os.getegid()):
        assert f"owner of /var/lib/accelplane set to {uid}:{gid}" in changes(result.stderr)
    for d in NODE_DIRS:
        st = (fake_root / d).stat()
        assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (uid, gid, 0o2770)


@pytest.mark.parametrize("owner", ["root", "other"])
def test_never_re_owns_a_directory_it_did_not_create(rendered, fake_root, owner):
    """Issue 15 §1: an existing coordination directory that is not the Flink user's (a system
    directory if the spec check were bypassed, another tool's) is refused and left unchanged."""
    if owner == "other" and os.geteuid() != 0:
        pytest.skip("chown to another uid needs root")
    make_fake_root(fake_root, "flinkgpu", "gpu-users")
    existing = fake_root / NODE_DIRS[0]
    existing.mkdir(parents=True, mode=0o755)
    (existing / "keep").write_text("someone else's\n")
    if owner == "other":
        os.chown(existing, 1234, 1234)
    before = existing.stat()
    result = run_provisioner(rendered / "node/provision.sh", "--root", str(fake_root))
    assert result.returncode == 1
    assert "error: /var/lib/accelplane exists and belongs to" in result.stderr
    assert "takes over only directories it creates" in result.stderr
    after = existing.stat()
    assert (after.st_uid, after.st_gid, after.st_mode) == (before.st_uid, before.st_gid, before.st_mode)
    assert not (fake_root / NODE_DIRS[1]).exists()


def test_refuses_symlinked_coordination_directory(rendered, fake_root):
    make_fake_root(fake_root, "flinkgpu", "gpu-users")
    elsewhere = fake_root / "elsewhere"
    elsewhere.mkdir(mode=0o755)
    (fake_root / "var/lib").mkdir(parents=True)
    (fake_root / "var/lib/accelplane").symlink_to(elsewhere)
    result = run_provisioner(rendered / "node/provision.sh", "--root", str(fake_root))
    assert result.returncode == 1
    assert "error: /var/lib/accelplane is a symbolic link" in result.stderr
    assert stat.S_IMODE(elsewhere.stat().st_mode) == 0o755


def test_warns_about_unusable_coordination_file_and_leaves_it(rendered, fake_root):
    make_fake_root(fake_root, "flinkgpu", "gpu-users")
    assert run_provisioner(rendered / "node/provision.sh", "--root", str(fake_root)).returncode == 0
    link = fake_root / "var/lib/accelplane/gpu-coordination"
    link.symlink_to("/etc/passwd")
    result = run_provisioner(rendered / "node/provision.sh", "--root", str(fake_root))
    assert result.returncode == 0, result.stderr
    assert "warning: /var/lib/accelplane/gpu-coordination is a symbolic link" in result.stderr
    assert link.is_symlink()


def test_usage_errors(rendered, tmp_path):
    script = rendered / "node/provision.sh"
    bad = run_provisioner(script, "--bogus")
    assert bad.returncode == 2 and "unknown argument: --bogus" in bad.stderr
    missing = run_provisioner(script, "--root", str(tmp_path / "nope"))
    assert missing.returncode == 2 and "not a directory" in missing.stderr
    assert run_provisioner(script, "--root").returncode == 2
    helped = run_provisioner(script, "--help")
    assert helped.returncode == 0 and helped.stdout.startswith("usage: provision.sh [--root DIR]")


def _stub(bin_dir: Path, name: str, body: str) -> None:
    path = bin_dir / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)


def test_real_mode_refuses_non_root(rendered, tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _stub(bin_dir, "id", "echo 1000")
    result = run_provisioner(rendered / "node/provision.sh", env={"PATH": f"{bin_dir}:{os.environ['PATH']}"})
    assert result.returncode == 1
    assert "error: run as root, or pass --root DIR" in result.stderr


def test_real_mode_creates_missing_group_and_user(rendered, tmp_path):
    """Real mode (no --root) with stubbed account tools; mkdir/mktemp are stubbed to fail, so the
    test stops right after the accounts and never touches the host's file system."""
    bin_dir, log = tmp_path / "bin", tmp_path / "calls.log"
    bin_dir.mkdir()
    _stub(bin_dir, "id", "echo 0")
    _stub(bin_dir, "getent", f'echo "getent $*" >>{log}; exit 2')
    for name in ("groupadd", "useradd"):
        _stub(bin_dir, name, f'echo "{name} $*" >>{log}')
    for name in ("mkdir", "mktemp"):
        _stub(bin_dir, name, f'echo "{name} $*" >>{log}; exit 1')
    result = run_provisioner(rendered / "node/provision.sh", env={"PATH": f"{bin_dir}:{os.environ['PATH']}"})
    assert result.returncode == 1
    assert changes(result.stderr) == ["created system group gpu-users", "created system user flinkgpu"]
    calls = log.read_text().splitlines()
    assert calls[:6] == [
        "getent passwd flinkgpu",  # the preflight: directories of another owner are refused first
        "getent group gpu-users",
        "getent group gpu-users",
        "groupadd --system gpu-users",
        "getent passwd flinkgpu",
        "useradd --system --gid gpu-users --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin flinkgpu",
    ]
    assert calls[6:] == ["mktemp -d"]


def test_tmpfiles_rule_read_by_systemd_tmpfiles(rendered, fake_root):
    """systemd-tmpfiles itself: --create makes exactly the provisioner's directories; a stale
    coordination file survives --create/--remove (a running host) and goes with --boot."""
    tmpfiles_bin = tool("systemd-tmpfiles")
    uid, gid = make_fake_root(fake_root, "flinkgpu", "gpu-users")
    conf = fake_root / TMPFILES
    conf.parent.mkdir(parents=True)
    shutil.copy(rendered / "node/tmpfiles.d/accelplane-gpu.conf", conf)

    def tmpfiles(*flags: str) -> None:
        subprocess.run(
            [tmpfiles_bin, *flags, f"--root={fake_root}", str(conf)], check=True, capture_output=True
        )

    tmpfiles("--create")
    for d in NODE_DIRS:
        st = (fake_root / d).stat()
        assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (uid, gid, 0o2770)

    # The provisioner agrees with systemd-tmpfiles: nothing left for it to change on the directories.
    result = run_provisioner(rendered / "node/provision.sh", "--root", str(fake_root))
    assert not [c for c in changes(result.stderr) if "var/lib/accelplane" in c]

    stale = fake_root / "var/lib/accelplane/gpu-coordination"
    stale.write_text("# accelplane-gpu-coordination v1\n# end\n")
    link = fake_root / "var/lib/accelplane/yarn/t4-coordination"
    link.symlink_to("/etc/passwd")
    tmpfiles("--create", "--remove")
    assert stale.exists() and link.is_symlink()
    tmpfiles("--create", "--remove", "--boot")
    assert not stale.exists() and not link.is_symlink()
    assert Path("/etc/passwd").exists()
    for d in NODE_DIRS:
        st = (fake_root / d).stat()
        assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (uid, gid, 0o2770)


def test_installed_script_creates_its_own_file_as_the_taskmanager_user(rendered, fake_root):
    """End to end in the fake root: the TaskManager user creates and shares the coordination
    file (mode 0660, the directory's group); at boot the rule removes it. As root, also: a file
    left behind by root is refused by the Flink user's script until the boot rule removes it."""
    uid, gid = make_fake_root(fake_root, "flinkgpu", "gpu-users")
    assert run_provisioner(rendered / "node/provision.sh", "--root", str(fake_root)).returncode == 0
    bin_dir = fake_root / "fakebin"
    bin_dir.mkdir(mode=0o755)
    # The installed stub names the module's directory on the host (/opt/accelplane/discovery):
    # run the same stub pointed at the module below the fake root, compiled as a host's
    # provisioning compiles it, with the python3 a TaskManager would find.
    python = shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin")
    assert python is not None
    module_dir = (fake_root / MODULE).parent
    stub = bin_dir / "accelplane-gpu-discovery"
    stub.write_text(entry_stub(python, str(module_dir)))
    stub.chmod(0o755)
    assert (fake_root / SCRIPT).read_text() == entry_stub("/usr/bin/python3")
    compiled = subprocess.run([python, "-I", "-S", "-c", COMPILE_PROGRAM, str(fake_root / MODULE)],
                              capture_output=True, text=True, check=True)
    assert compiled.stdout.strip().startswith(str(module_dir / "__pycache__"))
    shutil.copy(FAKES_DIR / "nvidia-smi", bin_dir / "nvidia-smi")
    (bin_dir / "nvidia-smi").chmod(0o755)
    coordination = fake_root / "var/lib/accelplane/gpu-coordination"
    env = {
        "PATH": f"{bin_dir}:/usr/local/bin:/usr/bin:/bin",
        "ACCELPLANE_GPU_DISCOVERY_BACKEND": "nvidia-smi",
        "FAKE_GPU_COUNT": "4",
    }
    as_tm_user = {"user": uid, "group": gid, "extra_groups": []} if os.geteuid() == 0 else {}
    owners = [subprocess.Popen(["sleep", "60"]) for _ in range(2)]
    try:

        def discover(owner: int, as_user: bool = True) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [
                    str(stub),
                    "2",
                    "--enable-coordination-mode",
                    "--coordination-file",
                    str(coordination),
                    "--file-mode",
                    "0660",
                    "--owner-pid",
                    str(owner),
                ],
                capture_output=True,
                text=True,
                env=env,
                check=False,
                timeout=30,
                **(as_tm_user if as_user else {}),  # type: ignore[call-overload]
            )

        first = discover(owners[0].pid)
        assert (first.returncode, first.stdout) == (0, "0,1\n"), first.stderr
        second = discover(owners[1].pid)
        assert (second.returncode, second.stdout) == (0, "2,3\n"), second.stderr
        st = coordination.lstat()
        assert stat.S_ISREG(st.st_mode)
        assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (uid, gid, 0o660)

        conf = fake_root / TMPFILES
        tmpfiles_bin = tool("systemd-tmpfiles")
        boot = [tmpfiles_bin, "--create", "--remove", "--boot", f"--root={fake_root}", str(conf)]
        if os.geteuid() == 0:
            # Someone ran the script as root: the file it created (root, the directory's group,
            # 0660) is refused by the Flink user's TaskManagers ...
            coordination.unlink()
            assert discover(owners[0].pid, as_user=False).returncode == 0
            assert (coordination.stat().st_uid, coordination.stat().st_gid) == (0, gid)
            refused = discover(owners[1].pid)
            assert refused.returncode == 3, refused.stderr
            assert "refusing coordination file" in refused.stderr and "owned by uid 0" in refused.stderr
        subprocess.run(boot, check=True, capture_output=True)
        assert not coordination.exists()
        # ... and after the boot rule removed it, the TaskManager user starts afresh.
        again = discover(owners[0].pid)
        assert (again.returncode, again.stdout) == (0, "0,1\n"), again.stderr
        assert coordination.stat().st_uid == uid
    finally:
        for p in owners:
            p.send_signal(signal.SIGTERM)
            p.wait()


def _model(write_spec):
    return model_of(write_spec(FULL_SPEC))


def test_heredoc_delimiter_never_collides(write_spec, tmp_path, fake_root, monkeypatch):
    text = '#!/usr/bin/env python3\nX = """\nACCELPLANE_SCRIPT_EOF\n"""\n'
    monkeypatch.setattr(node_image, "script_text", lambda: text)
    files = bundle_files(node_image.build(_model(write_spec)))
    provision = files["node/provision.sh"][0]
    assert "<<'ACCELPLANE_SCRIPT_EOF_1'" in provision
    out = write_rendered(files, tmp_path / "out")
    make_fake_root(fake_root, "flinkgpu", "gpu-users")
    result = run_provisioner(out / "node/provision.sh", "--root", str(fake_root))
    assert result.returncode == 0, result.stderr
    assert (fake_root / MODULE).read_text() == text
    assert sha256_file(fake_root / MODULE) == sha256(text)


def test_script_must_have_python3_shebang(write_spec, monkeypatch):
    monkeypatch.setattr(node_image, "script_text", lambda: "import sys\n")
    with pytest.raises(RuntimeError, match="must start with '#!/usr/bin/env python3'"):
        node_image.build(_model(write_spec))


def test_corrupted_embedded_copy_is_refused(rendered, fake_root):
    make_fake_root(fake_root, "flinkgpu", "gpu-users")
    before = snapshot(fake_root)
    script = rendered / "node/provision.sh"
    script.write_text(script.read_text().replace("def main(", "def main_(", 1))
    result = run_provisioner(script, "--root", str(fake_root))
    assert result.returncode == 1
    assert "does not match its sha256" in result.stderr
    assert snapshot(fake_root) == before


def test_unprivileged_run_into_own_tree(rendered, fake_root):
    """--root needs no privilege: a plain user provisions a tree it owns (when we are root the
    run happens as uid 4321), idempotently, with the same directory modes."""
    uid, gid = make_fake_root(fake_root, "flinkgpu", "gpu-users")
    script = fake_root / "provision.sh"
    shutil.copy(rendered / "node/provision.sh", script)
    script.chmod(0o755)
    run_as: dict[str, object] = {}
    if os.geteuid() == 0:
        for p in [fake_root, *fake_root.rglob("*")]:
            os.chown(p, uid, gid)
        run_as = {"user": uid, "group": gid, "extra_groups": []}

    def provision() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["bash", str(script), "--root", str(fake_root)],
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
            env={"PATH": os.environ["PATH"]},
            **run_as,  # type: ignore[call-overload]
        )

    first = provision()
    assert first.returncode == 0, first.stderr
    assert not [c for c in changes(first.stderr) if c.startswith("owner")]
    assert (fake_root / MODULE).read_text() == script_text()
    assert (fake_root / SCRIPT).stat().st_uid == uid
    for d in NODE_DIRS:
        st = (fake_root / d).stat()
        assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (uid, gid, 0o2770)
    before = snapshot(fake_root)
    second = provision()
    assert second.returncode == 0 and changes(second.stderr) == [], second.stderr
    assert snapshot(fake_root) == before


def test_a_user_change_fails_before_changing_anything(write_spec, tmp_path, fake_root):
    """Issue 38.6: a discovery.user change used to exit 1 only after installing the new tmpfiles
    rule (the coordination directory still the old user's), leaving the host half-configured; the
    preflight refuses it before anything is installed."""
    if os.geteuid() != 0:
        pytest.skip("chown to the old user's uid needs root")
    make_fake_root(fake_root, "flinkgpu", "gpu-users")
    first = run_provisioner(write_rendered(files_for(write_spec(FULL_SPEC)), tmp_path / "a") / "node/provision.sh",
                            "--root", str(fake_root))  # fmt: skip
    assert first.returncode == 0, first.stderr
    with (fake_root / "etc/passwd").open("a") as f:
        f.write("newflink:x:4242:4242::/nonexistent:/usr/sbin/nologin\n")
    changed = FULL_SPEC.replace("  user: flinkgpu\n", "  user: newflink\n")
    assert changed != FULL_SPEC
    before = snapshot(fake_root)
    second = run_provisioner(write_rendered(files_for(write_spec(changed)), tmp_path / "b") / "node/provision.sh",
                             "--root", str(fake_root))  # fmt: skip
    assert second.returncode == 1
    assert "did discovery.user or discovery.group change?" in second.stderr
    assert "nothing was changed" in second.stderr
    assert changes(second.stderr) == []
    assert snapshot(fake_root) == before


def test_the_compile_step_tolerates_a_concurrent_run(tmp_path):
    """Issue 38.6: two provisioners at once raced on the bytecode source marker (one removed the
    old marker the other was removing: FileNotFoundError). Replayed deterministically: every
    unlink fails with ENOENT (strace fault injection), as when the other run got there first."""
    module = tmp_path / "mod" / "accelplane_gpu_discovery.py"
    module.parent.mkdir()
    module.write_text("X = 1\n")
    (module.parent / "__pycache__").mkdir()
    (module.parent / "__pycache__" / "accelplane_gpu_discovery.source-old").write_text("")
    proc = subprocess.run(
        [tool("strace"), "-f", "-qq", "-o", "/dev/null", "-e", "inject=unlink,unlinkat:error=ENOENT",
         "python3", "-I", "-S", "-c", COMPILE_PROGRAM, str(module)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert [p.name for p in (module.parent / "__pycache__").glob("*.source-*")] != []
