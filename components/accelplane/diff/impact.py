"""The short "what does this change do to the cluster" summary, derived from the artifact diffs.

Rules (all generic over file kinds, so families that land later are covered):

* **Queues** – Volcano ``Queue`` objects whose GPU capability/deserved/guarantee changed, were added
  or removed; YARN capacity-scheduler properties that mention GPUs.
* **Flink clusters** – Flink config keys ``external-resources``/``external-resource.<r>.amount``/
  ``…config-key`` (in Flink config files, in ConfigMap data and in ``FlinkDeployment``
  ``flinkConfiguration``), GPU ``resources`` in pod templates and workloads, and every Volcano
  ``PodGroup`` change.
* **Node-wide** – DaemonSets whose pod template changed (image …) and ConfigMaps that a DaemonSet
  mounts or reads (device-plugin config: MIG strategy, sharing): these restart pods on every node
  the DaemonSet covers, named by pool when the side came from a spec.
* **YARN daemons** – ``resource-types.xml``/``node-resources.xml``/GPU plugin settings, which the
  ResourceManager/NodeManagers read only at start.
* **Pulumi** (as accelplane's program applies it, docs/pulumi.md) – objects whose name or
  namespace changed (paired remove+add: a new URN, replaced; a content-hashed immutable ConfigMap's
  old version is retained), data changes of ``immutable: true`` ConfigMaps under the same name
  (mutable ConfigMaps are updated in place: the provider sets ``enableConfigMapMutable``),
  pulumi-kubernetes' other replace-on-change fields, and fields Kubernetes refuses to update in
  place that Pulumi does not replace on (PriorityClass ``value``/``preemptionPolicy``).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from accelplane.diff.kinds import EMBED_SEPARATOR, ArtifactDiff, Change, hash_stem, same
from accelplane.display import show_value
from accelplane.kube import configmap_refs, pod_selects_node, tolerates
from accelplane.model import Spec, is_gpu_resource

CATEGORY_TITLES: dict[str, str] = {
    "queues": "Queues",
    "flink": "Flink clusters and GPU requests",
    "node-wide": "Node-wide restarts",
    "yarn": "YARN daemons",
    "pulumi": "Pulumi replacements and immutable fields",
}
VOLCANO_GROUP = "scheduling.volcano.sh"
FLINK_KEY = re.compile(
    r"^(external-resources|external-resource\.[^.]+\.(amount|kubernetes\.config-key|yarn\.config-key))$"
)
MAX_DETAILS = 6

# pulumi-kubernetes "forceNew" properties (provider/pkg/provider/diff.go): a change replaces the object.
# ConfigMaps are special (see `_configmap_pulumi`): accelplane's provider sets enableConfigMapMutable,
# so only ``immutable: true`` ConfigMaps are replaced when their data changes (docs/pulumi.md).
PULUMI_FORCE_NEW: dict[tuple[str, str], tuple[str, ...]] = {
    ("", "Secret"): ("type", "stringData", "data"),
    ("", "Service"): ("spec.clusterIP",),
    ("", "PersistentVolumeClaim"): ("spec",),
    ("apps", "DaemonSet"): ("spec.selector",),
    ("apps", "Deployment"): ("spec.selector",),
    ("apps", "StatefulSet"): (
        "spec.podManagementPolicy",
        "spec.revisionHistoryLimit",
        "spec.selector",
        "spec.serviceName",
        "spec.volumeClaimTemplates",
    ),
    ("batch", "Job"): ("spec.completions", "spec.parallelism", "spec.selector", "spec.template"),
    ("rbac.authorization.k8s.io", "RoleBinding"): ("roleRef",),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): ("roleRef",),
    ("storage.k8s.io", "StorageClass"): ("parameters", "provisioner"),
}
# Fields the API server refuses to update in place and pulumi-kubernetes does not replace on:
# `pulumi up` would fail with "field is immutable".
K8S_IMMUTABLE: dict[tuple[str, str], tuple[str, ...]] = {
    ("scheduling.k8s.io", "PriorityClass"): ("value", "preemptionPolicy"),
}


@dataclass(frozen=True)
class Impact:
    """One line of the impact summary."""

    category: str
    subject: str
    message: str

    def to_json(self) -> dict[str, str]:
        """Plain data for ``--format json``."""
        return {"category": self.category, "subject": self.subject, "message": self.message}


def _starts(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith((prefix + ".", prefix + "[", prefix + EMBED_SEPARATOR))


def _group_kind(a: ArtifactDiff) -> tuple[str, str]:
    api = a.api_version or ""
    manifest = a.new_data if a.new_data is not None else a.old_data
    kind = str(manifest.get("kind", "")) if isinstance(manifest, dict) else ""
    return (api.split("/")[0] if "/" in api else "", kind)


def _k8s(artifacts: Iterable[ArtifactDiff]) -> Iterator[ArtifactDiff]:
    return (a for a in artifacts if a.kind == "kubernetes")


def _brief(changes: Iterable[Change], limit: int = MAX_DETAILS) -> str:
    parts = []
    items = list(changes)
    for c in items[:limit]:
        if c.text_diff:
            parts.append(f"{c.path} changed")
        elif c.op == "added":
            parts.append(f"{c.path} added ({show_value(c.new)})")
        elif c.op == "removed":
            parts.append(f"{c.path} removed (was {show_value(c.old)})")
        else:
            parts.append(f"{c.path} {show_value(c.old)} → {show_value(c.new)}")
    if len(items) > limit:
        parts.append(f"… {len(items) - limit} more")
    return "; ".join(parts)


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


def _describe_gpus(gpus: dict[str, dict[str, str]]) -> str:
    resources = sorted({r for values in gpus.values() for r in values})
    parts = [
        f"{res} " + ", ".join(f"{field} {gpus[field][res]}" for field in gpus if res in gpus[field])
        for res in resources
    ]
    return "; ".join(parts) if parts else "no GPU limits"


def _queue_impacts(artifacts: list[ArtifactDiff]) -> Iterator[Impact]:
    for a in _k8s(artifacts):
        if _group_kind(a) != (VOLCANO_GROUP, "Queue"):
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
            parts = []
            for res in sorted({r for f in (*old.values(), *new.values()) for r in f}):
                fields = []
                for field in ("capability", "deserved", "guarantee"):
                    o, n = old.get(field, {}).get(res), new.get(field, {}).get(res)
                    if o != n:
                        fields.append(f"{field} {o or 'unset'} → {n or 'unset'}")
                if fields:
                    parts.append(f"{res} " + ", ".join(fields))
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


# -- Flink -----------------------------------------------------------------------------------------


def _flink_subject(a: ArtifactDiff, *, old: bool = False) -> str:
    """``Flink cluster <name>`` for files under ``flink/<name>/``, else the artifact's name."""
    ident = (a.old_ident or a.ident) if old else a.ident
    if a.kind == "kubernetes":
        return ident
    path = (a.old_path if old else a.new_path) or a.old_path or a.new_path or ""
    parts = path.split("/")
    if len(parts) >= 3 and parts[0] == "flink":
        return f"Flink cluster {parts[1]}"
    return ident


