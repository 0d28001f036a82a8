"""GPU task slots in real Apache Flink 1.20 from RENDERED files (marker ``flink``).

One standalone cluster (tests/support/multimodel_hosts.py `multimodel_spec`): three "hosts" on this
machine, each a TaskManager started by its rendered ``taskmanagers/<host>.sh`` with a fake
nvidia-smi reporting that host's GPUs (A100 ×2, T4 ×2, A100 ×2 + T4 ×2), the accelplane discovery
script in coordination mode at the rendered path, and the rendered ``config.yaml`` used as a user
gets it: the harness changes addresses and ports only (``addresses_only``; its own JVM options,
memory sizes and directories are not written), so Flink runs on Java 17 with the JVM options the
rendered file carries (`accelplane.derive.flink_java`), and both clients below -- ``flink run`` with
a Java job and ``flink run -py`` with a PyFlink job -- read that same file.

* every TaskManager registers exactly its host's models, the mixed host both (the start script's
  ``-Dexternal-resources=a;b``), and offers the task heap / managed memory accelplane derives;
* a job built with the Java helper (SlotGroups + GpuDevices) from the rendered
  ``slot-groups.json`` runs: each GPU group lands only on TaskManagers with its model, two GPU
  subtasks on one TaskManager hold different devices, a restart (planned failure) claims them
  right again, and while every slot is held the GPUs taken are exactly the GPU groups' — the CPU
  ``default`` group takes none;
* a real PyFlink job built with the PyFlink helper from the same file lands its group on the A100
  TaskManagers (needs the PyFlink client venv, see `pyflink_python`);
* a second start of a host's script while its TaskManager lives is refused, naming the holder;
* what Flink does today with a TaskManager whose GPU plugin is missing, whose discovery script is
  missing, or whose script exits non-zero: it registers and advertises the GPUs anyway.
"""

from __future__ import annotations

import concurrent.futures
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from accelplane.derive.discovery_paths import FLINK_PID_SUFFIX
from accelplane.derive.slot_groups import taskmanager_memory
from accelplane.job_helpers import PYFLINK_MODULE, java_sources
from accelplane.pipeline import load_validated

from tests.support.fake_flink_daemon import on_host, stop_all
from tests.support.flink.errors import HarnessError
from tests.support.flink.home import require_flink_home
from tests.support.flink.java import build_java_job
from tests.support.flink.standalone import FlinkStandalone
from tests.support.multimodel_hosts import (
    A100_RESOURCE,
    HOST_A100,
    HOST_MIX,
    HOST_T4,
    T4_RESOURCE,
    host_env,
    install_fake_smi,
    multimodel_spec,
    write_rendered,
)
from tests.support.paths import host_dirs

pytestmark = pytest.mark.flink

DISCOVERY_SOURCE = Path(__file__).resolve().parents[2] / "components" / "accelplane" / "discovery" / "gpu_discovery.py"
JOB_SOURCE = Path(__file__).resolve().parent / "java" / "SlotGroupsJob.java"
HOSTS = (HOST_A100, HOST_T4, HOST_MIX)
EXPECTED_RESOURCES = {
    HOST_A100: {A100_RESOURCE: 2.0},
    HOST_T4: {T4_RESOURCE: 2.0},
    HOST_MIX: {A100_RESOURCE: 2.0, T4_RESOURCE: 2.0},
}


def tm_id(host: str) -> str:
    return "tm-" + host.split(".")[0]


