"""GPU task slots without a JVM: checks (`file: path: message`), Flink-style packing, rendered
files, the per-host start script's refusals and the PyFlink helper's parsing. The real-Flink
behaviour is tests/gpu_slots/test_gpu_slots_flink.py."""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from accelplane.cli import main
from accelplane.derive.discovery_paths import FLINK_PID_SUFFIX
from accelplane.derive.slot_groups import pack, taskmanager_memory
from accelplane.job_helpers import PYFLINK_MODULE, java_sources

from tests.flink.specs import KUBERNETES, STANDALONE, variant
from tests.support.fake_flink_daemon import install_fake_taskmanager, on_host, started_pids, stop_all
from tests.support.findings_text import without_tags
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
from tests.support.render import files_for
from tests.support.specs import model_of, write_spec
from tests.support.validators import tool

DEFAULT = {"name": "default", "slots": 1, "cpu": 0.5, "taskHeap": "256Mi"}
GPU = {"name": "infer", "slots": 4, "cpu": 1, "taskHeap": "512Mi", "gpu": 1}
DISCOVERY = Path(__file__).resolve().parents[2] / "components" / "accelplane" / "discovery" / "gpu_discovery.py"


def _k8s(*groups: dict[str, Any], **cluster: Any) -> dict[str, Any]:
    return variant(KUBERNETES, slotGroups=list(groups), **cluster)


def _errors(tmp_path: Path, data: dict[str, Any], monkeypatch: pytest.MonkeyPatch, capsys: Any) -> list[str]:
    monkeypatch.chdir(tmp_path)
    Path("spec.yaml").write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    code = main(["validate", "--strict", "spec.yaml"])  # warnings too
    err = without_tags(capsys.readouterr().err).splitlines()
    assert code == (1 if err else 0)
    return err[:-1] if err else []