def _podgroup_summary(manifest: Any) -> str:
    spec = manifest.get("spec", {}) if isinstance(manifest, dict) else {}
    parts = []
    if "queue" in spec:
        parts.append(f"queue {show_value(spec['queue'])}")
    if "minMember" in spec:
        parts.append(f"minMember {show_value(spec['minMember'])}")
    for res, v in sorted((spec.get("minResources") or {}).items()):
        if is_gpu_resource(str(res)):
            parts.append(f"{res} {show_value(v)}")
    return ", ".join(parts)


def _flink_impacts(artifacts: list[ArtifactDiff]) -> Iterator[Impact]:
    for a in artifacts:
        subject = _flink_subject(a)
        if a.kind == "kubernetes" and _group_kind(a) == (VOLCANO_GROUP, "PodGroup"):
            if a.status == "added":
                yield Impact("flink", subject, f"{a.ident} added ({_podgroup_summary(a.new_data)})")
            elif a.status == "removed":
                yield Impact("flink", subject, f"{a.ident} removed (was {_podgroup_summary(a.old_data)})")
            else:
                relevant = [
                    c
                    for c in a.changes
                    if (_starts(c.path, "spec") and not _starts(c.path, "spec.minResources"))
                    or (_starts(c.path, "spec.minResources") and is_gpu_resource(c.leaf))
                ]
                if a.status == "renamed":
                    what = "renamed" + (f"; {_brief(relevant)}" if relevant else "")
                else:
                    what = _brief(relevant) if relevant else "metadata or non-GPU resources changed"
                yield Impact("flink", subject, f"{a.title}: {what}")
            continue
        keys = [c for c in a.changes if FLINK_KEY.match(c.leaf)]
        gpu_requests = [
            c
            for c in a.changes
            if is_gpu_resource(c.leaf)
            and re.search(r"(^|\.)resources(\.|\[)", c.path.split(EMBED_SEPARATOR)[-1])
        ]
        where = f"{subject} ({posixpath.basename(a.ident)})" if a.kind != "kubernetes" else subject
        if a.status == "renamed" and a.kind == "flink-config":
            old_subject = _flink_subject(
                ArtifactDiff(a.kind, a.old_ident or "", "changed", a.old_path, a.old_path)
            )
            extra = f"; {_brief(keys + gpu_requests)}" if keys or gpu_requests else ""
            new_name = subject.removeprefix("Flink cluster ")
            yield Impact("flink", subject, f"{old_subject} renamed to {new_name} ({a.title}){extra}")
        elif keys or gpu_requests:
            label = a.title if a.status == "renamed" else where
            yield Impact("flink", subject, f"{label}: {_brief(keys + gpu_requests)}")
        elif a.status in ("added", "removed") and a.kind == "flink-config":
            data = a.new_data if a.status == "added" else a.old_data
            found = {k: v for k, v in (data or {}).items() if FLINK_KEY.match(str(k))}
            detail = ", ".join(f"{k}: {show_value(v)}" for k, v in sorted(found.items())) or "no GPU keys"
            yield Impact("flink", subject, f"{subject} {a.status} ({a.ident}: {detail})")


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