class Env:
    """Everything the tests of this module share: rendered files and the running cluster."""

    def __init__(self, root: Path, flink_home: Path) -> None:
        self.root = root
        self.flink_home = flink_home
        # a directory accelplane owns (the coordination-path rule) and a root-owned install
        # directory (never below /tmp: AP8060), unique per test run
        install, coordination = host_dirs(root, "gpu-coordination")
        script = install / "accelplane-gpu-discovery"
        shutil.copyfile(DISCOVERY_SOURCE, script)
        script.chmod(0o755)
        # the rendered env.pid.dir's parent, as node/provision.sh prepares it
        self.pid_root = Path(f"{coordination.parent}{FLINK_PID_SUFFIX}")
        self.pid_root.mkdir(mode=0o755, exist_ok=True)
        self.pid_dir = self.pid_root / "vision"
        self.spec = multimodel_spec(root, install_dir=install, coordination_file=coordination, memory="1280Mi")
        self.files = write_rendered(self.spec, root / "out")
        self.model = load_validated(self.spec).model
        self.base = root / "out" / "flink" / "vision"
        self.fake_dir = install_fake_smi(root / "fake-bin")
        self.cluster = FlinkStandalone(
            flink_home=flink_home,
            work_dir=root / "flink",
            base_config=self.base / "config.yaml",
            java_cache_dir=root / "java",
            addresses_only=True,
        )

    def script_env(self, host: str, **extra: str) -> dict[str, str]:
        self.cluster.prepare()
        env = self.cluster.env  # the sandbox's FLINK_CONF_DIR / log / pid dirs
        env["FLINK_HOME"] = str(self.flink_home)
        # the "hosts" share this machine: a pid file each (on real hosts each has its own)
        env["FLINK_IDENT_STRING"] = f"accelplane-{tm_id(host)}"
        env.update(host_env(self.fake_dir, host))
        env.update(extra)
        return env

    def start_host(self, host: str, resource_id: str, **extra: str) -> subprocess.CompletedProcess[str]:
        """Run the host's rendered start script (one TaskManager) on a host of that name."""
        return subprocess.run(
            [*on_host(host), str(self.base / "taskmanagers" / f"{host}.sh"), "-D",
             f"taskmanager.resource-id={resource_id}"],
            env=self.script_env(host, **extra),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    def get(self, path: str) -> Any:
        return self.cluster.rest.get_json(path)

    def taskmanager(self, resource_id: str) -> dict[str, Any]:
        return self.get(f"/taskmanagers/{resource_id}")  # type: ignore[no-any-return]

    def wait_registered(self, ids: set[str], timeout: float = 300.0) -> None:
        """Wait until every TaskManager in ``ids`` is registered with the slot manager: `/taskmanagers`
        lists a TaskManager as soon as the ResourceManager knows it, but its ``totalResource`` (the
        slot manager's registered resource) is zero until its slot report arrives."""
        deadline = time.monotonic() + timeout
        while True:
            have = {
                str(tm["id"])
                for tm in self.cluster.registered_taskmanagers()
                if int(str(tm.get("slotsNumber", 0))) > 0
            }
            if ids <= have:
                return
            if time.monotonic() > deadline:
                raise HarnessError(f"TaskManagers {sorted(ids - have)} did not register\n{self.logs()}")
            time.sleep(0.3)

    def logs(self) -> str:
        """Errors and warnings of every TaskManager log (for failure messages)."""
        out = []
        for p in self.cluster.taskmanager_log_files():
            lines = p.read_text(errors="replace").splitlines()
            keep = [line for line in lines if " ERROR " in line or " WARN " in line or "Exception" in line]
            out.append(f"--- {p.name}\n" + "\n".join(keep[-40:]))
        return "\n".join(out)


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Any:
    e = Env(tmp_path_factory.mktemp("gpu-slots"), require_flink_home())
    try:
        with e.cluster:
            e.cluster.start_jobmanager()
            for host in HOSTS:  # one after another, like the harness (a loaded machine starts JVMs slowly)
                proc = e.start_host(host, tm_id(host))
                assert proc.returncode == 0, proc.stdout + proc.stderr
                e.wait_registered({tm_id(host)})
            yield e
    finally:
        stop_all(e.pid_dir)  # the TaskManagers' pid files are in the rendered env.pid.dir
        shutil.rmtree(e.pid_root, ignore_errors=True)


def test_each_taskmanager_registers_its_models_and_the_derived_memory(env: Env) -> None:
    cluster = env.model.flink_clusters[0]
    memory = taskmanager_memory(cluster)
    assert not isinstance(memory, str)
    for host in HOSTS:
        total = env.taskmanager(tm_id(host))["totalResource"]
        assert total["extendedResources"] == EXPECTED_RESOURCES[host], host
        assert total["cpuCores"] == 4.0
        # Flink reports MiB; accelplane's derivation (used for fit and packing) must agree.
        assert total["taskHeapMemory"] == memory.task_heap // 2**20
        assert total["managedMemory"] == memory.managed // 2**20
    # To the byte: Flink's own start-up sizing (BashJavaUtils, as bin/taskmanager.sh runs it).
    home = env.flink_home
    proc = subprocess.run(
        ["java", "-cp", f"{home / 'bin' / 'bash-java-utils.jar'}{os.pathsep}{home / 'lib'}/*",
         "org.apache.flink.runtime.util.bash.BashJavaUtils", "GET_TM_RESOURCE_PARAMS",
         "--configDir", str(env.cluster.conf_dir)],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    dynamic = proc.stdout.splitlines()[-1]
    assert f"taskmanager.memory.task.heap.size={memory.task_heap}b" in dynamic
    assert f"taskmanager.memory.managed.size={memory.managed}b" in dynamic


def _probe_lines(out: Path) -> list[dict[str, str]]:
    lines = []
    for f in sorted(out.glob("*.txt")):
        fields = dict(kv.split("=", 1) for kv in f.read_text().split())
        lines.append(fields)
    return lines


def _final(lines: list[dict[str, str]], attempt: int) -> list[dict[str, str]]:
    return [line for line in lines if int(line["attempt"]) == attempt]


def test_java_helper_job_routes_groups_assigns_devices_and_survives_a_restart(env: Env) -> None:
    job = env.root / "java-job"
    if job.exists():
        shutil.rmtree(job)
    job.mkdir()
    for src in [*java_sources(), JOB_SOURCE]:
        rel = src.relative_to(src.parents[3]) if "io" in src.parts else Path(src.name)
        (job / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, job / rel)
    jar = build_java_job(job, "SlotGroupsJob", env.flink_home, env.root / "java")
    out = env.root / "probe-out"
    out.mkdir()
    release = env.root / "release"
    groups_file = env.base / "slot-groups.json"
    expected = {"default": 1, "embed": 4, "detect": 2}
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        run = pool.submit(
            env.cluster.submit_jar, jar, "SlotGroupsJob", [str(groups_file), str(out), str(release), "embed"], timeout=240
        )
        deadline = time.monotonic() + 180
        while len(_final(_probe_lines(out), 1)) < sum(expected.values()):
            if run.done():
                run.result()
                pytest.fail("job ended before every probe reported")
            if time.monotonic() > deadline:
                pytest.fail(f"probes of attempt 1: {_final(_probe_lines(out), 1)}\n{env.logs()}")
            time.sleep(0.3)
        # Every slot is held now: read what the slots took from each TaskManager.
        used: dict[str, float] = {}
        for host in HOSTS:
            tm = env.taskmanager(tm_id(host))
            for name, total in tm["totalResource"]["extendedResources"].items():
                used[name] = used.get(name, 0.0) + total - tm["freeResource"]["extendedResources"].get(name, 0.0)
        release.touch()
        run.result()

    # GPUs taken = GPU groups' slots × amount: the CPU-only default group took none.
    assert used == {A100_RESOURCE: 4.0, T4_RESOURCE: 2.0}
    lines = _final(_probe_lines(out), 1)
    by_group: dict[str, list[dict[str, str]]] = {}
    for line in lines:
        by_group.setdefault(line["group"], []).append(line)
    assert {g: len(v) for g, v in by_group.items()} == expected
    a100_tms = {tm_id(HOST_A100), tm_id(HOST_MIX)}
    t4_tms = {tm_id(HOST_T4), tm_id(HOST_MIX)}
    for group, resource, allowed in (("embed", A100_RESOURCE, a100_tms), ("detect", T4_RESOURCE, t4_tms)):
        claims: dict[str, list[str]] = {}
        for line in by_group[group]:
            assert line["tm"] in allowed, line
            assert line["resource"] == resource
            claimed = line["claimed"].split(";")
            assert len(claimed) == 1 and set(claimed) <= set(line["visible"].split(";")), line
            claims.setdefault(line["tm"], []).extend(claimed)
        for tm, devices in claims.items():
            assert len(devices) == len(set(devices)), f"{group} on {tm} shares a device: {devices}"
    # embed: 4 slots over the two A100 TaskManagers, two each, so each pair got different devices.
    assert sorted(line["tm"] for line in by_group["embed"]) == sorted([*a100_tms, *a100_tms])
    # The planned failure happened (attempt 0 of embed subtask 0 reported, then the job restarted).
    assert any(line["group"] == "embed" and line["attempt"] == "0" for line in _probe_lines(out))
    assert by_group["default"][0]["resource"] == "-"


def pyflink_python(flink_home: Path) -> Path | None:
    """Python of the PyFlink client venv: $ACCELPLANE_PYFLINK_PYTHON, else ``.venv/pyflink`` beside
    the Flink distribution (`make pyflink`)."""
    explicit = os.environ.get("ACCELPLANE_PYFLINK_PYTHON")
    candidate = Path(explicit) if explicit else flink_home.parent.parent / "pyflink" / "bin" / "python"
    return candidate if candidate.is_file() else None


PYFLINK_JOB = """
import sys

from pyflink.common import WatermarkStrategy
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.connectors.number_seq import NumberSequenceSource
from pyflink_slot_groups import load

groups = load(sys.argv[1])
env = StreamExecutionEnvironment.get_execution_environment()
groups.register(env)
ds = env.from_source(NumberSequenceSource(0, 999), WatermarkStrategy.no_watermarks(), "numbers")
ds = ds.set_parallelism(groups.slots("embed")).slot_sharing_group(groups.get("embed"))
ds.print().set_parallelism(1)
# What docs/gpu-slots.md shows (env.get_execution_plan() names no groups): the stream graph's groups
# and their registered resources, before submission.
graph = env._j_stream_execution_environment.getStreamGraph(False)
for node in graph.getStreamNodes().toArray():
    group = node.getSlotSharingGroup()
    resource = graph.getSlotSharingGroupResource(group)
    print("GROUP", node.getOperatorName().replace(" ", "_"), group, resource.get() if resource.isPresent() else "-")
result = env.execute("accelplane-pyflink-slot-groups")
print("JOBID", result.get_job_id())
"""


def test_pyflink_helper_job_lands_on_the_a100_taskmanagers(env: Env, tmp_path: Path) -> None:
    """``flink run -py`` (the CLI's PythonDriver runs the job with the client venv's python; the
    job is DataStream without Python functions, so no Beam/gRPC is needed anywhere)."""
    python = pyflink_python(env.flink_home)
    if python is None:
        if os.environ.get("CI"):
            pytest.fail("PyFlink client venv missing: run `make pyflink` or set ACCELPLANE_PYFLINK_PYTHON")
        pytest.skip("PyFlink client venv missing (make pyflink)")
    (tmp_path / "job.py").write_text(PYFLINK_JOB)
    shutil.copyfile(PYFLINK_MODULE, tmp_path / "pyflink_slot_groups.py")
    run_env = env.script_env(HOST_A100)
    run_env["PYTHONPATH"] = f"{tmp_path}{os.pathsep}{env.flink_home.parent}"
    proc = subprocess.run(
        [str(env.flink_home / "bin" / "flink"), "run", "-m", f"localhost:{env.cluster.rest_port}",
         "-pyclientexec", str(python), "-py", str(tmp_path / "job.py"), str(env.base / "slot-groups.json")],
        env=run_env, cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]
    job_id = next(line.split()[1] for line in proc.stdout.splitlines() if line.startswith("JOBID"))
    groups = [line.split(maxsplit=3)[1:] for line in proc.stdout.splitlines() if line.startswith("GROUP ")]
    embed = [g for g in groups if g[1] == "embed"]
    assert embed and all(f"{A100_RESOURCE}=1}}" in g[2] for g in embed), groups
    assert {g[1] for g in groups} <= {"embed", "default"}, groups
    job = env.get(f"/jobs/{job_id}")
    assert job["state"] == "FINISHED"
    source = next(v for v in job["vertices"] if v["parallelism"] == 4)
    tms = env.get(f"/jobs/{job_id}/vertices/{source['id']}/taskmanagers")["taskmanagers"]
    assert {tm["taskmanager-id"] for tm in tms} <= {tm_id(HOST_A100), tm_id(HOST_MIX)}
    assert len(tms) == 2  # four one-GPU slots need both A100 TaskManagers


def test_a_second_start_of_a_hosts_script_refuses_and_names_the_holder(env: Env) -> None:
    """Running a host's rendered script again while its first TaskManager is alive starts nothing:
    ``start`` finds the host's TaskManager running (its own pid file, checked to be a Java
    TaskManager of this configuration) and ``start-one`` is refused at the host's count. Started
    from another pid file (as another cluster's or user's script would be), the GPUs it would get
    are held by a live owner in the coordination file (the first TaskManager, named with its
    resource id). Without the check the second TaskManager's discovery fails, Flink only logs a
    WARN and the TaskManager registers GPUs it does not have."""
    before = {str(tm["id"]) for tm in env.cluster.registered_taskmanagers()}
    for host, holder in ((HOST_T4, tm_id(HOST_T4)), (HOST_MIX, tm_id(HOST_MIX))):
        proc = env.start_host(host, f"{tm_id(host)}-again")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "all 1 TaskManager(s) of vision run" in proc.stderr, proc.stderr
        proc = env.start_host(host, f"{tm_id(host)}-again", FLINK_IDENT_STRING="someone-else")
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert "are not free: live owners hold them" in proc.stderr, proc.stderr
        assert f"a Flink TaskManager ({holder})" in proc.stderr, proc.stderr
        assert "Starting taskexecutor" not in proc.stdout
    time.sleep(2)
    assert {str(tm["id"]) for tm in env.cluster.registered_taskmanagers()} == before


def test_flink_registers_gpus_it_cannot_name_and_the_start_script_refuses(env: Env) -> None:
    """Today's Flink: a missing plugin, a missing script, a failing script each still register the
    configured amount (a WARN in the log at most). The rendered start script refuses all three."""
    config = env.base / "config.yaml"
    broken = env.root / "broken"
    broken.mkdir()
    empty_plugins = broken / "plugins"
    empty_plugins.mkdir()
    cases = {
        "tm-noplugin": {"FLINK_PLUGINS_DIR": str(empty_plugins)},
        "tm-noscript": {},
        "tm-scriptfails": {"FAKE_NVIDIA_SMI_FAIL": "1"},
    }
    # 1. The rendered start script refuses each (nothing is started).
    refusals = {}
    assert env.files["flink/vision/config.yaml"] == config
    script = Path(env.model.discovery.script_path)
    for name, extra in cases.items():
        if name == "tm-noscript":
            script.rename(script.with_suffix(".off"))
        try:
            # a pid file without the T4 host's running TaskManager, so the script gets to its checks
            proc = env.start_host(HOST_T4, name, FLINK_IDENT_STRING="broken-case", **extra)
        finally:
            if name == "tm-noscript":
                script.with_suffix(".off").rename(script)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        refusals[name] = proc.stderr
    assert "GPU plugin" in refusals["tm-noplugin"]
    assert "missing or not executable" in refusals["tm-noscript"]
    assert "did not find 2 GPU(s) of model Tesla T4" in refusals["tm-scriptfails"]
    assert {str(tm["id"]) for tm in env.cluster.registered_taskmanagers()} == {tm_id(h) for h in HOSTS}

    # 2. Flink itself, started the stock way with the same keys, registers the GPUs anyway.
    missing_script = broken / "no-such-script"
    starts = {
        "tm-noplugin": ({"FLINK_PLUGINS_DIR": str(empty_plugins)}, []),
        "tm-noscript": ({}, ["-D", f"external-resource.{T4_RESOURCE}.param.discovery-script.path={missing_script}"]),
        "tm-scriptfails": ({"FAKE_NVIDIA_SMI_FAIL": "1"}, []),
    }
    for name, (extra, more) in starts.items():
        subprocess.run(
            [str(env.flink_home / "bin" / "taskmanager.sh"), "start", f"-Dexternal-resources={T4_RESOURCE}",
             "-D", f"taskmanager.resource-id={name}", *more],
            # the harness's own pid file (it stops these at the end); the script-started ones have theirs
            env=env.script_env(HOST_T4, FLINK_IDENT_STRING="accelplane", **extra), check=True,
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    env.wait_registered(set(starts))
    for name in starts:
        total = env.taskmanager(name)["totalResource"]["extendedResources"]
        assert total == {T4_RESOURCE: 2.0}, (name, total)
    # ... with nothing but a WARN in each log (ExternalResourceUtils, GPUDriver).
    stock = [p for p in env.cluster.taskmanager_log_files() if p.name.startswith("flink-accelplane-taskexecutor-")]
    logs = [p.read_text(errors="replace") for p in stock]
    assert f"Could not find factory class org.apache.flink.externalresource.gpu.GPUDriverFactory for {T4_RESOURCE}" in logs[0]
    assert "FileNotFoundException: The gpu discovery script does not exist in path" in logs[1]
    assert "Discovery script exit with" in logs[2]
    assert f"Failed to retrieve information of external resource {T4_RESOURCE}" in logs[2]


def _java_pid(marker: str) -> int:
    """The pid of the one JVM whose command line holds ``marker``."""
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                args = (proc / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if args and args[0].endswith(b"java") and marker.encode() in args:
                found.append(int(proc.name))
    assert len(found) == 1, (marker, found)
    return found[0]


def test_two_starts_at_once_make_one_taskmanager_that_owns_its_gpus(env: Env) -> None:
    """Issue 30: two starts of a host's script at the same moment both found the GPUs free (a
    TaskManager takes them only when its JVM runs discovery). With the start lock, the first start
    takes its TaskManager's GPUs for the JVM's pid before the second may look: exactly one
    TaskManager starts, it registers its two T4s and its own discovery call gets the GPUs the
    script took for it; the second start-one refuses (the host's count is reached). (Runs last: it replaces the T4 host's
    TaskManager.)"""
    old = _java_pid(f"taskmanager.resource-id={tm_id(HOST_T4)}")
    os.kill(old, 9)
    deadline = time.monotonic() + 30
    while Path(f"/proc/{old}").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    script = str(env.base / "taskmanagers" / f"{HOST_T4}.sh")
    names = ("tm-race-a", "tm-race-b")
    procs = [
        subprocess.Popen([*on_host(HOST_T4), script, "start-one", "-D", f"taskmanager.resource-id={name}"],
                         env=env.script_env(HOST_T4), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for name in names
    ]  # fmt: skip
    results = {name: (p.wait(timeout=300), p.communicate()[1]) for name, p in zip(names, procs, strict=True)}
    assert sorted(code for code, _ in results.values()) == [0, 1], results
    winner = next(name for name, (code, _) in results.items() if code == 0)
    loser_err = next(err for code, err in results.values() if code == 1)
    assert "1 of 1 TaskManager(s) already run here" in loser_err, loser_err
    env.wait_registered({winner})
    assert env.taskmanager(winner)["totalResource"]["extendedResources"] == {T4_RESOURCE: 2.0}
    loser = next(n for n in names if n != winner)
    assert loser not in {str(tm["id"]) for tm in env.cluster.registered_taskmanagers()}
    # the winner's JVM holds the two T4s in the coordination file, and its own discovery call got
    # them back (a mismatch would make it fail: "already holds … but asks for")
    jvm = _java_pid(f"taskmanager.resource-id={winner}")
    coordination = Path(env.model.flink_clusters[0].coordination_file)
    records = [line.split() for line in coordination.read_text().splitlines()]
    assert sum(1 for r in records if len(r) > 2 and r[2] == str(jvm)) == 2, records
    assert not any("already holds" in log for log in env.cluster.taskmanager_logs())
