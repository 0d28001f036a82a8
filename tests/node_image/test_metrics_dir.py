"""node/provision.sh prepares node-exporter's textfile-collector directory on GPU hosts with monitoring
(docs/monitoring.md, docs/hardening.md): root-owned, the Flink group writes (2775), everyone reads.
Checked in a fake root by the consumers themselves: shellcheck on the script, the installed discovery
script writing its owner metrics there as the Flink user, prometheus_client parsing what it wrote,
another user (node-exporter's) reading it; and the refusals: a symbolic link, another owner, a
directory others can write or one holding more than files is left alone before anything changes."""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
from pathlib import Path

import pytest
from accelplane.builders.node_image import METRICS_DIR_MODE
from accelplane.derive.monitoring import TEXTFILE_NAME, textfile_path
from accelplane.discovery_install import MODULE_PATH
from prometheus_client.parser import text_string_to_metric_families

from tests.support.node_provisioning import (
    FAKES_DIR,
    FULL_SPEC,
    make_fake_root,
    run_provisioner,
    snapshot,
    write_rendered,
)
from tests.support.paths import REPO_ROOT
from tests.support.render import files_for
from tests.support.specs import model_of
from tests.support.validators import tool

MONITORED_SPEC = FULL_SPEC + "monitoring: {enabled: true, exporters: external}\n"
METRICS_DIR = "var/lib/prometheus/node-exporter"  # monitoring.textfileDirectory's default
COORDINATION = "var/lib/accelplane/gpu-coordination"  # FULL_SPEC's discovery.coordinationFile
NODE_EXPORTER_UID = 65534  # node-exporter runs as a user of its own (Debian: prometheus); not in the group


@pytest.fixture
def monitored(write_spec, tmp_path: Path) -> Path:
    return write_rendered(files_for(write_spec(MONITORED_SPEC)), tmp_path / "out")


def _changes(stderr: str) -> list[str]:
    return [line.removeprefix("accelplane: changed: ") for line in stderr.splitlines() if "changed:" in line]


