"""Apache YuniKorn's own rules, read line by line from its Go sources, to check what we render.

* `parse_quantity` ← yunikorn-core ``pkg/common/resources/quantity.go`` (``parse``).
* `validate_config` ← yunikorn-core ``pkg/common/configs/config.go`` (``ParseAndValidateConfig``:
  strict YAML decoding, unknown keys rejected) and ``configvalidator.go`` (``Validate``: partitions,
  queue structure and names, ACLs, ``checkQueueResource``, placement rules, node sorting policy,
  ``checkQueueMaxApplications``). User/group ``limits`` are not read (our configs never set
  them): a document with limits raises `NotCovered`.
* `parse_task_groups` ← yunikorn-k8shim ``pkg/cache/utils.go`` (``GetTaskGroupsFromAnnotation`` and
  ``validateTaskGroupResources``), with Go's ``encoding/json`` (field names case-insensitive,
  type mismatches rejected).
* `scheduling_policy` ← yunikorn-k8shim ``pkg/cache/gang_utils.go`` (``GetSchedulingPolicyParam``).

YuniKorn's own test cases (our table tests/yunikorn/data/upstream_cases.yaml, test_upstream_cases.py)
and the recorded verdicts of its validator (tests/yunikorn/data/oracle_trees.json)
prove these readings agree with YuniKorn on every case they cover.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import yaml
from accelplane.quantity import QuantityError
from accelplane.quantity import parse_quantity as k8s_quantity

INT64_MAX = 2**63 - 1
INT32_MAX = 2**31 - 1

_LEGAL = re.compile(r"^(?P<number>[0-9]+)\s*(?P<suffix>([mkKMGTPE]i?)?)$")
_MULTIPLIERS = {
    "": 1, "m": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
}
QUEUE_NAME = re.compile(r"^[a-zA-Z0-9_:#/@-]{1,64}$")
RULE_NAME = re.compile(r"^[_a-zA-Z][a-zA-Z0-9_]*$")
USER = re.compile(r"^[_a-zA-Z][a-zA-Z0-9:#/_.@-]*[$]?$")
GROUP = re.compile(r"^[_a-zA-Z][a-zA-Z0-9:_.-]*$")
SPECIAL = re.compile(r"[\^$*+?()\[{}|]")
CPU = "vcore"


class YuniKornError(ValueError):
    """YuniKorn would reject the input."""


class NotCovered(Exception):
    """The input uses a part of YuniKorn's rules this reading does not cover (user/group limits)."""


def parse_quantity(value: str, milli: bool = False) -> int:
    """``resources.parse``: the integer YuniKorn stores (milli-units for ``vcore``)."""
    m = _LEGAL.match(value.strip())
    if m is None:
        raise YuniKornError("invalid quantity")
    number = int(m["number"])
    if number > INT64_MAX:
        raise YuniKornError("invalid quantity: overflow")
    suffix = m["suffix"]
    if suffix not in _MULTIPLIERS or (suffix == "m" and not milli):
        raise YuniKornError("invalid suffix")
    result = number * _MULTIPLIERS[suffix]
    if milli and suffix != "m":
        result *= 1000
    if result > INT64_MAX:
        raise YuniKornError("invalid quantity: overflow")
    return result


def resources_from_conf(conf: dict[str, Any] | None) -> dict[str, int]:
    """``NewResourceFromConf``."""
    out: dict[str, int] = {}
    for key, raw in (conf or {}).items():
        if raw is None:
            raise YuniKornError(f"resource {key} has no value")
        out[key] = parse_quantity(str(raw), milli=key == CPU)
    return out


def _fit_in_max_undef(larger: dict[str, int] | None, smaller: dict[str, int] | None) -> bool:
    if smaller is None:
        return True
    larger = larger or {}
    return all(k not in larger or v <= max(0, larger[k]) for k, v in smaller.items())


