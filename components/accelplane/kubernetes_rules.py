"""Kubernetes' own rules on plain manifests, written once for every layer that needs them.

Taint toleration (``k8s.io/api/core/v1`` ``Toleration.ToleratesTaint``), node selection by
``nodeSelector`` and required node affinity (``k8s.io/component-helpers`` ``nodeaffinity``), and the
ways a pod names a ConfigMap. The builders' placement (`accelplane.derive.node_selection`), `diff`'s
impact analysis and the Pulumi dependency planning all use these, so they agree with each other and
with the API server.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

CONFIGMAP_REF_KEYS = ("configMap", "configMapRef", "configMapKeyRef")
"""Keys under which a pod spec names a ConfigMap (volumes and projected sources, ``envFrom``, ``env``)."""


def tolerates(toleration: Mapping[str, Any], key: str, value: str, effect: str) -> bool:
    """True when ``toleration`` tolerates the taint ``key=value:effect``: effect (empty = all), key
    (empty key + ``Exists`` = all keys), ``Exists`` ignores the value, ``Equal`` (default) compares it."""
    wanted_effect = toleration.get("effect") or ""
    if wanted_effect and wanted_effect != effect:
        return False
    wanted_key = toleration.get("key") or ""
    operator = toleration.get("operator") or "Equal"
    if wanted_key == "":
        return operator == "Exists"
    if wanted_key != key:
        return False
    if operator == "Exists":
        return True
    return str(toleration.get("value") or "") == value


def expression_matches(expr: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """One ``matchExpressions`` entry of a node selector term against a node's labels."""
    key, op = str(expr.get("key") or ""), expr.get("operator")
    values = [str(v) for v in expr.get("values") or []]
    if op == "In":
        return key in labels and labels[key] in values
    if op == "NotIn":
        return key not in labels or labels[key] not in values
    if op == "Exists":
        return key in labels
    if op == "DoesNotExist":
        return key not in labels
    if op in ("Gt", "Lt") and key in labels and values:
        try:
            a, b = int(labels[key]), int(values[0])
        except ValueError:
            return False
        return a > b if op == "Gt" else a < b
    return False


def pod_selects_node(pod_spec: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """True when a pod with this spec may be placed on a node with ``labels``: every
    ``nodeSelector`` entry matches and, when required node affinity is set, one of its terms
    (terms are ORed, expressions ANDed)."""
    selector = pod_spec.get("nodeSelector") or {}
    if any(labels.get(str(k)) != str(v) for k, v in selector.items()):
        return False
    affinity = (pod_spec.get("affinity") or {}).get("nodeAffinity") or {}
    terms = (affinity.get("requiredDuringSchedulingIgnoredDuringExecution") or {}).get("nodeSelectorTerms")
    if terms:
        return any(
            all(expression_matches(e, labels) for e in (term or {}).get("matchExpressions") or [])
            for term in terms
        )
    return True


def configmap_refs(node: Any) -> set[str]:
    """Names of every ConfigMap a manifest (or any part of one) refers to."""
    found: set[str] = set()
    if isinstance(node, Mapping):
        for key, value in node.items():
            if key in CONFIGMAP_REF_KEYS and isinstance(value, Mapping) and value.get("name"):
                found.add(str(value["name"]))
            found |= configmap_refs(value)
    elif isinstance(node, list):
        for item in node:
            found |= configmap_refs(item)
    return found
