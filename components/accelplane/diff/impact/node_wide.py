"""Node-wide impacts: DaemonSets whose pod template changed (image …) and ConfigMaps that a
DaemonSet mounts or reads (device-plugin config: MIG strategy, sharing): these restart pods on
every node the DaemonSet covers, named by pool when the side came from a spec.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from accelplane.diff.changes import ArtifactDiff
from accelplane.diff.impact.common import Impact, brief, group_kind, k8s_artifacts, starts
from accelplane.kubernetes_rules import configmap_refs, pod_selects_node, tolerates
from accelplane.model import Spec

# -- node-wide (DaemonSets) ------------------------------------------------------------------------


def _pod_spec(ds: Any) -> dict[str, Any]:
    try:
        spec = ds["spec"]["template"]["spec"]
    except (KeyError, TypeError):
        return {}
    return spec if isinstance(spec, dict) else {}


def _configmap_refs(ds: Any) -> set[str]:
    return configmap_refs(_pod_spec(ds))


def _tolerated(pod: dict[str, Any], key: str, value: str, effect: str) -> bool:
    """True when the pod may run on a node with this taint (PreferNoSchedule never keeps it off)."""
    if effect == "PreferNoSchedule":
        return True
    return any(
        tolerates(t, key, value, effect) for t in pod.get("tolerations") or [] if isinstance(t, dict)
    )


def _describe_selector(pod: dict[str, Any]) -> str:
    parts = [f"{k}={v}" for k, v in sorted((pod.get("nodeSelector") or {}).items())]
    terms = (
        ((pod.get("affinity") or {}).get("nodeAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution"
        )
        or {}
    ).get("nodeSelectorTerms") or []
    for term in terms:
        for e in (term or {}).get("matchExpressions") or []:
            vals = ",".join(str(v) for v in e.get("values") or [])
            parts.append(
                f"{e.get('key')} {e.get('operator')} ({vals})"
                if vals
                else f"{e.get('key')} {e.get('operator')}"
            )
    return " and ".join(parts)


def node_scope(ds: Any, model: Spec | None) -> str:
    """Which nodes a DaemonSet runs on: Kubernetes pools by name when a model is known."""
    pod = _pod_spec(ds)
    if model is not None:
        pools = [
            p
            for p in model.node_pools
            if p.platform == "kubernetes"
            and pod_selects_node(pod, dict(p.labels))
            and all(_tolerated(pod, t.key, t.value, t.effect) for t in p.taints)
        ]
        if pools:
            nodes = sum(p.nodes for p in pools)
            names = ", ".join(p.name for p in pools)
            return f"every node of pool{'s' if len(pools) > 1 else ''} {names} ({nodes} node{'s' if nodes != 1 else ''})"
    selector = _describe_selector(pod)
    return f"every node matching {selector}" if selector else "every node it tolerates"


def node_impacts(
    artifacts: list[ArtifactDiff],
    manifests: Iterable[Any],
    old: Spec | None,
    new: Spec | None,
) -> Iterator[Impact]:
    for a in k8s_artifacts(artifacts):
        if group_kind(a) != ("apps", "DaemonSet"):
            continue
        manifest = a.new_data if a.new_data is not None else a.old_data
        scope = node_scope(manifest, new if a.new_data is not None else old)
        if a.status == "added":
            yield Impact("node-wide", a.ident, f"{a.ident} added: starts pods on {scope}")
        elif a.status == "removed":
            yield Impact("node-wide", a.ident, f"{a.ident} removed: stops its pods on {scope}")
        else:
            template = [c for c in a.changes if starts(c.path, "spec.template")]
            if not template:
                continue
            images = [c for c in template if c.leaf == "image"]
            others = len(template) - len(images)
            if images:
                more = f" (+{others} other pod-template change{'s' if others != 1 else ''})" if others else ""
                what = brief(images) + more
            else:
                what = f"pod template changed ({brief(template, 3)})"
            yield Impact("node-wide", a.ident, f"{a.title}: {what}; restarts its pods on {scope}")
    # ConfigMaps that any DaemonSet of either side reads (device-plugin config: MIG, sharing …).
    users: dict[tuple[str, str], list[tuple[str, Any]]] = {}
    for ds in manifests:
        if not isinstance(ds, dict) or ds.get("kind") != "DaemonSet":
            continue
        meta = ds.get("metadata") or {}
        ns, ds_name = str(meta.get("namespace", "")), str(meta.get("name", ""))
        label = f"DaemonSet {ns}/{ds_name}" if ns else f"DaemonSet {ds_name}"
        for ref in sorted(_configmap_refs(ds)):
            entry = users.setdefault((ns, ref), [])
            if label not in [u[0] for u in entry]:
                entry.append((label, ds))
    if not users:
        return
    for a in k8s_artifacts(artifacts):
        if group_kind(a) != ("", "ConfigMap") or a.status in ("added", "removed"):
            continue
        names = {
            (str(d["metadata"].get("namespace", "")), str(d["metadata"]["name"]))
            for d in (a.old_data, a.new_data)
            if d is not None
        }
        readers = [u for key in sorted(names) for u in users.get(key, [])]
        if not readers:
            continue
        data_changes = [c for c in a.changes if starts(c.path, "data") or starts(c.path, "binaryData")]
        if not data_changes:
            continue
        scope = node_scope(readers[0][1], new or old)
        ds_names = ", ".join(sorted({r[0] for r in readers}))
        yield Impact(
            "node-wide",
            a.ident,
            f"{a.title} (read by {ds_names}): {brief(data_changes)}; "
            f"applies by restarting those pods on {scope}",
        )