def _component_wise_min(left: dict[str, int] | None, right: dict[str, int] | None) -> dict[str, int] | None:
    if left is None and right is None:
        return None
    if left is None:
        return dict(right or {})
    if right is None:
        return dict(left)
    out = dict(left)
    for k, v in right.items():
        out[k] = min(v, out[k]) if k in out else v
    return out


# --- strict decoding (yaml.v3 KnownFields: Go field names lowercased) -------------------------------

_FIELDS: dict[str, dict[str, str]] = {
    "SchedulerConfig": {"partitions": "[]PartitionConfig", "checksum": "string"},
    "PartitionConfig": {
        "name": "string", "queues": "[]QueueConfig", "placementrules": "[]PlacementRule", "limits": "[]Limit",
        "preemption": "PartitionPreemptionConfig", "nodesortpolicy": "NodeSortingPolicy",
        "usergroupresolver": "UserGroupResolver",
    },
    "UserGroupResolver": {"type": "string"},
    "PartitionPreemptionConfig": {"enabled": "bool", "quotapreemptionenabled": "bool"},
    "QueueConfig": {
        "name": "string", "parent": "bool", "resources": "Resources", "maxapplications": "uint64",
        "properties": "map", "adminacl": "string", "submitacl": "string", "childtemplate": "ChildTemplate",
        "queues": "[]QueueConfig", "limits": "[]Limit",
    },
    "ChildTemplate": {"maxapplications": "uint64", "properties": "map", "resources": "Resources"},
    "Resources": {"guaranteed": "map", "max": "map"},
    "PlacementRule": {"name": "string", "create": "bool", "filter": "Filter", "parent": "PlacementRule", "value": "string"},
    "Filter": {"type": "string", "users": "[]string", "groups": "[]string"},
    "Limit": {
        "limit": "string", "users": "[]string", "groups": "[]string", "maxresources": "map", "maxapplications": "uint64",
    },
    "NodeSortingPolicy": {"type": "string", "resourceweights": "map"},
}


def _decode(value: Any, kind: str, where: str) -> Any:
    if value is None:
        return None
    if kind.startswith("[]"):
        if not isinstance(value, list):
            raise YuniKornError(f"{where}: not a list")
        return [_decode(v, kind[2:], f"{where}[{i}]") for i, v in enumerate(value)]
    if kind == "string":
        if isinstance(value, (dict, list)):
            raise YuniKornError(f"{where}: not a string")
        return str(value) if not isinstance(value, bool) else str(value).lower()
    if kind == "bool":
        if not isinstance(value, bool):
            raise YuniKornError(f"{where}: not a bool")
        return value
    if kind == "uint64":
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise YuniKornError(f"{where}: not a uint64")
        return value
    if kind == "map":
        if not isinstance(value, dict):
            raise YuniKornError(f"{where}: not a map")
        return value
    if not isinstance(value, dict):
        raise YuniKornError(f"{where}: not a {kind}")
    fields = _FIELDS[kind]
    out: dict[str, Any] = {}
    for key, item in value.items():
        if key not in fields:
            raise YuniKornError(f"{where}: field {key} not found in type configs.{kind}")
        out[key] = _decode(item, fields[key], f"{where}.{key}")
    return out


# --- Validate --------------------------------------------------------------------------------------


def _check_acl(acl: str | None) -> None:
    acl = (acl or "").strip()
    if acl in ("", "*"):
        return
    if len(acl.split()) > 2:
        raise YuniKornError(f"multiple spaces found in ACL: '{acl}'")


def _check_queues(queue: dict[str, Any], level: int) -> None:
    _check_acl(queue.get("adminacl"))
    _check_acl(queue.get("submitacl"))
    if queue.get("limits"):
        raise NotCovered("limits")
    seen: set[str] = set()
    for child in queue.get("queues") or []:
        name = child.get("name") or ""
        if not QUEUE_NAME.match(name):
            raise YuniKornError("invalid queue name")
        if name.lower() in seen:
            raise YuniKornError(f"duplicate child name found with name '{name}', level {level}")
        seen.add(name.lower())
    for child in queue.get("queues") or []:
        _check_queues(child, level + 1)


