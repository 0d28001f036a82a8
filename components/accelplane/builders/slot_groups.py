"""GPU task slot artifacts of a Flink cluster.

* ``flink/<cluster>/slot-groups.json``: the cluster's slot groups (names, resources per slot, the
  external resource and model of GPU groups) for the job helpers (``accelplane.job_helpers``),
  so job code builds its ``SlotSharingGroup``s from what the platform declared.
* ``flink/<cluster>/taskmanagers/<host>.sh`` for a standalone GPU cluster whose pools list their
  hosts: starts that host's TaskManagers after refusing hosts where GPU discovery cannot work and,
  where the hosts have several GPU models, with the host's model resources named on the command
  line (`accelplane.derive.slot_groups.standalone_hosts`).
"""

from __future__ import annotations

from accelplane.artifacts import FileArtifact
from accelplane.derive.flink_keys import (
    CHECK_FREE_FLAG,
    COORDINATION_FILE_FLAG,
    MODEL_FLAG,
    PID_DIR_KEY,
    effective_config,
    model_argument,
)
from accelplane.derive.slot_groups import (
    GROUP_FILE,
    gpu_resources,
    group_file_text,
    host_script_name,
    pool_models,
    spans_models,
    standalone_hosts,
)
from accelplane.model import FlinkCluster, Spec
from accelplane.templating import render_template

START_LOCK_SUFFIX = ".start-lock"
START_LOCK_WAIT_SECONDS = 120
"""How long a start waits for another start on the host (checks, `taskmanager.sh start` and taking
the GPUs: seconds) before giving up."""
FLINK_DEFAULT_PID_DIR = "/tmp"
"""``env.pid.dir``'s default (Flink's ``bin/config.sh`` ``DEFAULT_ENV_PID_DIR``)."""


def start_lock_path(cluster: FlinkCluster) -> str:
    """The host's start lock: beside the coordination file, in the directory accelplane prepares for
    it (never a world-writable one), shared by every cluster's start scripts on the host since they
    compete for the same GPUs."""
    return cluster.coordination_file + START_LOCK_SUFFIX


def host_scripts(spec: Spec, cluster: FlinkCluster, base: str, family: str) -> list[FileArtifact]:
    """One start script per host of a standalone GPU cluster whose pools list their hosts.

    Each refuses to start TaskManagers where GPU discovery cannot work (the preflight); where the
    hosts span GPU models, it also names the host's model resources on the command line."""
    models = {r.name: r.model for r in gpu_resources(spec, cluster)}
    multimodel = spans_models(spec, cluster)
    pools_models = pool_models(spec, cluster)
    host_models = pools_models if len(pools_models) == 1 else {}
    amount = cluster.gpus_per_task_manager
    config = effective_config(spec, cluster)
    out = []
    for h in standalone_hosts(spec, cluster):
        if not h.taskmanagers:
            continue
        # Coordination mode: the GPUs must also be free, or a second start of this script (or another
        # cluster's TaskManager) would make TaskManagers whose discovery fails but which register anyway.
        free_args = [CHECK_FREE_FLAG, COORDINATION_FILE_FLAG, cluster.coordination_file] if cluster.coordination else []
        resources = []
        for name, _ in h.resources:
            # --model always where the pools name one: a host with other GPUs is refused
            model = models.get(name) if multimodel else next(iter(host_models.values()), None)
            what = f" of model {model}" if model else ""
            resources.append(
                {
                    "name": name,
                    "model": model or "any",
                    "args": [MODEL_FLAG, model_argument(model)] if model else [],
                    "failure": f"{what} for external resource {name} (its messages are above)",
                    "free_args": free_args,
                    "busy": (
                        f"{what} for external resource {name} are not free: live owners hold them in "
                        f"{cluster.coordination_file} (named above); a TaskManager started again on this "
                        "host would advertise GPUs it does not get. Stop the holder first"
                    ),
                    # the TaskManager's own discovery call, as Flink makes it (args split on whitespace)
                    "taskmanager_args": str(config.get(f"external-resource.{name}.param.discovery-script.args", "")).split(),
                    "take_failure": (
                        f"could not take {amount} GPU(s) for external resource {name} for the TaskManager "
                        f"just started (discovery's messages are above): something outside this script "
                        f"took them"
                    ),
                }
            )
        text = render_template(
            "flink/start-taskmanagers.sh.j2",
            spec_name=spec.name,
            cluster=cluster.name,
            host=h.host,
            taskmanagers=h.taskmanagers,
            amount=amount,
            resources=resources,
            multimodel=multimodel,
            free_check=bool(free_args),
            resource_list=";".join(str(r["name"]) for r in resources),
            script_path=spec.discovery.script_path,
            start_lock=start_lock_path(cluster),
            lock_wait_seconds=START_LOCK_WAIT_SECONDS,
            pid_dir=str(config.get(PID_DIR_KEY, FLINK_DEFAULT_PID_DIR)),
            file_mode=spec.discovery.file_mode,
            lock_umask=f"{0o777 & ~int(spec.discovery.file_mode, 8):04o}",
        )
        out.append(FileArtifact(f"{base}/taskmanagers/{host_script_name(h.host)}", text, 0o755, family))
    return out


def group_file(spec: Spec, cluster: FlinkCluster, base: str, family: str) -> list[FileArtifact]:
    """``slot-groups.json`` when the cluster declares slot groups."""
    if not cluster.slot_groups:
        return []
    return [FileArtifact(f"{base}/{GROUP_FILE}", group_file_text(spec, cluster), family=family)]