@pytest.mark.parametrize("case", ["mixed-monitored", "yarn-analytics"])
def test_the_metrics_step_is_rendered_and_shellcheck_clean(case: str, write_spec, tmp_path: Path) -> None:
    spec = write_spec(MONITORED_SPEC) if case == "mixed-monitored" else REPO_ROOT / "stacks/yarn-analytics.yaml"
    text = files_for(spec)["node/provision.sh"][0]
    assert "readonly METRICS_DIR=/var/lib/prometheus/node-exporter\n" in text
    assert f"readonly METRICS_DIR_MODE={METRICS_DIR_MODE}\n" in text
    assert '  ensure_metrics_dir "$METRICS_DIR"\n' in text
    script = tmp_path / "provision.sh"
    script.write_text(text)
    result = subprocess.run(
        [tool("shellcheck"), "-S", "style", "--shell=bash", str(script)],
        capture_output=True, text=True, check=False, timeout=60,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_without_host_metrics_no_directory_is_prepared(write_spec) -> None:
    text = files_for(write_spec(FULL_SPEC))["node/provision.sh"][0]
    assert "readonly METRICS_DIR=''\n" in text


def _discover(fake_root: Path, uid: int, gid: int, owner: int, metrics_file: Path) -> subprocess.CompletedProcess[str]:
    """The installed discovery script (the module provision.sh put below the fake root) allocating
    GPUs as a YARN TaskManager does, with the owner-metrics flags the rendered Flink config passes,
    run as the Flink user."""
    bin_dir = fake_root / "fakebin"
    bin_dir.mkdir(mode=0o755, exist_ok=True)
    shutil.copy(FAKES_DIR / "nvidia-smi", bin_dir / "nvidia-smi")
    (bin_dir / "nvidia-smi").chmod(0o755)
    python = shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin")
    assert python is not None
    as_user = {"user": uid, "group": gid, "extra_groups": []} if os.geteuid() == 0 else {}
    return subprocess.run(
        [python, "-I", "-S", str(fake_root / MODULE_PATH.lstrip("/")), "2", "--enable-coordination-mode",
         "--coordination-file", str(fake_root / COORDINATION), "--owner-pid", str(owner),
         "--owner-label", "yarn-t4", "--metrics-file", str(metrics_file)],
        capture_output=True, text=True, check=False, timeout=60,
        env={"PATH": f"{bin_dir}:/usr/local/bin:/usr/bin:/bin", "ACCELPLANE_GPU_DISCOVERY_BACKEND": "nvidia-smi",
             "FAKE_GPU_COUNT": "4"},
        **as_user,  # type: ignore[call-overload]
    )


def test_provisioned_directory_takes_the_discovery_scripts_metrics(monitored: Path, fake_root: Path, write_spec) -> None:
    uid, gid = make_fake_root(fake_root, "flinkgpu", "gpu-users")
    first = run_provisioner(monitored / "node/provision.sh", "--root", str(fake_root))
    assert first.returncode == 0, first.stderr
    assert _changes(first.stderr)[-4:] == [  # the last step, after the coordination and pid directories
        "created directory /var/lib/prometheus",
        f"created directory /{METRICS_DIR}",
        f"group of /{METRICS_DIR} set to {gid}",
        f"mode of /{METRICS_DIR} set to {METRICS_DIR_MODE}",
    ]
    directory = fake_root / METRICS_DIR
    st = directory.lstat()
    assert stat.S_ISDIR(st.st_mode)
    # root's (the user running the provisioner), the Flink group writes, everyone reads, nobody else writes
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (os.geteuid(), gid, 0o2775)
    assert stat.S_IMODE((fake_root / "var/lib/prometheus").stat().st_mode) == 0o755
    before = snapshot(fake_root)
    again = run_provisioner(monitored / "node/provision.sh", "--root", str(fake_root))
    assert again.returncode == 0 and _changes(again.stderr) == [], again.stderr
    assert snapshot(fake_root) == before

    # The path the rendered Flink configuration passes to --metrics-file is in that directory.
    metrics = Path(textfile_path(model_of(write_spec(MONITORED_SPEC))))
    assert metrics == Path("/") / METRICS_DIR / TEXTFILE_NAME
    owner = subprocess.Popen(["sleep", "60"])
    try:
        result = _discover(fake_root, uid, gid, owner.pid, fake_root / METRICS_DIR / TEXTFILE_NAME)
        assert (result.returncode, result.stdout) == (0, "0,1\n"), result.stderr
        assert "cannot write metrics file" not in result.stderr
    finally:
        owner.send_signal(signal.SIGTERM)
        owner.wait()
    written = fake_root / METRICS_DIR / TEXTFILE_NAME
    fst = written.lstat()
    assert stat.S_ISREG(fst.st_mode) and stat.S_IMODE(fst.st_mode) == 0o644
    assert (fst.st_uid, fst.st_gid) == (uid, gid)  # the Flink user's, the directory's group (setgid)
    assert [p.name for p in directory.iterdir()] == [TEXTFILE_NAME]  # no temporary file left
    read = subprocess.run(  # what node-exporter's textfile collector does, as its own user
        ["cat", str(written)], capture_output=True, text=True, check=True,
        **({"user": NODE_EXPORTER_UID, "group": NODE_EXPORTER_UID, "extra_groups": []} if os.geteuid() == 0 else {}),  # type: ignore[call-overload]
    )
    (family,) = text_string_to_metric_families(read.stdout)
    assert family.name == "accelplane_gpu_owner"
    assert sorted(s.labels["gpu_index"] for s in family.samples) == ["0", "1"]
    assert {s.labels["flink_cluster"] for s in family.samples} == {"yarn-t4"}


def test_without_the_directory_the_metrics_are_lost(monitored: Path, fake_root: Path) -> None:
    """Control (what a host provisioned before this change saw): no directory, no metrics; the
    allocation itself still succeeds."""
    uid, gid = make_fake_root(fake_root, "flinkgpu", "gpu-users")
    assert run_provisioner(monitored / "node/provision.sh", "--root", str(fake_root)).returncode == 0
    shutil.rmtree(fake_root / METRICS_DIR)
    owner = subprocess.Popen(["sleep", "60"])
    try:
        result = _discover(fake_root, uid, gid, owner.pid, fake_root / METRICS_DIR / TEXTFILE_NAME)
    finally:
        owner.send_signal(signal.SIGTERM)
        owner.wait()
    assert (result.returncode, result.stdout) == (0, "0,1\n"), result.stderr
    assert "cannot write metrics file" in result.stderr
    assert not (fake_root / METRICS_DIR).exists()


def test_a_distribution_directory_is_taken_over(monitored: Path, fake_root: Path) -> None:
    """Debian's prometheus-node-exporter ships /var/lib/prometheus/node-exporter root:root 0755 (and
    its postinst gives /var/lib/prometheus to the prometheus user); other collectors' files stay."""
    _, gid = make_fake_root(fake_root, "flinkgpu", "gpu-users")
    directory = fake_root / METRICS_DIR
    directory.mkdir(parents=True, mode=0o755)
    (directory / "apt.prom").write_text("apt_upgrades_pending 0\n")
    if os.geteuid() == 0:
        os.chown(directory.parent, 1234, 1234)  # the prometheus user's parent
    result = run_provisioner(monitored / "node/provision.sh", "--root", str(fake_root))
    assert result.returncode == 0, result.stderr
    assert f"group of /{METRICS_DIR} set to {gid}" in _changes(result.stderr) or gid == os.getegid()
    st = directory.stat()
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (os.geteuid(), gid, 0o2775)
    assert (directory / "apt.prom").read_text() == "apt_upgrades_pending 0\n"


def _refused(monitored: Path, fake_root: Path, message: str) -> None:
    before = snapshot(fake_root)
    result = run_provisioner(monitored / "node/provision.sh", "--root", str(fake_root))
    assert result.returncode == 1
    assert f"error: /{METRICS_DIR} (node-exporter's textfile directory) {message}" in result.stderr, result.stderr
    assert "nothing was changed" in result.stderr
    assert snapshot(fake_root) == before  # refused before anything was installed


def test_a_symbolic_link_is_refused(monitored: Path, fake_root: Path) -> None:
    make_fake_root(fake_root, "flinkgpu", "gpu-users")
    (fake_root / "etc/cron.d").mkdir(mode=0o755)
    (fake_root / METRICS_DIR).parent.mkdir(parents=True)
    (fake_root / METRICS_DIR).symlink_to(fake_root / "etc/cron.d")  # planted by whoever owns the parent
    _refused(monitored, fake_root, "is a symbolic link")
    target = (fake_root / "etc/cron.d").stat()
    assert (target.st_uid, target.st_gid, stat.S_IMODE(target.st_mode)) == (os.geteuid(), os.getegid(), 0o755)


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ("other-owner", "belongs to uid 1234, not root or flinkgpu"),
        ("world-writable", "is writable by other users (mode 1777"),
        ("other-group-writable", "is writable by other users (mode 775"),
        ("subdirectory", "holds cron.d, which is not a regular file"),
        ("not-a-directory", "exists and is not a directory"),
    ],
)
def test_a_directory_others_may_have_filled_is_refused(setup: str, message: str, monitored: Path, fake_root: Path) -> None:
    if setup in ("other-owner", "other-group-writable") and os.geteuid() != 0:
        pytest.skip("a foreign owner or group needs root")
    make_fake_root(fake_root, "flinkgpu", "gpu-users")
    directory = fake_root / METRICS_DIR
    directory.parent.mkdir(parents=True)
    if setup == "not-a-directory":
        directory.write_text("")
    else:
        directory.mkdir()
    if setup == "other-owner":
        os.chown(directory, 1234, 1234)
    elif setup == "world-writable":
        directory.chmod(0o1777)
    elif setup == "other-group-writable":
        os.chown(directory, 0, 1234)
        directory.chmod(0o775)
    elif setup == "subdirectory":
        (directory / "cron.d").mkdir()
    _refused(monitored, fake_root, message)


