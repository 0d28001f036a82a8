"""GPU task slot artifacts of a Flink cluster.

* ``flink/<cluster>/slot-groups.json``: the cluster's slot groups (names, resources per slot, the
  external resource and model of GPU groups) for the job helpers (``accelplane.job_helpers``),
  so job code builds its ``SlotSharingGroup``s from what the platform declared.
* ``flink/<cluster>/taskmanagers/<host>.sh`` for a standalone cluster whose hosts have several GPU
  models: starts that host's TaskManagers with the host's model resources named on the command
  line, after refusing hosts where GPU discovery cannot work
  (`accelplane.derive.slot_groups.standalone_hosts`).
"""

from __future__ import annotations

import json

from accelplane.artifacts import FileArtifact
from accelplane.derive.flink_keys import gpu_amount, model_argument
from accelplane.derive.slot_groups import GROUP_FILE, gpu_resources, slot_groups_document, standalone_hosts
from accelplane.model import FlinkCluster, Spec
from accelplane.templating import render_template


def group_file_text(spec: Spec, cluster: FlinkCluster) -> str:
    """Text of ``slot-groups.json`` (sorted keys, two-space indent, final newline)."""
    return json.dumps(slot_groups_document(spec, cluster), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def host_scripts(spec: Spec, cluster: FlinkCluster, base: str, family: str) -> list[FileArtifact]:
    """One start script per host of a standalone cluster spanning GPU models."""
    models = {r.name: r.model for r in gpu_resources(spec, cluster)}
    amount = gpu_amount(cluster)
    out = []
    for h in standalone_hosts(spec, cluster):
        if not h.taskmanagers:
            continue
        resources = [
            {
                "name": name,
                "model": models[name],
                "model_arg": model_argument(models[name] or ""),
                "need": amount * h.taskmanagers,
                "failure": (
                    f"GPU discovery did not find {amount * h.taskmanagers} GPU(s) of model {models[name]} "
                    f"for external resource {name} (its messages are above)"
                ),
            }
            for name, _ in h.resources
        ]
        text = render_template(
            "flink/start-taskmanagers.sh.j2",
            spec_name=spec.name,
            cluster=cluster.name,
            host=h.host,
            taskmanagers=h.taskmanagers,
            amount=amount,
            resources=resources,
            resource_list=";".join(str(r["name"]) for r in resources),
            script_path=spec.discovery.script_path,
        )
        out.append(FileArtifact(f"{base}/taskmanagers/{h.host}.sh", text, 0o755, family))
    return out


def group_file(spec: Spec, cluster: FlinkCluster, base: str, family: str) -> list[FileArtifact]:
    """``slot-groups.json`` when the cluster declares slot groups."""
    if not cluster.slot_groups:
        return []
    return [FileArtifact(f"{base}/{GROUP_FILE}", group_file_text(spec, cluster), family=family)]