def _check_queue_resource(cur: dict[str, Any], parent_max: dict[str, int] | None) -> dict[str, int]:
    res = cur.get("resources") or {}
    g = resources_from_conf(res.get("guaranteed"))
    m = resources_from_conf(res.get("max"))
    if not _fit_in_max_undef(m, g):
        raise YuniKornError(f"guaranteed resource {g} is larger than maximum resource {m} for queue {cur.get('name')}")
    if not _fit_in_max_undef(parent_max, m):
        raise YuniKornError(f"max resource of parent {parent_max} is smaller than maximum resource {m}")
    effective = _component_wise_min(m, parent_max) or {}
    total: dict[str, int] = {}
    for child in cur.get("queues") or []:
        for k, v in _check_queue_resource(child, effective).items():
            total[k] = total.get(k, 0) + v
    if not _fit_in_max_undef(g, total):
        raise YuniKornError(f"guaranteed resource of parent {g} is smaller than sum of guaranteed resources {total}")
    if not _fit_in_max_undef(effective, total):
        raise YuniKornError(f"max resource {effective} is smaller than sum of guaranteed resources {total}")
    return total if all(v == 0 for v in g.values()) else g


def _rule_chain(rule: dict[str, Any]) -> list[dict[str, Any]]:
    parent = rule.get("parent")
    return [*(_rule_chain(parent) if parent else []), rule]


def _check_rule(rule: dict[str, Any]) -> None:
    if not RULE_NAME.match(rule.get("name") or ""):
        raise YuniKornError(f"invalid rule name {rule.get('name')}")
    if rule.get("parent"):
        _check_rule(rule["parent"])
    flt = rule.get("filter") or {}
    ftype = flt.get("type") or ""
    if ftype and ftype.lower() not in ("allow", "deny"):
        raise YuniKornError(f"invalid rule filter type {ftype}")
    for key, pattern in (("users", USER), ("groups", GROUP)):
        values = flt.get(key) or []
        if len(values) == 1 and not pattern.match(values[0]):
            try:
                re.compile(values[0])
            except re.error as exc:
                raise YuniKornError(f"invalid rule filter {key}") from exc
            if not SPECIAL.search(values[0]):
                raise YuniKornError(f"invalid rule filter {key}")


def _static_path(rule: dict[str, Any]) -> tuple[str, bool]:
    path, dynamic = "", False
    for r in _rule_chain(rule):
        if dynamic:
            continue
        if r.get("name") != "fixed":
            path = path or "<dynamic>"
            dynamic = True
            continue
        value = r.get("value") or ""
        if value.startswith("root"):
            if path:
                raise YuniKornError(f"illegal fully qualified 'fixed' rule with value {value}")
            path = value
            continue
        path = (path or "root") + "." + value
    return path, dynamic


def _placement_path_ok(parts: list[str], create: bool, dynamic: bool, conf: list[dict[str, Any]], parent: dict[str, Any] | None) -> str | None:
    if not conf:
        assert parent is not None
        if not parent.get("parent"):
            return "last queue is a leaf"
        return None if create else "non-existing queue"
    queue = next((q for q in conf if q.get("name") == parts[0]), None)
    if queue is None:
        return None if create else "non-existing queue"
    if len(parts) == 1:
        if dynamic:
            return None if queue.get("parent") else "queue is not a leaf"
        return "queue is not a leaf" if queue.get("parent") else None
    return _placement_path_ok(parts[1:], create, dynamic, queue.get("queues") or [], queue)