def _node_impacts(
    artifacts: list[ArtifactDiff],
    manifests: Iterable[Any],
    old: Spec | None,
    new: Spec | None,
) -> Iterator[Impact]:
    for a in _k8s(artifacts):
        if _group_kind(a) != ("apps", "DaemonSet"):
            continue
        manifest = a.new_data if a.new_data is not None else a.old_data
        scope = node_scope(manifest, new if a.new_data is not None else old)
        if a.status == "added":
            yield Impact("node-wide", a.ident, f"{a.ident} added: starts pods on {scope}")
        elif a.status == "removed":
            yield Impact("node-wide", a.ident, f"{a.ident} removed: stops its pods on {scope}")
        else:
            template = [c for c in a.changes if _starts(c.path, "spec.template")]
            if not template:
                continue
            images = [c for c in template if c.leaf == "image"]
            others = len(template) - len(images)
            if images:
                more = f" (+{others} other pod-template change{'s' if others != 1 else ''})" if others else ""
                what = _brief(images) + more
            else:
                what = f"pod template changed ({_brief(template, 3)})"
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
    for a in _k8s(artifacts):
        if _group_kind(a) != ("", "ConfigMap") or a.status in ("added", "removed"):
            continue
        names = {
            (str(d["metadata"].get("namespace", "")), str(d["metadata"]["name"]))
            for d in (a.old_data, a.new_data)
            if d is not None
        }
        readers = [u for key in sorted(names) for u in users.get(key, [])]
        if not readers:
            continue
        data_changes = [c for c in a.changes if _starts(c.path, "data") or _starts(c.path, "binaryData")]
        if not data_changes:
            continue
        scope = node_scope(readers[0][1], new or old)
        ds_names = ", ".join(sorted({r[0] for r in readers}))
        yield Impact(
            "node-wide",
            a.ident,
            f"{a.title} (read by {ds_names}): {_brief(data_changes)}; "
            f"applies by restarting those pods on {scope}",
        )


# -- YARN daemons ----------------------------------------------------------------------------------


