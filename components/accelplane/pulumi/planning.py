"""Pure planning for the Pulumi program: logical names, dependencies, creation order.

Nothing here imports pulumi, so the rules are unit-testable on their own and the renderer could use
them too. Everything is derived from the plain manifests the builders return — never from the spec —
so objects of families that land later are covered without code changes.

* Logical names come from kind + namespace + name only (``queue/streaming``,
  ``configmap/volcano-system/volcano-scheduler-configmap``): a URN changes exactly when the object's
  identity changes, never because of list order or of another object.
* Dependencies are the references Kubernetes itself (or its controllers) resolves by name: the
  ``spec`` fields of `SPEC_REFERENCES` (a PodGroup's ``queue``, a Volcano Queue's ``parent``, a
  FlinkDeployment's ``serviceAccount``, a FlinkSessionJob's ``deploymentName``, Kueue's LocalQueue
  ``clusterQueue``, ClusterQueue ``cohortName`` and ``resourceGroups[].flavors[].name``, Cohort
  ``parentName``), anywhere in a manifest ``priorityClassName``, ``serviceAccountName``, ConfigMap
  volumes/env sources, the Volcano group-name annotation, the Kueue queue-name label (a pod
  template's LocalQueue), Dynamic Resource Allocation's ``resourceClaimTemplateName`` and
  ``deviceClassName``; RBAC bindings' ``roleRef``/``subjects`` and an object's Namespace. Only
  references to objects of the same bundle become dependencies (``system-node-critical`` or the
  ``default`` queue are not ours to order). Pulumi creates a referent before its referrers and, on
  day two, deletes the referrers (or updates them, which it does before any delete) first.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from accelplane.artifacts import Bundle, FileArtifact, K8sObject
from accelplane.derive.kueue import QUEUE_NAME_LABEL
from accelplane.kubernetes_rules import CONFIGMAP_REF_KEYS

ObjectKey = tuple[str, str, str, str]
"""`K8sObject.key`: (API group — ``v1`` for the core group —, kind, namespace or "", name)."""

GROUP_NAME_ANNOTATION = "scheduling.k8s.io/group-name"
VOLCANO = "scheduling.volcano.sh"
SCHEDULING = "scheduling.k8s.io"
RBAC = "rbac.authorization.k8s.io"
FLINK = "flink.apache.org"
CORE = "v1"
DRA = "resource.k8s.io"
KUEUE = "kueue.x-k8s.io"
FAMILY_RE = re.compile(r"[a-z][a-z0-9]*(-[a-z0-9]+)*")


class PlanError(ValueError):
    """The builder output cannot be turned into a Pulumi program (an accelplane bug, not a spec error)."""


def logical_name(obj: K8sObject) -> str:
    """Pulumi logical name of an object: ``<kind>/<name>`` or ``<kind>/<namespace>/<name>``.

    DNS names cannot contain ``/``, so the name is unambiguous; it never depends on list order,
    the family that built the object or anything else in the spec.
    """
    kind = obj.kind.lower()
    return f"{kind}/{obj.namespace}/{obj.name}" if obj.namespace else f"{kind}/{obj.name}"


def family_token(family: str) -> tuple[str, str]:
    """(module, Type) of a family's component type token ``accelplane:<module>:<Type>``.

    One formula for every family, so a family first applied by the generic component keeps its URNs
    when it later gets a specialised component class: ``device-plugins`` →
    ``("device_plugins", "DevicePlugins")``.
    """
    if not FAMILY_RE.fullmatch(family):
        raise PlanError(
            f"artifact family {family!r} is not a lowercase dash-separated word (e.g. 'device-plugins')"
        )
    return family.replace("-", "_"), "".join(part.capitalize() for part in family.split("-"))


def file_family(f: FileArtifact) -> str:
    """Family of a rendered file: its own tag, else its top-level directory (``yarn/…`` → ``yarn``)."""
    return f.family or f.path.split("/", 1)[0]



@dataclass(frozen=True)
class FieldRef:
    """A ``spec`` field of one kind that names another object: ``path`` is dotted, ``[]`` steps into
    every item of a list (``resourceGroups[].flavors[].name``); the referent is of ``group``/``kind``,
    in the referrer's namespace when ``namespaced``, else cluster-scoped."""

    path: str
    group: str
    kind: str
    namespaced: bool = False


SPEC_REFERENCES: Mapping[tuple[str, str], tuple[FieldRef, ...]] = {
    (VOLCANO, "PodGroup"): (FieldRef("queue", VOLCANO, "Queue"),),
    (VOLCANO, "Queue"): (FieldRef("parent", VOLCANO, "Queue"),),
    (FLINK, "FlinkDeployment"): (FieldRef("serviceAccount", CORE, "ServiceAccount", namespaced=True),),
    (FLINK, "FlinkSessionJob"): (FieldRef("deploymentName", FLINK, "FlinkDeployment", namespaced=True),),
    # Kueue v1beta2 (../shared/reference/kueue/*.yaml, v0.19.2). A ResourceFlavor keeps Kueue's
    # kueue.x-k8s.io/resource-in-use finalizer while any ClusterQueue names it
    # (pkg/controller/core/resourceflavor_controller.go:107-117), a ClusterQueue while workloads hold
    # quota in it (clusterqueue_controller.go:193-197): delete the referrers first.
    (KUEUE, "LocalQueue"): (FieldRef("clusterQueue", KUEUE, "ClusterQueue"),),
    (KUEUE, "ClusterQueue"): (
        FieldRef("cohortName", KUEUE, "Cohort"),
        FieldRef("resourceGroups[].flavors[].name", KUEUE, "ResourceFlavor"),
    ),
    (KUEUE, "Cohort"): (FieldRef("parentName", KUEUE, "Cohort"),),
}
"""The one table of by-name references in a kind's ``spec`` (docs/pulumi.md, "Order"); references
found anywhere in a manifest (pod templates, labels, annotations) are `_walk`'s, and RBAC bindings'
``roleRef``/``subjects`` (outside ``spec``) `references`'s own."""