def _check_placement_rules(partition: dict[str, Any]) -> None:
    rules = partition.get("placementrules") or []
    for rule in rules:
        _check_rule(rule)
    for i, rule in enumerate(rules):
        path, dynamic = _static_path(rule)
        if not path.startswith("root"):
            continue
        problem = _placement_path_ok(path.lower().split("."), bool(rule.get("create")), dynamic, partition["queues"], None)
        if problem is not None:
            raise YuniKornError(f"placement rule no. #{i} references {path}: {problem}")


def _check_max_applications(cur: dict[str, Any]) -> None:
    own = cur.get("maxapplications") or 0
    for child in cur.get("queues") or []:
        theirs = child.get("maxapplications") or 0
        if own and own < theirs:
            raise YuniKornError("parent maxApplications must be larger than child maxApplications")
        if own and not theirs:
            raise YuniKornError("maxApplications is either undefined or zero")
        _check_max_applications(child)


def validate_config(text: str) -> dict[str, Any]:
    """``ParseAndValidateConfig``: the decoded and validated document, or `YuniKornError`."""
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise YuniKornError(str(exc)) from exc
    conf = _decode(raw if raw is not None else {}, "SchedulerConfig", "config")
    seen: set[str] = set()
    for partition in conf.get("partitions") or []:
        name = partition.get("name") or ""
        if name == "" or name.lower() == "default":
            name = partition["name"] = "default"
        if name.lower() in seen:
            raise YuniKornError(f"duplicate partition name found with name {name}")
        seen.add(name.lower())
        queues = partition.get("queues")
        if queues is None:
            raise YuniKornError("queue config is not set")
        if len(queues) != 1 or (queues[0].get("name") or "").lower() != "root":
            queues = partition["queues"] = [{"name": "root", "parent": True, "queues": queues}]
        else:
            queues[0]["parent"] = True
        root = queues[0]
        resources = root.get("resources") or {}
        if resources.get("guaranteed") is not None or resources.get("max") is not None:
            raise YuniKornError("root queue must not have resource limits set")
        if partition.get("limits"):
            raise NotCovered("limits")
        _check_queues(root, 1)
        _check_queue_resource(root, None)
        _check_placement_rules(partition)
        policy = partition.get("nodesortpolicy") or {}
        if (policy.get("type") or "") not in ("", "fair", "binpacking"):
            raise YuniKornError(f"undefined policy: {policy.get('type')}")
        for k, v in (policy.get("resourceweights") or {}).items():
            if float(v) < 0:
                raise YuniKornError(f"negative resource weight for {k} is not allowed")
        _check_max_applications(root)
    return conf


# --- the shim: task groups and scheduling policy -----------------------------------------------------


@dataclass(frozen=True)
class TaskGroup:
    """One task group as the shim holds it."""

    name: str
    min_member: int
    min_resource: dict[str, Decimal]
    node_selector: dict[str, str]
    tolerations: list[dict[str, Any]]
    affinity: dict[str, Any] | None


_TG_FIELDS = {
    "name": "Name", "minmember": "MinMember", "labels": "Labels", "annotations": "Annotations",
    "minresource": "MinResource", "nodeselector": "NodeSelector", "tolerations": "Tolerations",
    "affinity": "Affinity", "topologyspreadconstraints": "TopologySpreadConstraints",
}


def _go_fields(obj: dict[str, Any]) -> dict[str, Any]:
    """Go's encoding/json: keys match struct fields case-insensitively, unknown keys are ignored."""
    out: dict[str, Any] = {}
    for key, value in obj.items():
        field = _TG_FIELDS.get(key.lower())
        if field is not None:
            out[field] = value
    return out


def _quantity(raw: Any) -> Decimal:
    """``resource.Quantity``'s JSON decoding: a string or a number in Kubernetes quantity syntax."""
    if isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
        raise YuniKornError(f"quantities must match the regular expression: {raw!r}")
    try:
        return k8s_quantity(raw if isinstance(raw, str) else str(raw))
    except QuantityError as exc:
        raise YuniKornError(str(exc)) from exc