def _yarn_impacts(artifacts: list[ArtifactDiff]) -> Iterator[Impact]:
    for a in artifacts:
        if a.kind != "hadoop-xml":
            continue
        types = [c for c in a.changes if c.leaf.startswith("yarn.resource-types")]
        nodes = [c for c in a.changes if c.leaf.startswith("yarn.nodemanager.resource-type.")]
        plugins = [c for c in a.changes if c.leaf.startswith("yarn.nodemanager.resource-plugins")]
        if types:
            yield Impact(
                "yarn",
                a.ident,
                f"{a.ident}: {_brief(types)}; the ResourceManager and every NodeManager must restart "
                "with the same resource types",
            )
        if nodes or plugins:
            yield Impact(
                "yarn", a.ident, f"{a.ident}: {_brief(nodes + plugins)}; restarts the NodeManagers using it"
            )
        if a.status in ("added", "removed") and isinstance(a.new_data or a.old_data, dict):
            data = a.new_data if a.status == "added" else a.old_data
            if any(str(k).startswith("yarn.resource-types") for k in data):
                yield Impact(
                    "yarn", a.ident, f"{a.ident} {a.status}: restart the ResourceManager and NodeManagers"
                )


# -- Pulumi ----------------------------------------------------------------------------------------


def _is_immutable(manifest: Any) -> bool:
    return isinstance(manifest, dict) and manifest.get("immutable") is True


def _pulumi_impacts(artifacts: list[ArtifactDiff]) -> Iterator[Impact]:
    for a in _k8s(artifacts):
        gk = _group_kind(a)
        if a.status == "renamed":
            names = [c for c in a.changes if c.path in ("metadata.name", "metadata.namespace")]
            why = ", ".join(f"{c.leaf} changed" for c in names) or "identity changed"
            hashed = any(c.leaf == "name" and hash_stem(show_value(c.old)) == hash_stem(show_value(c.new)) for c in names)
            if gk == ("", "ConfigMap") and _is_immutable(a.old_data):
                what = (
                    "a new immutable ConfigMap is created; the old one is retained in the cluster "
                    "(retain_on_delete) for pods that still mount it — delete it by hand once unused"
                )
            else:
                what = "replaced (new URN: Pulumi creates the new object, then deletes the old one)"
            yield Impact(
                "pulumi", a.ident, f"{a.title}: {why}{' (content-hashed name)' if hashed else ''} — {what}"
            )
            continue
        if a.status != "changed":
            continue
        if gk == ("", "ConfigMap") and _is_immutable(a.old_data):
            data = [c for c in a.changes if _starts(c.path, "data") or _starts(c.path, "binaryData")]
            if data:
                yield Impact(
                    "pulumi",
                    a.ident,
                    f"{a.ident}: data of an immutable ConfigMap changed under the same name — Kubernetes "
                    "refuses the update and Pulumi replaces it, but immutable ConfigMaps are retained on "
                    'delete, so the re-create fails ("already exists") until the old one is deleted by '
                    "hand; a content-hashed name avoids this",
                )
        reasons = [p for p in PULUMI_FORCE_NEW.get(gk, ()) if any(_starts(c.path, p) for c in a.changes)]
        if reasons:
            yield Impact(
                "pulumi",
                a.ident,
                f"{a.ident}: {', '.join(reasons)} changed — replaced under Pulumi (delete and recreate)",
            )
        for prefix in K8S_IMMUTABLE.get(gk, ()):
            hits = [c for c in a.changes if _starts(c.path, prefix)]
            if hits:
                yield Impact(
                    "pulumi",
                    a.ident,
                    f"{a.ident}: {_brief(hits)} — immutable in Kubernetes: the update is rejected "
                    "(pulumi-kubernetes does not replace on it); delete and recreate the object",
                )


def impacts(
    artifacts: list[ArtifactDiff],
    manifests: Iterable[Any] = (),
    old: Spec | None = None,
    new: Spec | None = None,
) -> list[Impact]:
    """The impact summary of a diff, ordered by category then subject (duplicates removed).

    ``manifests`` are every Kubernetes object of both sides (new side last), used to find which
    DaemonSets read a changed ConfigMap; ``old``/``new`` are the models when a side came from a
    spec, used to name the pools a DaemonSet covers.
    """
    found = [
        *_queue_impacts(artifacts),
        *_flink_impacts(artifacts),
        *_node_impacts(artifacts, list(manifests), old, new),
        *_yarn_impacts(artifacts),
        *_pulumi_impacts(artifacts),
    ]
    order = list(CATEGORY_TITLES)
    unique: list[Impact] = []
    for item in found:
        if not any(same(item.to_json(), u.to_json()) for u in unique):
            unique.append(item)
    return sorted(unique, key=lambda i: (order.index(i.category), i.subject, i.message))