def _field_values(node: Any, steps: Sequence[str]) -> Iterator[Any]:
    """The values at a `FieldRef` path below ``node`` (none where a step is missing or of another type)."""
    if not steps:
        yield node
        return
    step, rest = steps[0], steps[1:]
    many = step.endswith("[]")
    value = node.get(step.removesuffix("[]")) if isinstance(node, Mapping) else None
    if many:
        for item in value if isinstance(value, list) else []:
            yield from _field_values(item, rest)
    elif value is not None:
        yield from _field_values(value, rest)


def _ref(group: str, kind: str, namespace: str | None, name: Any) -> ObjectKey | None:
    return (group, kind, namespace or "", name) if isinstance(name, str) and name else None


def _walk(node: Any, namespace: str | None, out: set[ObjectKey | None]) -> None:
    """References by name found anywhere in a manifest (pod templates may be nested deeply)."""
    if isinstance(node, Mapping):
        for key, value in node.items():
            if key == "priorityClassName":
                out.add(_ref(SCHEDULING, "PriorityClass", None, value))
            elif key == "serviceAccountName":
                out.add(_ref(CORE, "ServiceAccount", namespace, value))
            elif key == "resourceClaimTemplateName":
                out.add(_ref(DRA, "ResourceClaimTemplate", namespace, value))
            elif key == "deviceClassName":
                out.add(_ref(DRA, "DeviceClass", None, value))
            elif key in CONFIGMAP_REF_KEYS and isinstance(value, Mapping):
                out.add(_ref(CORE, "ConfigMap", namespace, value.get("name")))
            elif key == "annotations" and isinstance(value, Mapping):
                out.add(_ref(VOLCANO, "PodGroup", namespace, value.get(GROUP_NAME_ANNOTATION)))
            elif key == "labels" and isinstance(value, Mapping):
                out.add(_ref(KUEUE, "LocalQueue", namespace, value.get(QUEUE_NAME_LABEL)))
            _walk(value, namespace, out)
    elif isinstance(node, list):
        for item in node:
            _walk(item, namespace, out)


def references(obj: K8sObject) -> set[ObjectKey]:
    """Every object this manifest names and needs to exist first (whether or not it is in a bundle)."""
    m = obj.manifest
    raw_spec = m.get("spec")
    spec: Mapping[str, Any] = raw_spec if isinstance(raw_spec, Mapping) else {}
    ns = obj.namespace
    out: set[ObjectKey | None] = set()
    group = obj.key[0]
    for field in SPEC_REFERENCES.get((group, obj.kind), ()):
        for value in _field_values(spec, field.path.split(".")):
            out.add(_ref(field.group, field.kind, ns if field.namespaced else None, value))
    if group == RBAC and obj.kind in ("RoleBinding", "ClusterRoleBinding"):
        role = m.get("roleRef") or {}
        if role.get("kind") == "ClusterRole":
            out.add(_ref(RBAC, "ClusterRole", None, role.get("name")))
        elif role.get("kind") == "Role":
            out.add(_ref(RBAC, "Role", ns, role.get("name")))
        for subject in m.get("subjects") or []:
            if subject.get("kind") == "ServiceAccount":
                out.add(_ref(CORE, "ServiceAccount", subject.get("namespace") or ns, subject.get("name")))
    if ns:
        out.add(_ref(CORE, "Namespace", None, ns))
    _walk({k: v for k, v in m.items() if k not in ("apiVersion", "kind")}, ns, out)
    return {r for r in out if r is not None and r != obj.key}


def dependencies(objects: Sequence[K8sObject]) -> dict[ObjectKey, tuple[ObjectKey, ...]]:
    """For each object, the objects of the same collection it depends on (sorted)."""
    present = {o.key for o in objects}
    return {o.key: tuple(sorted(references(o) & present)) for o in objects}


def _topological(nodes: Iterable[Any], edges: Mapping[Any, Iterable[Any]]) -> tuple[list[Any], list[Any]]:
    """Kahn's algorithm with ties broken by sort order (deterministic). Returns (order, nodes left
    over because they lie on or behind a cycle)."""
    pending = {n: set(edges.get(n, ())) for n in nodes}
    order: list[Any] = []
    while pending:
        ready = sorted(n for n, deps in pending.items() if not deps)
        if not ready:
            break
        for n in ready:
            order.append(n)
            del pending[n]
        for deps in pending.values():
            deps.difference_update(ready)
    return order, sorted(pending)


def creation_order(
    objects: Sequence[K8sObject], deps: Mapping[ObjectKey, Iterable[ObjectKey]] | None = None
) -> list[K8sObject]:
    """Objects ordered so every dependency comes first; raise `PlanError` on a cycle. ``deps`` is
    `dependencies(objects)` when the caller has computed it already."""
    by_key = {o.key: o for o in objects}
    order, stuck = _topological(by_key, dependencies(objects) if deps is None else deps)
    if stuck:
        raise PlanError(
            f"Kubernetes objects reference each other in a cycle: {[logical_name(by_key[k]) for k in stuck]}"
        )
    return [by_key[k] for k in order]


def families(bundle: Bundle) -> list[str]:
    """Every family of a bundle (objects' families and files' families), sorted; each must fit a type
    token (`family_token`). Families may reference each other's objects in any direction: resources
    are registered in one global dependency order (`creation_order`), not family by family."""
    names = sorted({o.family for o in bundle.objects} | {file_family(f) for f in bundle.files})
    for name in names:
        family_token(name)
    return names