def parse_task_groups(annotation: str) -> list[TaskGroup] | None:
    """``GetTaskGroupsFromAnnotation``: the task groups, None for an empty annotation, or
    `YuniKornError`."""
    if annotation == "":
        return None
    try:
        raw = json.loads(annotation)
    except json.JSONDecodeError as exc:
        raise YuniKornError(str(exc)) from exc
    if not isinstance(raw, list):
        raise YuniKornError("cannot unmarshal into []TaskGroup")
    groups: list[TaskGroup] = []
    totals: dict[str, int] = {}
    for item in raw:
        if not isinstance(item, dict):
            raise YuniKornError("cannot unmarshal into TaskGroup")
        f = _go_fields(item)
        name = f.get("Name") or ""
        member = f.get("MinMember", 0)
        if not isinstance(name, str) or isinstance(member, bool) or not isinstance(member, int):
            raise YuniKornError("cannot unmarshal task group field")
        if not -(2**31) <= member <= INT32_MAX:
            raise YuniKornError("minMember overflows int32")
        resources_raw = f.get("MinResource")
        if resources_raw is not None and not isinstance(resources_raw, dict):
            raise YuniKornError("cannot unmarshal minResource")
        resources = {k: _quantity(v) for k, v in (resources_raw or {}).items()} if resources_raw is not None else None
        if name == "":
            raise YuniKornError("can't get taskGroup Name from pod annotation")
        if resources is None:
            raise YuniKornError("can't get taskGroup MinResource from pod annotation")
        if member == 0:
            raise YuniKornError("can't get taskGroup MinMember from pod annotation")
        if member < 0:
            raise YuniKornError("minMember cannot be negative")
        _validate_resources(name, member, resources, totals)
        groups.append(
            TaskGroup(
                name, member, resources, dict(f.get("NodeSelector") or {}), list(f.get("Tolerations") or []),
                f.get("Affinity"),
            )
        )
    return groups


def _validate_resources(name: str, members: int, resources: dict[str, Decimal], totals: dict[str, int]) -> None:
    """``validateTaskGroupResources``."""
    seen = {"pods"}
    if totals.get("pods", 0) > INT64_MAX - members:
        raise YuniKornError('aggregate placeholder request for "pods" overflows int64')
    totals["pods"] = totals.get("pods", 0) + members
    for res, quantity in resources.items():
        if quantity < 0:
            raise YuniKornError(f"minResource {res!r} in taskGroup {name!r} cannot be negative")
        cpu = res == "cpu"
        canonical, milli = (CPU, 1000) if cpu else (res, 1)
        if canonical in seen:
            raise YuniKornError(f"minResource {res!r} in taskGroup {name!r} collides under {canonical!r}")
        seen.add(canonical)
        if quantity > INT64_MAX // (members * milli):
            raise YuniKornError(f"minResource {res!r} in taskGroup {name!r} overflows int64")
        scaled = quantity * 1000 if cpu else quantity
        value = int(-(-scaled // 1))  # Quantity.Value()/MilliValue() round up
        contribution = members * value
        if totals.get(canonical, 0) > INT64_MAX - contribution:
            raise YuniKornError(f"aggregate placeholder request for {canonical!r} overflows int64")
        totals[canonical] = totals.get(canonical, 0) + contribution


def scheduling_policy(annotation: str) -> tuple[int, str]:
    """``GetSchedulingPolicyParam``: (placeholder timeout seconds, 0 = the shim's default; style)."""
    timeout, style = 0, "Soft"
    for part in annotation.split(" ") if annotation else []:
        kv = part.split("=")
        if len(kv) != 2:
            continue
        if kv[0] == "placeholderTimeoutInSeconds":
            try:
                timeout = int(kv[1])
            except ValueError:
                timeout = 0
        elif kv[0] == "gangSchedulingStyle":
            style = {"Hard": "Hard", "Soft": "Soft"}.get(kv[1], "Soft")
    return timeout, style
