"""One call for the common GPU test: JobManager + N TaskManagers on a host with fake GPUs, the
``GpuProbe`` job on every slot, and per-TaskManager GPU sets from both the logs and the probe."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from tests.support.fake_nvidia_smi import install_fake_nvidia_smi
from tests.support.flink.config_files import ConfigValue
from tests.support.flink.errors import HarnessError
from tests.support.flink.home import find_flink_home
from tests.support.flink.jobs import ProbeReport
from tests.support.flink.logs import DiscoveryOutcome
from tests.support.flink.standalone import FlinkStandalone


@dataclass(frozen=True)
class TaskManagerGpus:
    """Everything known about one TaskManager's GPUs after a scenario."""

    number: int
    resource_id: str
    pid: int
    discovery: DiscoveryOutcome
    probe_indexes: frozenset[str] | None  #: what an operator saw (None: probe not run)

    @property
    def gpus(self) -> frozenset[str] | None:
        """GPU indexes from the log (``None`` when discovery failed)."""
        return self.discovery.gpu_indexes if self.discovery.ok else None


@dataclass(frozen=True)
class GpuScenarioResult:
    taskmanagers: tuple[TaskManagerGpus, ...]
    coordination_file: Path
    coordination_text: str
    conf_dir: Path
    log_dir: Path
    probe: tuple[ProbeReport, ...]

    @property
    def gpu_sets(self) -> list[frozenset[str] | None]:
        """Per TaskManager (start order): its GPU indexes, ``None`` if discovery failed."""
        return [tm.gpus for tm in self.taskmanagers]


def run_gpu_scenario(
    conf_file: Path | Mapping[str, ConfigValue],
    discovery_script_path: Path | None = None,
    discovery_args: str | None = None,
    gpu_count: int = 4,
    taskmanagers: int = 3,
    *,
    work_dir: Path,
    flink_home: Path | None = None,
    taskmanager_slots: int | None = 1,
    gpu_resource: str = "gpu",
    gpu_name: str | None = None,
    extra_env: Mapping[str, str] | None = None,
    run_probe: bool = True,
    java_cache_dir: Path | None = None,
    startup_timeout: float = 180.0,
) -> GpuScenarioResult:
    """Start JM + ``taskmanagers`` TMs on a host with ``gpu_count`` fake GPUs.

    ``conf_file`` is a rendered ``config.yaml`` / ``flink-conf.yaml`` (used
    verbatim plus sandbox overrides, see :class:`FlinkStandalone`) or a mapping
    of flat keys.  The ONLY external-resource keys this function may override:

    * ``external-resource.<gpu_resource>.param.discovery-script.path`` -> the
      local ``discovery_script_path`` when given (rendered configs carry an
      image path such as ``/opt/flink/plugins/accelplane-gpu/accelplane-gpu-discovery``);
    * ``external-resource.<gpu_resource>.param.discovery-script.args`` ->
      ``discovery_args`` when given (``{coordination_file}`` is replaced by a
      per-run file); when ``discovery_args`` is ``None`` the configured args are
      kept except that their ``--coordination-file`` is pointed at the per-run
      file (see :func:`with_coordination_file`).

    TaskManagers are started one after another (TM ``n`` finishes discovery
    before TM ``n+1`` starts), each with ``taskmanager_slots`` slots (``None``
    keeps the configured number).  With ``run_probe`` the ``GpuProbe`` job
    runs on every slot and its per-TM indexes are returned next to the
    log-derived ones.  All daemons are stopped before returning, also on error.
    """
    home = flink_home or find_flink_home()
    work_dir.mkdir(parents=True, exist_ok=True)
    fake_dir = work_dir / "fake-bin"
    if gpu_name is None:
        install_fake_nvidia_smi(fake_dir, gpu_count)
    else:
        install_fake_nvidia_smi(fake_dir, gpu_count, gpu_name)
    env = {"PATH": f"{fake_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.update(extra_env or {})
    coordination_file = work_dir / "gpu-coordination"
    base: Mapping[str, ConfigValue] | Path = conf_file if isinstance(conf_file, Mapping) else Path(conf_file)
    cluster = FlinkStandalone(
        flink_home=home,
        work_dir=work_dir / "flink",
        base_config=base,
        extra_env=env,
        discovery_script_path=discovery_script_path,
        discovery_args=discovery_args,
        coordination_file=coordination_file,
        gpu_resource=gpu_resource,
        taskmanager_slots=taskmanager_slots,
        java_cache_dir=java_cache_dir,
        startup_timeout=startup_timeout,
    )
    with cluster:
        cluster.start(taskmanagers)
        # one subtask per slot: explicit when the slots per TM are known (Flink then waits for
        # every slot rather than deploying to fewer TaskManagers)
        parallelism = taskmanagers * taskmanager_slots if taskmanager_slots else None
        probe = cluster.run_gpu_probe(parallelism) if run_probe else []
        outcomes = {o.taskmanager_number: o for o in cluster.discovery_results()}
    by_tm: dict[str, set[str]] = {}
    for report in probe:
        by_tm.setdefault(report.taskmanager, set()).update(report.indexes)
    results = []
    for tm in cluster.taskmanagers:
        outcome = outcomes.get(tm.number)
        if outcome is None:
            raise HarnessError(f"no log for TaskManager {tm.resource_id}")
        seen = by_tm.get(tm.resource_id)
        results.append(
            TaskManagerGpus(
                number=tm.number,
                resource_id=tm.resource_id,
                pid=tm.pid,
                discovery=outcome,
                probe_indexes=frozenset(seen) if run_probe and seen is not None else None,
            )
        )
    coordination_text = coordination_file.read_text() if coordination_file.exists() else ""
    return GpuScenarioResult(
        taskmanagers=tuple(results),
        coordination_file=coordination_file,
        coordination_text=coordination_text,
        conf_dir=cluster.conf_dir,
        log_dir=cluster.log_dir,
        probe=tuple(probe),
    )