def test_valid_kubernetes_groups_pack_into_the_replicas(tmp_path: Path) -> None:
    spec = model_of(write_spec(tmp_path, _k8s(DEFAULT, GPU)))
    result = pack(spec, spec.flink_clusters[0])
    assert not isinstance(result, str)
    assert result.taskmanagers == {2} and not result.failing


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        pytest.param(
            _k8s(GPU),
            ["spec.yaml: flink.clusters[0].slotGroups: declare a group named 'default' (e.g. cpu 0.5, taskHeap 256Mi): "
             "operators that name no group land in it, and without resources of its own Flink gives each of its slots "
             "TaskManager total ÷ taskManager.slots, GPUs included, which leaves the GPU groups no room"],
            id="no-default-group",
        ),
        pytest.param(
            _k8s(DEFAULT, GPU, {**GPU, "slots": 1}),
            ["spec.yaml: flink.clusters[0].slotGroups[2].name: duplicate name 'infer' (first defined at "
             "flink.clusters[0].slotGroups[1])"],
            id="duplicate",
        ),
        pytest.param(
            _k8s(DEFAULT, {**GPU, "gpuModel": "Tesla T4"}),
            ["spec.yaml: flink.clusters[0].slotGroups[1].gpuModel: the cluster's TaskManagers run on "
             "'NVIDIA A100-SXM4-80GB' GPUs, not 'Tesla T4'; every TaskManager of this cluster is alike, so fix "
             "gpuModel or taskManager.gpu"],
            id="model-the-pool-lacks",
        ),
        pytest.param(
            _k8s(DEFAULT, {**GPU, "gpuModel": "A100 80GB"}),
            ["spec.yaml: flink.clusters[0].slotGroups[1].gpuModel: the cluster's TaskManagers run on "
             "'NVIDIA A100-SXM4-80GB' GPUs, not 'A100 80GB'; every TaskManager of this cluster is alike, so fix "
             "gpuModel or taskManager.gpu; did you mean 'NVIDIA A100-SXM4-80GB'?"],
            id="model-shorthand-of-the-pools",
        ),
        pytest.param(
            _k8s(DEFAULT, {**GPU, "gpu": 1.5}),
            ["spec.yaml: flink.clusters[0].slotGroups[1].gpu: 1.5 GPUs: use a whole number of GPUs or a fraction "
             "below 1 (slots sharing one device); a slot cannot own part of a second device"],
            id="fraction-above-one",
        ),
        pytest.param(
            _k8s({**DEFAULT, "gpuModel": "Tesla T4"}, GPU),
            ["spec.yaml: flink.clusters[0].slotGroups[0].gpuModel: the group asks for no GPU (gpu is 0), so a model "
             "means nothing; remove gpuModel or set gpu"],
            id="model-without-gpu",
        ),
        pytest.param(
            _k8s(DEFAULT, {**GPU, "taskHeap": "4Gi"}),
            ["spec.yaml: flink.clusters[0].slotGroups[1]: one slot of group 'infer' does not fit any TaskManager "
             "(taskHeap 4096Mi > 3302Mi); a slot lives in one TaskManager: shrink the group or grow taskManager "
             "(task heap and managed memory are Flink's split of taskManager.memory)"],
            id="too-big-for-a-taskmanager",
        ),
        pytest.param(
            _k8s(DEFAULT, {**GPU, "gpu": 3}),
            ["spec.yaml: flink.clusters[0].slotGroups[1]: one slot of group 'infer' does not fit any TaskManager "
             "(gpu 3 > 2); a slot lives in one TaskManager: shrink the group or grow taskManager "
             "(task heap and managed memory are Flink's split of taskManager.memory)"],
            id="more-gpus-than-a-taskmanager",
        ),
        pytest.param(
            _k8s(DEFAULT, {**GPU, "slots": 6}),
            ["spec.yaml: flink.clusters[0].taskManager.replicas: Flink packs the slot groups into 3 TaskManager(s), "
             "not 2; set replicas to 3 (the PodGroup's minResources and the queue checks are derived from it)"],
            id="replicas-not-what-flink-starts",
        ),
        pytest.param(
            _k8s({**DEFAULT, "slots": 4, "cpu": 1, "taskHeap": "64Mi"}, {**GPU, "taskHeap": "64Mi"}),
            ["spec.yaml: flink.clusters[0].taskManager.replicas: Flink may start anywhere from 2 to 3 TaskManagers "
             "for these slot groups, depending on the order it serves them; the PodGroup and queue checks need one "
             "count: make the groups divide a TaskManager evenly"],
            id="order-dependent",
        ),
        pytest.param(
            _k8s(DEFAULT, GPU, config={"scheduler-mode": "reactive", "jobmanager.scheduler": "adaptive"}),
            ["spec.yaml: flink.clusters[0].config.jobmanager.scheduler: jobmanager.scheduler is generated by "
             "accelplane from slotGroups; set slotGroups instead of config.jobmanager.scheduler",
             "spec.yaml: flink.clusters[0].config.scheduler-mode: reactive mode runs the adaptive scheduler, which "
             "ignores slot group resources; remove scheduler-mode or slotGroups"],
            id="adaptive-and-reactive",
        ),
        pytest.param(
            _k8s(DEFAULT, GPU, config={"fine-grained.shuffle-mode.all-blocking": False}),
            ["spec.yaml: flink.clusters[0].config.fine-grained.shuffle-mode.all-blocking: "
             "fine-grained.shuffle-mode.all-blocking is generated by accelplane from slotGroups; set slotGroups "
             "instead of config.fine-grained.shuffle-mode.all-blocking"],
            id="batch-pipelined",
        ),
        pytest.param(
            _k8s(DEFAULT, GPU, config={"taskmanager.memory.task.heap.size": "2g"}),
            ["spec.yaml: flink.clusters[0].taskManager.memory: config.taskmanager.memory.task.heap.size makes Flink "
             "size TaskManager memory another way; remove it (slot groups need the task heap derived from "
             "taskManager.memory)"],
            id="unmodelled-memory-key",
        ),
        pytest.param(
            _k8s(DEFAULT, GPU, version="1.18"),
            ["spec.yaml: flink.clusters[0].slotGroups: GPU slot groups are verified with Flink 1.20 (fine-grained "
             "slot manager, scheduler keys); this cluster runs 1.18"],
            id="old-flink",
        ),
        pytest.param(
            variant(STANDALONE, slotGroups=[DEFAULT, {**GPU, "slots": 3, "gpu": 1}]),
            ["spec.yaml: flink.clusters[0].slotGroups[0]: one slot of group 'default' does not fit any TaskManager "
             "(taskHeap 256Mi > 25Mi); a slot lives in one TaskManager: shrink the group or grow taskManager "
             "(task heap and managed memory are Flink's split of taskManager.memory)",
             "spec.yaml: flink.clusters[0].slotGroups[1]: one slot of group 'infer' does not fit any TaskManager "
             "(taskHeap 512Mi > 25Mi); a slot lives in one TaskManager: shrink the group or grow taskManager "
             "(task heap and managed memory are Flink's split of taskManager.memory)"],
            id="standalone-small-taskmanager",
        ),
        pytest.param(
            variant(STANDALONE, slotGroups=[{**DEFAULT, "taskHeap": "16Mi"}, {**GPU, "slots": 5, "taskHeap": "16Mi"}]),
            ["spec.yaml: flink.clusters[0].taskManager.replicas: the slot groups' slots do not always fit the 2 "
             "TaskManagers: in some order Flink places them, a slot finds no TaskManager with room and the job fails "
             "with NoResourceAvailableException; add TaskManagers or shrink the groups"],
            id="standalone-not-enough-gpus",
        ),
        pytest.param(
            variant(KUBERNETES, taskManager={**KUBERNETES["flink"]["clusters"][0]["taskManager"], "gpu": None},
                    slotGroups=[DEFAULT, GPU]),
            ["spec.yaml: flink.clusters[0].slotGroups[1].gpu: the cluster's TaskManagers have no GPUs "
             "(taskManager.gpu); remove gpu or give the TaskManagers GPUs"],
            id="gpu-group-without-gpus",
        ),
    ],
)  # fmt: skip
def test_bad_slot_groups(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any, data: dict[str, Any], expected: list[str]
) -> None:
    data = copy.deepcopy(data)
    tm = data["flink"]["clusters"][0]["taskManager"]
    if tm.get("gpu", 0) is None:
        del tm["gpu"]
    assert _errors(tmp_path, data, monkeypatch, capsys) == expected


