"""How generated pods find the nodes of a pool: label selection and taint toleration.

Written once for the device-plugin DaemonSets (and reusable by any other pod that must land on a
pool): a pool is selected by ALL of its declared labels, never by labels that Node Feature
Discovery, GPU Feature Discovery or the AMD labeller may or may not have written (a DaemonSet
whose selector matches no node has 0 desired pods and fails silently). Tolerations follow the
Kubernetes rules (``k8s.io/api/core/v1`` ``Toleration.ToleratesTaint``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from accelplane import kubernetes_rules
from accelplane.derive.mig_parted import MIG_CONFIG_LABEL, mig_node_labels
from accelplane.model import NodePool, Taint

# Taint effects that keep a pod off a node (PreferNoSchedule only discourages).
BLOCKING_EFFECTS = frozenset({"NoSchedule", "NoExecute"})

# Label keys written by node agents rather than by whoever provisions the pool: selecting a pool
# by them makes the device plugin depend on software that may not run (or that itself needs the
# device plugin). Upstream expects people to set ``nvidia.com/gpu.present`` (forces GFD) and
# ``nvidia.com/device-plugin.config`` (picks a named plugin config) themselves.
_AGENT_LABEL_PREFIXES = ("feature.node.kubernetes.io/", "nvidia.com/", "amd.com/", "beta.amd.com/")
_USER_SETTABLE = frozenset({"nvidia.com/gpu.present", "nvidia.com/device-plugin.config", MIG_CONFIG_LABEL})


def is_agent_written_label(key: str) -> bool:
    """True for label keys that NFD, GFD or the AMD labeller write on nodes themselves."""
    return key not in _USER_SETTABLE and key.startswith(_AGENT_LABEL_PREFIXES)


def pool_labels(pool: NodePool) -> dict[str, str]:
    """The labels every node of the pool carries, sorted by key: its declared labels plus, on a MIG
    pool, ``nvidia.com/mig.config: <pool>`` (the layout the MIG manager applies,
    `accelplane.derive.mig_parted`), so pods that need the pool's MIG slices only land on nodes
    labelled for that layout."""
    return dict(sorted({**dict(pool.labels), **mig_node_labels(pool)}.items()))


def selects(selector: Mapping[str, str], node_labels: Mapping[str, str]) -> bool:
    """True when a node with ``node_labels`` matches an equality selector (every key/value present).

    An empty selector matches every node.
    """
    return all(node_labels.get(k) == v for k, v in selector.items())


def toleration_for(taint: Taint) -> dict[str, str]:
    """The narrowest toleration of one taint: ``Equal`` on its value (``Exists`` when it has none)."""
    if taint.value:
        return {"key": taint.key, "operator": "Equal", "value": taint.value, "effect": taint.effect}
    return {"key": taint.key, "operator": "Exists", "effect": taint.effect}


def tolerates(toleration: Mapping[str, Any], taint: Taint) -> bool:
    """Kubernetes ``ToleratesTaint`` for one of a pool's taints (`accelplane.kubernetes_rules.tolerates`)."""
    return kubernetes_rules.tolerates(toleration, taint.key, taint.value, taint.effect)


def untolerated(tolerations: Sequence[Mapping[str, Any]], taints: Iterable[Taint]) -> list[Taint]:
    """Taints that keep a pod with ``tolerations`` off the node (blocking effects only)."""
    return [
        t
        for t in taints
        if t.effect in BLOCKING_EFFECTS and not any(tolerates(tol, t) for tol in tolerations)
    ]


def merged_tolerations(base: Sequence[dict[str, str]], pools: Iterable[NodePool]) -> list[dict[str, str]]:
    """``base`` (kept first, in order) plus one toleration per pool taint that ``base`` and the
    earlier additions do not already tolerate; additions sorted, duplicates removed."""
    out = [dict(t) for t in base]
    extra: list[dict[str, str]] = []
    taints = sorted({t for p in pools for t in p.taints}, key=lambda t: (t.key, t.value, t.effect))
    for taint in taints:
        if not any(tolerates(tol, taint) for tol in out + extra):
            extra.append(toleration_for(taint))
    return out + extra


def pool_node_affinity(pools: Sequence[NodePool]) -> dict[str, Any]:
    """``affinity`` that admits exactly the nodes of ``pools``: one nodeSelectorTerm per pool
    (terms are ORed), each requiring every label of that pool (expressions are ANDed)."""
    terms = []
    for pool in sorted(pools, key=lambda p: p.name):
        expressions = [{"key": k, "operator": "In", "values": [v]} for k, v in pool_labels(pool).items()]
        terms.append({"matchExpressions": expressions})
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}
