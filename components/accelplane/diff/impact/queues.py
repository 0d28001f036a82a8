"""Queue impacts: Volcano ``Queue`` objects whose GPU capability/deserved/guarantee changed,
were added or removed; YuniKorn queues (in the ``yunikorn-configs`` ConfigMap's ``queues.yaml``)
whose GPU ``guaranteed``/``max`` changed, were added or removed; Kueue ClusterQueues whose GPU
``nominalQuota``/``borrowingLimit``/``lendingLimit`` changed per flavor; YARN capacity-scheduler properties
that mention GPUs.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import yaml

from accelplane.derive.yunikorn import CONFIGMAP as YUNIKORN_CONFIGMAP
from accelplane.derive.yunikorn import QUEUES_KEY
from accelplane.diff.changes import ArtifactDiff
from accelplane.diff.impact.common import VOLCANO_GROUP, Impact, group_kind, k8s_artifacts
from accelplane.display import show_value
from accelplane.model import is_gpu_resource

# -- queues ----------------------------------------------------------------------------------------


def _queue_gpus(manifest: Any) -> dict[str, dict[str, str]]:
    spec = manifest.get("spec", {}) if isinstance(manifest, dict) else {}
    spec = spec if isinstance(spec, dict) else {}
    guarantee = spec.get("guarantee") or {}
    sources = {
        "capability": spec.get("capability") or {},
        "deserved": spec.get("deserved") or {},
        "guarantee": guarantee.get("resource") or {} if isinstance(guarantee, dict) else {},
    }
    return {
        field: {str(k): show_value(v) for k, v in sorted(values.items()) if is_gpu_resource(str(k))}
        for field, values in sources.items()
        if isinstance(values, dict)
    }


def _gpu_changes(
    old: dict[str, dict[str, str]], new: dict[str, dict[str, str]], fields: tuple[str, ...]
) -> list[str]:
    """``<resource> <field> <old> → <new>, ...`` for each GPU resource (sorted) whose value of one of
    ``fields`` differs between two ``field → resource → value`` maps (``unset`` where a side has
    none); empty when nothing changed. Volcano, YuniKorn and Kueue queues all read this way."""
    parts = []
    for res in sorted({r for f in (*old.values(), *new.values()) for r in f}):
        changed = []
        for field in fields:
            o, n = old.get(field, {}).get(res), new.get(field, {}).get(res)
            if o != n:
                changed.append(f"{field} {o or 'unset'} → {n or 'unset'}")
        if changed:
            parts.append(f"{res} " + ", ".join(changed))
    return parts


def _describe_gpus(gpus: dict[str, dict[str, str]]) -> str:
    resources = sorted({r for values in gpus.values() for r in values})
    parts = [
        f"{res} " + ", ".join(f"{field} {gpus[field][res]}" for field in gpus if res in gpus[field])
        for res in resources
    ]
    return "; ".join(parts) if parts else "no GPU limits"


def _yunikorn_queues(manifest: Any) -> dict[str, dict[str, dict[str, str]]]:
    """Queue path → ``{"guaranteed"|"max": {GPU resource: value}}`` of a ``yunikorn-configs``
    ConfigMap (empty when its ``queues.yaml`` is missing or not a queue configuration)."""
    data = manifest.get("data", {}) if isinstance(manifest, dict) else {}
    text = data.get(QUEUES_KEY) if isinstance(data, dict) else None
    try:
        doc = yaml.safe_load(text) if isinstance(text, str) else None
    except yaml.YAMLError:
        return {}
    out: dict[str, dict[str, dict[str, str]]] = {}

    def walk(queues: Any, prefix: str) -> None:
        for q in queues if isinstance(queues, list) else []:
            if not isinstance(q, dict) or not isinstance(q.get("name"), str):
                continue
            path = f"{prefix}.{q['name']}" if prefix else q["name"]
            raw = q.get("resources")
            resources: dict[str, Any] = raw if isinstance(raw, dict) else {}
            out[path] = {
                field: {
                    str(k): show_value(v)
                    for k, v in sorted((resources.get(field) or {}).items())
                    if is_gpu_resource(str(k))
                }
                for field in ("guaranteed", "max")
                if isinstance(resources.get(field) or {}, dict)
            }
            walk(q.get("queues"), path)

    partitions = doc.get("partitions") if isinstance(doc, dict) else None
    for partition in partitions if isinstance(partitions, list) else []:
        if isinstance(partition, dict):
            walk(partition.get("queues"), "")
    return out


def _yunikorn_queue_impacts(artifacts: list[ArtifactDiff]) -> Iterator[Impact]:
    for a in k8s_artifacts(artifacts):
        if group_kind(a) != ("", "ConfigMap") or not a.ident.endswith(f"/{YUNIKORN_CONFIGMAP}"):
            continue
        old, new = _yunikorn_queues(a.old_data), _yunikorn_queues(a.new_data)
        for path in sorted(old.keys() | new.keys()):
            subject = f"YuniKorn queue {path}"
            if path not in old:
                yield Impact("queues", subject, f"{subject} added: {_describe_gpus(new[path])}")
            elif path not in new:
                yield Impact("queues", subject, f"{subject} removed (had {_describe_gpus(old[path])})")
            else:
                parts = _gpu_changes(old[path], new[path], ("guaranteed", "max"))
                if parts:
                    yield Impact("queues", subject, f"{subject}: " + "; ".join(parts))


KUEUE_GROUP = "kueue.x-k8s.io"
_KUEUE_FIELDS = ("nominalQuota", "borrowingLimit", "lendingLimit")


def _kueue_flavor_gpus(manifest: Any) -> dict[str, dict[str, dict[str, str]]]:
    """Flavor → field (nominalQuota/borrowingLimit/lendingLimit) → GPU resource → value of a Kueue
    ClusterQueue (empty when it is not one)."""
    spec = manifest.get("spec", {}) if isinstance(manifest, dict) else {}
    groups = spec.get("resourceGroups", []) if isinstance(spec, dict) else []
    out: dict[str, dict[str, dict[str, str]]] = {}
    for group in groups if isinstance(groups, list) else []:
        for flavor in group.get("flavors", []) if isinstance(group, dict) else []:
            if not isinstance(flavor, dict):
                continue
            fields = out.setdefault(str(flavor.get("name")), {})
            for r in flavor.get("resources", []):
                if not isinstance(r, dict) or not is_gpu_resource(str(r.get("name"))):
                    continue
                for field in _KUEUE_FIELDS:
                    if field in r:
                        fields.setdefault(field, {})[str(r["name"])] = show_value(r[field])
    return {f: v for f, v in out.items() if any(v.values())}


def _kueue_queue_impacts(artifacts: list[ArtifactDiff]) -> Iterator[Impact]:
    """GPU quota changes of Kueue ClusterQueues, one line per ClusterQueue and flavor."""
    for a in k8s_artifacts(artifacts):
        if group_kind(a) != (KUEUE_GROUP, "ClusterQueue"):
            continue
        name = a.ident.split(" ", 1)[1]
        old, new = _kueue_flavor_gpus(a.old_data), _kueue_flavor_gpus(a.new_data)
        if a.status in ("added", "removed"):
            side = new if a.status == "added" else old
            quota = "; ".join(f"{f}: {_describe_gpus(side[f])}" for f in sorted(side)) or "no GPU quota"
            verb = "added" if a.status == "added" else "removed"
            yield Impact("queues", f"Kueue ClusterQueue {name}", f"Kueue ClusterQueue {name} {verb}: {quota}")
            continue
        for flavor in sorted(old.keys() | new.keys()):
            parts = _gpu_changes(old.get(flavor, {}), new.get(flavor, {}), _KUEUE_FIELDS)
            if parts:
                subject = f"Kueue ClusterQueue {name} flavor {flavor}"
                yield Impact("queues", subject, f"{subject}: " + "; ".join(parts))


def queue_impacts(artifacts: list[ArtifactDiff]) -> Iterator[Impact]:
    yield from _yunikorn_queue_impacts(artifacts)
    yield from _kueue_queue_impacts(artifacts)
    for a in k8s_artifacts(artifacts):
        if group_kind(a) != (VOLCANO_GROUP, "Queue"):
            continue
        name = a.ident.split(" ", 1)[1]
        subject = f"queue {name}"
        if a.status == "added":
            yield Impact("queues", subject, f"queue {name} added: {_describe_gpus(_queue_gpus(a.new_data))}")
        elif a.status == "removed":
            yield Impact(
                "queues", subject, f"queue {name} removed (had {_describe_gpus(_queue_gpus(a.old_data))})"
            )
        else:
            old, new = _queue_gpus(a.old_data), _queue_gpus(a.new_data)
            parts = _gpu_changes(old, new, ("capability", "deserved", "guarantee"))
            if parts:
                label = (
                    f"queue {a.old_ident.split(' ', 1)[1]} → {name}"
                    if a.status == "renamed" and a.old_ident
                    else subject
                )
                yield Impact("queues", subject, f"{label}: " + "; ".join(parts))
    for a in artifacts:
        if a.kind != "hadoop-xml":
            continue
        for c in a.changes:
            if c.leaf.startswith("yarn.scheduler.capacity.") and any(
                "gpu" in show_value(v).lower() for v in (c.leaf, c.old, c.new)
            ):
                yield Impact(
                    "queues", f"YARN {c.leaf}", f"YARN {c.leaf}: {show_value(c.old)} → {show_value(c.new)} ({a.ident})"
                )