def _multimodel(tmp_path: Path, **group_changes: Any) -> dict[str, Any]:
    spec = multimodel_spec(tmp_path, install_dir=Path("/opt/d"), coordination_file=Path("/var/lib/accelplane/c"))
    data: dict[str, Any] = yaml.safe_load(spec.read_text())
    for i, change in group_changes.items():
        data["flink"]["clusters"][0]["slotGroups"][int(i[1:])].update(change)
    return data


def test_multimodel_group_must_name_a_model_the_hosts_have(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    data = _multimodel(tmp_path, g1={"gpuModel": "NVIDIA H100"})
    del data["flink"]["clusters"][0]["slotGroups"][2]["gpuModel"]
    assert _errors(tmp_path, data, monkeypatch, capsys) == [
        "spec.yaml: flink.clusters[0].slotGroups[1].gpuModel: no host of this cluster has 'NVIDIA H100' GPUs "
        "(models: 'NVIDIA A100-SXM4-80GB', 'Tesla T4')",
        "spec.yaml: flink.clusters[0].slotGroups[2].gpuModel: the cluster's hosts have several GPU models "
        "('NVIDIA A100-SXM4-80GB', 'Tesla T4'); name the model this group needs",
    ]


def test_multimodel_group_with_a_shorthand_gets_the_hosts_model_meant(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    data = _multimodel(tmp_path, g1={"gpuModel": "T4"})
    del data["flink"]["clusters"][0]["slotGroups"][2]
    assert _errors(tmp_path, data, monkeypatch, capsys) == [
        "spec.yaml: flink.clusters[0].slotGroups[1].gpuModel: no host of this cluster has 'T4' GPUs "
        "(models: 'NVIDIA A100-SXM4-80GB', 'Tesla T4'); did you mean 'Tesla T4'?",
    ]


def test_standalone_packing_follows_the_hosts_models(tmp_path: Path) -> None:
    """Five A100 slots on four A100s fail in every order; four fit (two hosts have A100s)."""
    ok = model_of(write_spec(tmp_path, _multimodel(tmp_path), "ok.yaml"))
    result = pack(ok, ok.flink_clusters[0])
    assert not isinstance(result, str) and result.taskmanagers == {3} and not result.failing
    data = _multimodel(tmp_path, g1={"slots": 5})
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(data))
    code = main(["validate", str(tmp_path / "bad.yaml")])
    assert code == 1


def test_memory_split_matches_flink_defaults(tmp_path: Path) -> None:
    """TaskExecutorProcessUtils for 8g: overhead 819.2m, flink 7116.8m, managed 0.4, network 0.1."""
    spec = model_of(write_spec(tmp_path, _k8s(DEFAULT, GPU)))
    memory = taskmanager_memory(spec.flink_clusters[0])
    assert not isinstance(memory, str)
    f32 = {0.1: 0.10000000149011612, 0.4: 0.4000000059604645}  # Java float fractions, as doubles
    flink = 8 * 2**30 - 256 * 2**20 - int(8 * 2**30 * f32[0.1])
    assert memory.managed == int(flink * f32[0.4])
    assert memory.network == int(flink * f32[0.1])
    assert memory.task_heap == flink - 256 * 2**20 - memory.managed - memory.network


def test_memory_split_is_flinks_to_the_byte(tmp_path: Path) -> None:
    """Flink's own BashJavaUtils for 1280m (captured from Flink 1.20.5, see docs/gpu-slots.md):
    managed 348966098 b, network 87241524 b, task heap 167772154 b."""
    data = variant(STANDALONE, taskManager={**STANDALONE["flink"]["clusters"][0]["taskManager"], "memory": "1280Mi"})
    memory = taskmanager_memory(model_of(write_spec(tmp_path, data)).flink_clusters[0])
    assert not isinstance(memory, str)
    assert (memory.managed, memory.network, memory.task_heap) == (348966098, 87241524, 167772154)


def test_rendered_kubernetes_cluster_carries_groups_and_scheduler_keys(tmp_path: Path) -> None:

    files = files_for(write_spec(tmp_path, _k8s(DEFAULT, GPU)))
    config = yaml.safe_load(files["flink/job1/config.yaml"][0])
    assert config["jobmanager.scheduler"] == "default"
    assert config["fine-grained.shuffle-mode.all-blocking"] is True
    assert "taskmanager.cpu.cores" not in config  # kubernetes.taskmanager.cpu.amount gives the cores
    doc = json.loads(files["flink/job1/slot-groups.json"][0])
    assert doc["groups"] == [
        {"cpuCores": 0.5, "managedMemoryMB": 0, "name": "default", "slots": 1, "taskHeapMemoryMB": 256},
        {"cpuCores": 1.0, "externalResources": {"gpu": 1.0}, "gpuAmount": 1.0, "gpuResource": "gpu",
         "managedMemoryMB": 0, "name": "infer", "slots": 4, "taskHeapMemoryMB": 512},
    ]  # fmt: skip
    configmap = yaml.safe_load(files["kubernetes/configmap_flink_accelplane-flink-job1.yaml"][0])
    assert json.loads(configmap["data"]["slot-groups.json"]) == doc


def test_rendered_multimodel_standalone_cluster(tmp_path: Path) -> None:
    spec = multimodel_spec(tmp_path, install_dir=Path("/opt/d"), coordination_file=Path("/var/lib/accelplane/c"))
    files = files_for(spec)
    config = yaml.safe_load(files["flink/vision/config.yaml"][0])
    assert "external-resources" not in config  # named per host on the command line
    assert config[f"external-resource.{A100_RESOURCE}.param.discovery-script.args"].startswith(
        "--model NVIDIA-A100-SXM4-80GB --enable-coordination-mode "
    )
    assert config[f"external-resource.{T4_RESOURCE}.param.discovery-script.args"].startswith("--model Tesla-T4 ")
    assert config["taskmanager.cpu.cores"] == 4
    assert "flink/vision/workers" not in files
    scripts = sorted(p for p in files if p.startswith("flink/vision/taskmanagers/"))
    assert scripts == [f"flink/vision/taskmanagers/{h}.sh" for h in sorted((HOST_A100, HOST_MIX, HOST_T4))]
    assert all(files[p][1] == 0o755 for p in scripts)
    mix = files[f"flink/vision/taskmanagers/{HOST_MIX}.sh"][0]
    assert f"readonly RESOURCES='{A100_RESOURCE};{T4_RESOURCE}'" in mix


def test_start_scripts_are_shellcheck_clean(tmp_path: Path) -> None:
    spec = multimodel_spec(tmp_path, install_dir=Path("/opt/d"), coordination_file=Path("/var/lib/accelplane/c"))
    written = write_rendered(spec, tmp_path / "out")
    scripts = [p for rel, p in written.items() if "/taskmanagers/" in rel]
    proc = subprocess.run([tool("shellcheck"), "-S", "style", *map(str, scripts)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout


@pytest.fixture
def start_host(tmp_path: Path) -> Any:
    """Run a rendered start script against a fake FLINK_HOME whose taskmanager.sh records its args."""
    install, coordination = host_dirs(tmp_path)  # never below /tmp (AP8060)
    script = install / "accelplane-gpu-discovery"
    script.write_text(DISCOVERY.read_text())
    script.chmod(0o755)
    spec = multimodel_spec(tmp_path, install_dir=install, coordination_file=coordination)
    written = write_rendered(spec, tmp_path / "out")
    home = tmp_path / "flink"
    (home / "bin").mkdir(parents=True)
    (home / "plugins" / "external-resource-gpu").mkdir(parents=True)
    (home / "plugins" / "external-resource-gpu" / "flink-external-resource-gpu-1.20.5.jar").write_text("")
    for h in (HOST_A100, HOST_T4, HOST_MIX):  # the "hosts" share this machine: a conf dir each
        (home / f"conf-{h}").mkdir()
    record = tmp_path / "started"
    install_fake_taskmanager(home, record)
    pid_root = Path(f"{coordination.parent}{FLINK_PID_SUFFIX}")  # as node/provision.sh prepares it
    pid_root.mkdir(mode=0o755, exist_ok=True)
    pids = pid_root / "vision"  # the rendered env.pid.dir
    fake = install_fake_smi(tmp_path / "fake-bin")

    def command(host: str, *args: str, on: str | None = None, **extra: str) -> tuple[list[str], dict[str, str]]:
        """The host's script (with ``args``, default ``-D x=y``), run on a host named ``on`` (default
        ``host``: its own UTS namespace with that host name)."""
        env = {**os.environ, "FLINK_HOME": str(home), "FLINK_PID_DIR": str(tmp_path / "untrusted"),
               **host_env(fake, host), **extra}  # fmt: skip
        env.pop("FLINK_PLUGINS_DIR", None)
        env["FLINK_CONF_DIR"] = str(home / f"conf-{host}")
        env.update(extra)
        script = str(written[f"flink/vision/taskmanagers/{host}.sh"])
        return [*on_host(on or host), script, *(args or ("-D", "x=y"))], env

    def run(host: str, *args_: str, **extra: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
        args, env = command(host, *args_, **extra)
        proc = subprocess.run(args, env=env, capture_output=True, text=True, check=False)
        started = record.read_text().splitlines() if record.exists() else []
        return proc, started

    run.script = script  # type: ignore[attr-defined]
    run.home = home  # type: ignore[attr-defined]
    run.coordination = coordination  # type: ignore[attr-defined]
    run.fake = fake  # type: ignore[attr-defined]
    run.command = command  # type: ignore[attr-defined]
    run.pids = pids  # type: ignore[attr-defined]
    try:
        yield run
    finally:
        stop_all(pids)
        shutil.rmtree(coordination.parent, ignore_errors=True)
        shutil.rmtree(pid_root, ignore_errors=True)


def test_start_script_names_both_models_on_the_command_line(start_host: Any) -> None:
    proc, started = start_host(HOST_MIX)
    assert proc.returncode == 0, proc.stderr
    assert started == [f"start -Dexternal-resources={A100_RESOURCE};{T4_RESOURCE} -D x=y"]


def test_start_script_refuses_a_missing_plugin(start_host: Any, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    (empty / "external-resource-gpu").mkdir(parents=True)
    proc, started = start_host(HOST_A100, FLINK_PLUGINS_DIR=str(empty))
    assert (proc.returncode, started) == (1, [])
    assert "Flink's GPU plugin (flink-external-resource-gpu-*.jar) is not in" in proc.stderr


def test_start_script_refuses_a_missing_discovery_script(start_host: Any) -> None:
    start_host.script.unlink()
    proc, started = start_host(HOST_T4)
    assert (proc.returncode, started) == (1, [])
    assert "missing or not executable" in proc.stderr


def test_start_script_refuses_when_discovery_fails_or_finds_too_few(start_host: Any) -> None:
    proc, started = start_host(HOST_T4, FAKE_NVIDIA_SMI_FAIL="1")
    assert (proc.returncode, started) == (1, [])
    assert "did not find 2 GPU(s) of model Tesla T4 for external resource gpu-teslat4" in proc.stderr
    # A host whose A100s are gone (only T4s answer) is refused too.
    proc, started = start_host(HOST_MIX, FAKE_GPU_MODELS="Tesla T4;Tesla T4")
    assert (proc.returncode, started) == (1, [])
    assert "did not find 2 GPU(s) of model NVIDIA A100-SXM4-80GB" in proc.stderr


def test_start_script_refuses_gpus_held_by_live_owners_and_names_them(start_host: Any) -> None:
    """A second start (or another cluster's TaskManager holding the host's GPUs): the GPUs these
    TaskManagers would get are held by a live owner in the coordination file, so nothing starts and
    the refusal names the holder; once the holder is gone the script starts them."""
    start_host.coordination.parent.mkdir(parents=True, exist_ok=True)
    holder = subprocess.Popen(["sleep", "300"])
    try:
        held = subprocess.run(
            [str(start_host.script), "1", "--model", "Tesla-T4", "--enable-coordination-mode",
             "--coordination-file", str(start_host.coordination), "--owner-pid", str(holder.pid)],
            env={**os.environ, **host_env(start_host.fake, HOST_T4)}, capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert held.returncode == 0, held.stderr
        proc, started = start_host(HOST_T4)
        assert (proc.returncode, started) == (1, [])
        assert "2 GPU(s) needed but only 1 of 2 eligible are free" in proc.stderr
        assert f"GPU 0: pid {holder.pid}, sleep" in proc.stderr
        assert "2 GPU(s) of model Tesla T4 for external resource gpu-teslat4 are not free" in proc.stderr
        # The A100-only host shares the file but none of these GPUs: it starts.
        proc, started = start_host(HOST_A100)
        assert proc.returncode == 0, proc.stderr
    finally:
        holder.kill()
        holder.wait()
    proc, started = start_host(HOST_T4)
    assert proc.returncode == 0, proc.stderr
    assert len(started) == 2


def test_two_starts_at_once_start_one_host_once(start_host: Any) -> None:
    """Two starts of a host's script at the same moment (issue 30: both found the GPUs free, since a
    TaskManager takes them only when its JVM runs discovery): the start lock makes them one after
    the other, the first takes its TaskManager's GPUs for its pid before letting go, so the second
    finds the host's TaskManager running and starts nothing. The lock is not inherited by the
    TaskManager (it would keep every later start waiting)."""
    args, env = start_host.command(HOST_MIX)
    both = [subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    results = [(p.wait(timeout=120), p.communicate()) for p in both]
    assert [code for code, _ in results] == [0, 0], results
    (daemon,) = started_pids(start_host.pids)
    assert any("all 1 TaskManager(s) of vision run" in err for _, (_, err) in results), results
    lock = Path(f"{start_host.coordination}.start-lock")
    assert lock.is_file() and not lock.is_symlink()
    held = [os.readlink(f) for f in Path(f"/proc/{daemon}/fd").iterdir()]
    assert str(lock) not in held, held
    # start-one at once twice more: the lock again makes them one after the other; each finds
    # the TaskManager's count reached (the GPUs it holds are named by --check-free otherwise)
    args, env = start_host.command(HOST_MIX, "start-one")
    both = [subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    results = [(p.wait(timeout=120), p.communicate()) for p in both]
    assert [code for code, _ in results] == [1, 1], results
    assert all("1 of 1 TaskManager(s) already run here" in err for _, (_, err) in results), results
    # once that TaskManager is gone, its GPUs are free again and a start succeeds
    stop_all(start_host.pids)
    proc, _ = start_host(HOST_MIX)
    assert proc.returncode == 0, proc.stderr
    assert len(started_pids(start_host.pids)) == 1


def test_a_symlinked_start_lock_is_refused(start_host: Any, tmp_path: Path) -> None:
    start_host.coordination.parent.mkdir(parents=True, exist_ok=True)
    Path(f"{start_host.coordination}.start-lock").symlink_to(tmp_path / "elsewhere")
    proc, started = start_host(HOST_T4)
    assert (proc.returncode, started) == (3, [])
    assert "is a symbolic link" in proc.stderr
    assert not (tmp_path / "elsewhere").exists()


def test_a_fifo_planted_as_the_start_lock_never_blocks(start_host: Any) -> None:
    """Issue 37.5: a FIFO in the start lock's place used to block the script forever (``exec 9<``
    before ``flock -w``); the discovery script opens the lock once with O_NONBLOCK|O_NOFOLLOW and
    refuses what is not a regular file."""
    lock = Path(f"{start_host.coordination}.start-lock")
    os.mkfifo(lock)
    args, env = start_host.command(HOST_T4)
    proc = subprocess.run(args, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 3, proc.stderr
    assert "not a regular file" in proc.stderr
    assert not started_pids(start_host.pids) if start_host.pids.exists() else True


def test_a_start_lock_of_another_user_is_refused(start_host: Any) -> None:
    lock = Path(f"{start_host.coordination}.start-lock")
    lock.write_text("")
    os.chown(lock, 4321, 4321)
    proc, started = start_host(HOST_T4)
    assert (proc.returncode, started) == (3, [])
    assert "belongs to uid 4321" in proc.stderr


def test_the_script_refuses_another_host(start_host: Any) -> None:
    """Issue 38.3: a host's script run on another host (edge-gpu-01's on edge-gpu-09) is refused
    before anything starts; the host's short name is accepted."""
    args, env = start_host.command(HOST_T4, on="gpu-t4-09.test.internal")
    proc = subprocess.run(args, env=env, capture_output=True, text=True, check=False)
    assert proc.returncode == 1
    assert "this host is gpu-t4-09.test.internal; this script is for gpu-t4-01.test.internal only" in proc.stderr
    args, env = start_host.command(HOST_T4, on="gpu-t4-01")
    proc = subprocess.run(args, env=env, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr


def test_a_single_model_host_checks_its_model(tmp_path: Path) -> None:
    """Issue 38.3: single-model pools pass --model too (a 4×T4 host ran the L4 pool's script)."""
    data = copy.deepcopy(STANDALONE)
    data["nodePools"][0]["gpu"]["model"] = "NVIDIA L4"
    spec = write_spec(tmp_path, data)
    scripts = {p: t for p, (t, _) in files_for(spec).items() if "/taskmanagers/" in p}
    assert scripts
    for text in scripts.values():
        assert text.count("--model NVIDIA-L4") >= 2, text  # the preflight and the free check


def test_a_pid_file_planted_by_another_user_is_refused(start_host: Any) -> None:
    """Issue 37.2: the pid file lives in the cluster's own directory; one that is not the running
    user's alone (here: group/other-writable, as a planted /tmp file is) is refused before any pid
    in it is given GPUs or killed, and FLINK_PID_DIR from the environment is ignored."""
    victim = subprocess.Popen(["sleep", "300"])
    try:
        start_host.pids.mkdir(parents=True, exist_ok=True)
        planted = start_host.pids / f"flink-{os.environ.get('USER', '')}-taskexecutor.pid"
        planted.write_text(f"{victim.pid}\n")
        planted.chmod(0o666)
        proc, started = start_host(HOST_T4)
        assert (proc.returncode, started) == (1, [])
        assert "is not a file of this user closed to group/other writes" in proc.stderr
        assert victim.poll() is None
    finally:
        victim.kill()
        victim.wait()


def test_a_pid_that_is_not_this_clusters_taskmanager_is_neither_given_gpus_nor_killed(
    start_host: Any, tmp_path: Path
) -> None:
    """Issue 37.2: the pid the script reads back must be a Java TaskManager of this user with this
    cluster's configuration directory; a Flink whose daemon writes another pid (here: a planted
    process's) makes the script refuse, without --owner-pid or kill for that process."""
    victim = subprocess.Popen(["sleep", "300"])
    try:
        tm = start_host.home / "bin" / "taskmanager.sh"
        tm.write_text(f'#!/bin/sh\nmkdir -p "$FLINK_PID_DIR"\necho {victim.pid} >> "$FLINK_PID_DIR/flink-$USER-taskexecutor.pid"\n')
        proc, _ = start_host(HOST_T4)
        assert proc.returncode == 1
        assert f"pid {victim.pid} in" in proc.stderr and "is not a TaskManager of this cluster" in proc.stderr
        assert victim.poll() is None
        assert not start_host.coordination.exists() or str(victim.pid) not in start_host.coordination.read_text()
    finally:
        victim.kill()
        victim.wait()


def test_restart_after_a_kill_starts_only_the_missing_taskmanager(start_host: Any) -> None:
    """Issue 38.4: after one TaskManager is killed (-9) the script no longer refuses (it needed all
    GPUs free): it starts only the missing one, with its GPUs; stop-one stops the newest and waits
    until it is gone, so its GPUs are free for start-one."""
    proc, _ = start_host(HOST_MIX)
    assert proc.returncode == 0, proc.stderr
    (first,) = started_pids(start_host.pids)
    os.kill(first, 9)
    proc, started = start_host(HOST_MIX)
    assert proc.returncode == 0, proc.stderr
    assert len(started) == 2
    pids = started_pids(start_host.pids)
    second = pids[-1]
    assert second != first and os.path.exists(f"/proc/{second}")
    proc, _ = start_host(HOST_MIX, "start-one")
    assert proc.returncode == 1 and "1 of 1 TaskManager(s) already run here" in proc.stderr
    proc, _ = start_host(HOST_MIX, "stop-one")
    assert proc.returncode == 0, proc.stderr
    assert f"stopped TaskManager pid {second}" in proc.stderr
    assert not os.path.exists(f"/proc/{second}/cmdline") or Path(f"/proc/{second}/stat").read_text().split()[2] == "Z"
    proc, started = start_host(HOST_MIX, "start-one")
    assert proc.returncode == 0, proc.stderr
    assert len(started) == 3


def test_pyflink_helper_parses_the_rendered_file(tmp_path: Path) -> None:
    spec = multimodel_spec(tmp_path, install_dir=Path("/opt/d"), coordination_file=Path("/var/lib/accelplane/c"))
    text = files_for(spec)["flink/vision/slot-groups.json"][0]
    sys.path.insert(0, str(PYFLINK_MODULE.parent))
    try:
        import pyflink_slot_groups as helper
    finally:
        sys.path.pop(0)
    groups = helper.parse(text)
    assert groups.names() == ["default", "detect", "embed"]
    assert (groups.gpu_resource("embed"), groups.gpu_amount("embed"), groups.slots("embed")) == (A100_RESOURCE, 1.0, 4)
    assert groups.gpu_resource("default") is None
    with pytest.raises(KeyError, match="slot group 'nope' is not declared for Flink cluster vision"):
        groups.spec("nope")
    with pytest.raises(ValueError, match="no 'default' group"):
        bad = json.loads(text)
        bad["groups"] = bad["groups"][1:]
        helper.parse(json.dumps(bad))


def test_helpers_ship_in_the_package() -> None:
    assert [p.name for p in java_sources()] == ["GpuDevices.java", "SlotGroups.java"]
    assert PYFLINK_MODULE.is_file()