def _step(script: str, *functions: str) -> str:
    """The rendered script's settings the directory step reads and the named functions, without
    running any of its steps."""
    lines = script.splitlines()
    out = [line for line in lines if line.startswith(tuple(f"readonly {n}=" for n in STEP_SETTINGS))]
    for name in functions:
        start = next(i for i, line in enumerate(lines) if line.startswith(f"{name}() {{"))
        end = start if lines[start].endswith("}") else lines.index("}", start)  # a one-line function
        out += lines[start : end + 1]
    return "\n".join(out) + "\n"


STEP_SETTINGS = ("RUN_USER", "RUN_GROUP", "METRICS_DIR", "METRICS_DIR_MODE")
STEP_FUNCTIONS = ("log", "die", "changed", "is_root", "lookup_id", "metrics_dir_problem", "ensure_metrics_dir")


def test_the_directory_step_never_follows_a_link_swapped_in_after_the_preflight(
    monitored: Path, fake_root: Path
) -> None:
    """The race the preflight cannot close: whoever owns the parent (Debian: the prometheus user)
    replaces the directory by a link to /etc/cron.d between the preflight and the step. The step
    enters it, sees that it is not the directory it asked for (pwd -P) and changes nothing."""
    make_fake_root(fake_root, "flinkgpu", "gpu-users")
    cron = fake_root / "etc/cron.d"
    cron.mkdir(mode=0o755)
    (fake_root / METRICS_DIR).parent.mkdir(parents=True)
    (fake_root / METRICS_DIR).symlink_to(cron)
    program = (
        "set -euo pipefail\nCHANGES=0\n"
        + _step((monitored / "node/provision.sh").read_text(), *STEP_FUNCTIONS)
        + f'ROOT={fake_root}\nensure_metrics_dir "$METRICS_DIR"\n'
    )
    result = subprocess.run(["bash", "-c", program], capture_output=True, text=True, check=False, timeout=60)
    assert result.returncode == 1
    assert f"error: /{METRICS_DIR} is not a real directory" in result.stderr, result.stderr
    st = cron.stat()
    assert (st.st_gid, stat.S_IMODE(st.st_mode)) == (os.getegid(), 0o755)


