"""Where Flink's own config puts a role's pods: ``kubernetes.<role>.node-selector`` and
``kubernetes.<role>.tolerations``.

Flink's ``InitJobManagerDecorator``/``InitTaskManagerDecorator`` merge the node selector over the
pod template's (the config wins for the same key) and append the tolerations to the template's.
Anything that reserves room for these pods ahead of them (YuniKorn's placeholder pods,
`accelplane.builders.task_groups`) must be placed the same way, or it holds nodes the real pods
cannot use.

Formats (Flink 1.20 ``KubernetesConfigOptions``): the node selector is a map option
``k1:v1,k2:v2``; tolerations a list of maps separated by ``;``, each
``key:k,operator:Equal,value:v,effect:NoSchedule,tolerationSeconds:60``
(``KubernetesToleration.fromMap``: field names case-insensitive, ``tolerationSeconds`` a long,
unknown names ignored).
"""

from __future__ import annotations

import re
from typing import Any, Literal

from accelplane.derive.flink_state import config_value
from accelplane.model import FlinkCluster

Role = Literal["jobmanager", "taskmanager"]

_TOLERATION_FIELDS = {
    "key": "key",
    "operator": "operator",
    "value": "value",
    "effect": "effect",
    "tolerationseconds": "tolerationSeconds",
}


LONG = re.compile(r"[+-]?[0-9]{1,18}")
"""What ``Long.valueOf`` reads for ``tolerationSeconds`` (shorter than a long's 19 digits, so always
in range): anything else makes Flink fail to build the pod (`accelplane.checks.flink`)."""


def toleration_items(value: object) -> list[dict[str, str]]:
    """The maps of a Flink list-of-maps option (``k:v,k:v;k:v``), as written."""
    return [flink_map(item) for item in str(value).split(";")]


def flink_map(value: object) -> dict[str, str]:
    """A Flink map option written as ``k1:v1,k2:v2`` (how Flink's map type reads a string)."""
    out: dict[str, str] = {}
    for item in str(value).split(","):
        key, sep, val = item.partition(":")
        if sep:
            out[key.strip()] = val.strip()
    return out


def config_node_selector(cluster: FlinkCluster, role: Role) -> dict[str, str]:
    """``kubernetes.<role>.node-selector`` of the cluster's config (empty when unset)."""
    found = config_value(cluster, (f"kubernetes.{role}.node-selector",))
    return flink_map(found[1]) if found is not None else {}


def config_tolerations(cluster: FlinkCluster, role: Role) -> list[dict[str, Any]]:
    """``kubernetes.<role>.tolerations`` of the cluster's config as Kubernetes tolerations, in order
    (empty when unset)."""
    found = config_value(cluster, (f"kubernetes.{role}.tolerations",))
    if found is None:
        return []
    out: list[dict[str, Any]] = []
    for item in toleration_items(found[1]):
        toleration: dict[str, Any] = {}
        for name, text in item.items():
            field = _TOLERATION_FIELDS.get(name.lower())
            if field == "tolerationSeconds":
                if LONG.fullmatch(text):  # else refused by the checks
                    toleration[field] = int(text)
            elif field is not None:
                toleration[field] = text
        if toleration:
            out.append(toleration)
    return out


def with_config_placement(placement: dict[str, Any], cluster: FlinkCluster, role: Role) -> dict[str, Any]:
    """``placement`` (``nodeSelector``/``affinity``/``tolerations`` of the pod template) as Flink
    leaves it on the role's pods: the config's node selector merged over it, its tolerations
    appended."""
    out = dict(placement)
    selector = {**placement.get("nodeSelector", {}), **config_node_selector(cluster, role)}
    if selector:
        out["nodeSelector"] = selector
    tolerations = [*placement.get("tolerations", []), *config_tolerations(cluster, role)]
    if tolerations:
        out["tolerations"] = tolerations
    return out