def test_the_directory_step_alone_creates_and_repairs(monitored: Path, fake_root: Path) -> None:
    """The same step, run on its own, creates the directory and repairs a loosened mode."""
    _, gid = make_fake_root(fake_root, "flinkgpu", "gpu-users")
    program = (
        "set -euo pipefail\nCHANGES=0\n"
        + _step((monitored / "node/provision.sh").read_text(), *STEP_FUNCTIONS)
        + f'ROOT={fake_root}\nensure_metrics_dir "$METRICS_DIR"\n'
    )
    run = lambda: subprocess.run(["bash", "-c", program], capture_output=True, text=True, check=False, timeout=60)  # noqa: E731
    assert run().returncode == 0
    directory = fake_root / METRICS_DIR
    directory.chmod(0o755)
    repaired = run()
    assert repaired.returncode == 0, repaired.stderr
    assert _changes(repaired.stderr) == [f"mode of /{METRICS_DIR} set to {METRICS_DIR_MODE}"]
    st = directory.stat()
    assert (st.st_gid, stat.S_IMODE(st.st_mode)) == (gid, 0o2775)


def test_the_tmpfiles_rule_makes_the_same_directory(monitored: Path, fake_root: Path) -> None:
    """cloud-init's path (``systemd-tmpfiles --create`` on the rule) and every boot give the directory
    provision.sh gives it; after provision.sh the rule changes nothing; systemd-tmpfiles refuses a link."""
    if os.geteuid() != 0:
        pytest.skip("the rule makes the directory root's: systemd-tmpfiles needs root to chown it")
    _, gid = make_fake_root(fake_root, "flinkgpu", "gpu-users")
    rule = monitored / "node/tmpfiles.d/accelplane-gpu.conf"
    assert f"d /{METRICS_DIR} {METRICS_DIR_MODE} root gpu-users -\n" in rule.read_text()
    create = [tool("systemd-tmpfiles"), "--create", f"--root={fake_root}", str(rule)]
    subprocess.run(create, check=True, capture_output=True, timeout=60)
    st = (fake_root / METRICS_DIR).stat()
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (0, gid, 0o2775)

    shutil.rmtree(fake_root / "var")
    assert run_provisioner(monitored / "node/provision.sh", "--root", str(fake_root)).returncode == 0
    before = snapshot(fake_root / "var/lib/prometheus")
    subprocess.run(create, check=True, capture_output=True, timeout=60)
    assert snapshot(fake_root / "var/lib/prometheus") == before

    shutil.rmtree(fake_root / METRICS_DIR)
    (fake_root / "etc/cron.d").mkdir(mode=0o755)
    (fake_root / METRICS_DIR).symlink_to(fake_root / "etc/cron.d")
    refused = subprocess.run(create, check=False, capture_output=True, text=True, timeout=60)
    assert "is not a directory" in refused.stderr, refused.stderr
    st = (fake_root / "etc/cron.d").stat()
    assert (st.st_gid, stat.S_IMODE(st.st_mode)) == (os.getegid(), 0o755)
