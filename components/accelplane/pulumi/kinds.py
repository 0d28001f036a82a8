"""Generic mapping of a plain manifest to ONE typed pulumi_kubernetes resource.

The mapping is keyed by ``(apiVersion, kind)``. Core kinds use their typed class (the manifest's
top-level fields become the class's snake_case arguments; nested dicts are passed verbatim, which
is the camelCase wire format the provider expects); kinds served by a CRD (Volcano Queue/PodGroup,
Flink operator FlinkDeployment/FlinkSessionJob) use ``apiextensions.CustomResource``. A kind that is
not in the table is an error naming the object and the table, never a silent skip.

Registration (`Prepared.create`) sends exactly what the typed class would send, for less: the
typed class's type token and options (plugin version, download URL, aliases) are learnt once per
kind by constructing the class over a recorder instead of Pulumi's base class (`class_registration`),
and the manifest itself (camelCase, the provider's wire format) is registered as a plain
``pulumi.CustomResource``. Pulumi then serialises plain dicts instead of walking the typed input
classes' type hints through every nested level (about a quarter of registering these manifests);
tests/pulumi/test_lean_registration.py checks that every resource of every example stack reaches the
engine as the same ``RegisterResourceRequest`` both ways.

Resource options derived from the object itself:

* ``metadata.name`` is always explicit (the builders set it), so Pulumi never auto-names;
* ConfigMaps with ``immutable: true`` are content-addressed (their name carries a hash of their
  data, see `accelplane.discovery_install`): new content is a new object, and the old one is
  kept in the cluster when it leaves the program (``retain_on_delete``) because pods started from
  an older pod template — e.g. TaskManagers a running Flink JobManager still creates — mount it
  by its old name. See docs/pulumi.md, "ConfigMap update strategy".
* Namespaces are ``retain_on_delete`` too: deleting a Namespace deletes everything in it, including
  objects other tools put there (the Flink operator's service account, running Flink pods), so a
  namespace that leaves the program (no longer used, or marked ``managed: false``) is only
  forgotten by Pulumi, never deleted. See docs/pulumi.md, "A fresh cluster".
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from accelplane.artifacts import K8sObject
from accelplane.pulumi.planning import PlanError, logical_name


class UnsupportedObjectError(PlanError):
    """A builder produced a Kubernetes object the Pulumi layer has no resource mapping for."""


@dataclass(frozen=True)
class KindMapping:
    """How one (apiVersion, kind) is registered: typed class (None → CustomResource) and scope."""

    resource_class: type[pulumi.CustomResource] | None
    namespaced: bool


KINDS: dict[tuple[str, str], KindMapping] = {
    ("v1", "ConfigMap"): KindMapping(k8s.core.v1.ConfigMap, True),
    ("v1", "Namespace"): KindMapping(k8s.core.v1.Namespace, False),
    ("v1", "ServiceAccount"): KindMapping(k8s.core.v1.ServiceAccount, True),
    ("apps/v1", "DaemonSet"): KindMapping(k8s.apps.v1.DaemonSet, True),
    ("apps/v1", "Deployment"): KindMapping(k8s.apps.v1.Deployment, True),
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): KindMapping(k8s.rbac.v1.ClusterRole, False),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): KindMapping(
        k8s.rbac.v1.ClusterRoleBinding, False
    ),
    ("rbac.authorization.k8s.io/v1", "Role"): KindMapping(k8s.rbac.v1.Role, True),
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): KindMapping(k8s.rbac.v1.RoleBinding, True),
    ("scheduling.k8s.io/v1", "PriorityClass"): KindMapping(k8s.scheduling.v1.PriorityClass, False),
    ("resource.k8s.io/v1beta1", "DeviceClass"): KindMapping(k8s.resource.v1beta1.DeviceClass, False),
    ("resource.k8s.io/v1beta2", "DeviceClass"): KindMapping(k8s.resource.v1beta2.DeviceClass, False),
    ("resource.k8s.io/v1", "DeviceClass"): KindMapping(k8s.resource.v1.DeviceClass, False),
    ("resource.k8s.io/v1beta1", "ResourceClaimTemplate"): KindMapping(
        k8s.resource.v1beta1.ResourceClaimTemplate, True
    ),
    ("resource.k8s.io/v1beta2", "ResourceClaimTemplate"): KindMapping(
        k8s.resource.v1beta2.ResourceClaimTemplate, True
    ),
    ("resource.k8s.io/v1", "ResourceClaimTemplate"): KindMapping(k8s.resource.v1.ResourceClaimTemplate, True),
    ("scheduling.volcano.sh/v1beta1", "Queue"): KindMapping(None, False),
    ("scheduling.volcano.sh/v1beta1", "PodGroup"): KindMapping(None, True),
    ("kueue.x-k8s.io/v1beta2", "ResourceFlavor"): KindMapping(None, False),
    ("kueue.x-k8s.io/v1beta2", "Cohort"): KindMapping(None, False),
    ("kueue.x-k8s.io/v1beta2", "ClusterQueue"): KindMapping(None, False),
    ("kueue.x-k8s.io/v1beta2", "LocalQueue"): KindMapping(None, True),
    ("flink.apache.org/v1beta1", "FlinkDeployment"): KindMapping(None, True),
    ("flink.apache.org/v1beta1", "FlinkSessionJob"): KindMapping(None, True),
    ("monitoring.coreos.com/v1", "PodMonitor"): KindMapping(None, True),
    ("monitoring.coreos.com/v1", "PrometheusRule"): KindMapping(None, True),
}
"""Every (apiVersion, kind) the Pulumi program can apply. Add a line here when a builder emits a new kind."""

_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SNAKE: dict[str, str] = {}


def snake_case(name: str) -> str:
    """``globalDefault`` → ``global_default`` (the Python argument of a typed resource); memoised,
    as the same few top-level field names recur on every object."""
    snake = _SNAKE.get(name)
    if snake is None:
        snake = _SNAKE[name] = _CAMEL_BOUNDARY.sub("_", name).lower()
    return snake


_ACCEPTED: dict[type[pulumi.CustomResource], frozenset[str]] = {}
_NOT_FIELDS = frozenset({"__self__", "resource_name", "opts", "__props__", "api_version", "kind", "metadata"})


def _accepted_arguments(cls: type[pulumi.CustomResource]) -> frozenset[str]:
    """Top-level fields a typed resource class accepts (the keyword parameters of its generated
    ``_internal_init``, the one signature every pulumi_kubernetes resource class has); introspected
    once per class."""
    accepted = _ACCEPTED.get(cls)
    if accepted is None:
        init = cls._internal_init  # type: ignore[attr-defined]
        accepted = _ACCEPTED[cls] = frozenset(inspect.signature(init).parameters) - _NOT_FIELDS
    return accepted


def _describe(obj: K8sObject) -> str:
    return f"{obj.api_version} {obj.kind} {logical_name(obj)} (family {obj.family!r})"


def mapping_for(obj: K8sObject) -> KindMapping:
    """The mapping of an object; `UnsupportedObjectError` when its (apiVersion, kind) is unknown or its
    scope (namespace set or not) contradicts the kind."""
    mapping = KINDS.get((obj.api_version, obj.kind))
    if mapping is None:
        known = ", ".join(f"{a} {k}" for a, k in sorted(KINDS))
        raise UnsupportedObjectError(
            f"no Pulumi resource mapping for {_describe(obj)}; supported kinds: {known} "
            "(add the kind to components/accelplane/pulumi/kinds.py KINDS)"
        )
    if mapping.namespaced and not obj.namespace:
        raise UnsupportedObjectError(f"{_describe(obj)} is namespaced but has no metadata.namespace")
    if not mapping.namespaced and obj.namespace:
        raise UnsupportedObjectError(f"{_describe(obj)} is cluster-scoped but has metadata.namespace")
    return mapping


class _Recorder(pulumi.CustomResource):
    """Takes the place of ``pulumi.CustomResource`` under a typed class in a probe (`class_registration`):
    it keeps the type token and options the class passes to its base and registers nothing."""

    recorded: tuple[str, pulumi.ResourceOptions | None]

    def __init__(
        self,
        t: str,
        name: str,
        props: Any = None,
        opts: pulumi.ResourceOptions | None = None,
        dependency: bool = False,
    ) -> None:
        self.recorded = (t, opts)


@dataclass(frozen=True)
class ClassRegistration:
    """What a typed class adds to a registration: its type token and its options (the provider
    plugin's version and download URL, aliases of the kind's older API versions)."""

    token: str
    opts: pulumi.ResourceOptions


_CLASS_REGISTRATIONS: dict[tuple[str, str], ClassRegistration] = {}


def class_registration(obj: K8sObject, mapping: KindMapping, kwargs: dict[str, Any]) -> ClassRegistration:
    """The typed class's token and options for ``obj``'s kind, learnt once per (apiVersion, kind) by
    running the class's own constructor with ``kwargs`` over `_Recorder` (a subclass whose next
    base after the typed class is the recorder, so the class's ``super().__init__`` call lands there
    and nothing is registered)."""
    key = (obj.api_version, obj.kind)
    found = _CLASS_REGISTRATIONS.get(key)
    if found is None:
        cls: type[pulumi.CustomResource] = mapping.resource_class or k8s.apiextensions.CustomResource
        probe_type = type(f"_Probe{cls.__name__}", (cls, _Recorder), {})
        probe = probe_type(logical_name(obj), **kwargs)
        token, opts = probe.recorded
        found = _CLASS_REGISTRATIONS[key] = ClassRegistration(token, opts or pulumi.ResourceOptions())
    return found


@dataclass(frozen=True)
class Prepared:
    """Everything registering one object needs, derived from the object once (`prepare`)."""

    obj: K8sObject
    resource_class: type[pulumi.CustomResource] | None
    """The typed class, or None for ``apiextensions.CustomResource``."""
    name: str
    """The logical name (`logical_name`)."""
    kwargs: dict[str, Any]
    """Constructor keyword arguments besides name and opts: the manifest's fields (see `_resource_arguments`)."""
    retain_on_delete: bool | None
    """``retain_on_delete`` as the object asks for it (`_retain_on_delete`, see the module docstring)."""
    registration: ClassRegistration
    """The typed class's token and options (`class_registration`)."""

    def create(self, opts: pulumi.ResourceOptions) -> pulumi.CustomResource:
        """Register the resource with exactly ``opts`` (which must already carry ``retain_on_delete``)
        merged into the typed class's options, as the typed class would: the manifest as a plain
        ``pulumi.CustomResource`` of the class's type token (see the module docstring)."""
        merged = pulumi.ResourceOptions.merge(self.registration.opts, opts)
        return pulumi.CustomResource(self.registration.token, self.name, dict(self.obj.manifest), merged)

    def create_typed(self, opts: pulumi.ResourceOptions) -> pulumi.CustomResource:
        """Register the resource through its typed class (what `create` reproduces; the tests and
        the benchmark compare both)."""
        if self.resource_class is None:
            return k8s.apiextensions.CustomResource(self.name, opts=opts, **self.kwargs)
        resource: pulumi.CustomResource = self.resource_class(self.name, opts=opts, **self.kwargs)
        return resource


def prepare(obj: K8sObject) -> Prepared:
    """Map one object to what registering it needs; `UnsupportedObjectError` as `mapping_for` and
    `_resource_arguments` raise it."""
    mapping = mapping_for(obj)
    kwargs = _resource_arguments(obj, mapping)
    return Prepared(obj, mapping.resource_class, logical_name(obj), kwargs, _retain_on_delete(obj),
                    class_registration(obj, mapping, kwargs))


def prepare_all(objects: Iterable[K8sObject]) -> list[Prepared]:
    """`prepare` for every object, in order; raise one `UnsupportedObjectError` listing every object
    that cannot be applied (before any resource is registered, so an unsupported kind never leaves a
    half-built program)."""
    prepared: list[Prepared] = []
    problems: list[str] = []
    for obj in objects:
        try:
            prepared.append(prepare(obj))
        except UnsupportedObjectError as exc:
            problems.append(str(exc))
    if problems:
        raise UnsupportedObjectError("; ".join(problems))
    return prepared


def check_supported(objects: Iterable[K8sObject]) -> None:
    """Raise one `UnsupportedObjectError` listing every object that cannot be applied (`prepare_all`)."""
    prepare_all(objects)


def _resource_arguments(obj: K8sObject, mapping: KindMapping) -> dict[str, Any]:
    """Constructor keyword arguments (besides name and opts) carrying the manifest verbatim.

    The top-level dict is new; nested values are the manifest's own (not deep-copied): Pulumi only
    reads inputs to serialise them, and the parity test compares what was applied with the render
    tree written after every resource was applied."""
    if mapping.resource_class is None:
        body = {k: v for k, v in obj.manifest.items() if k not in ("apiVersion", "kind")}
        extra = sorted(set(body) - {"metadata", "spec"})
        if extra:
            raise UnsupportedObjectError(
                f"{_describe(obj)} has top-level fields {extra}; a CustomResource carries only metadata and spec"
            )
        return {"api_version": obj.api_version, "kind": obj.kind, **body}
    kwargs = {snake_case(k): v for k, v in obj.manifest.items() if k not in ("apiVersion", "kind")}
    unknown = sorted(set(kwargs) - _accepted_arguments(mapping.resource_class) - {"metadata"})
    if unknown:
        raise UnsupportedObjectError(
            f"{_describe(obj)} has top-level fields {unknown} that "
            f"{mapping.resource_class.__module__}.{mapping.resource_class.__name__} does not accept"
        )
    return kwargs


def _retain_on_delete(obj: K8sObject) -> bool | None:
    """True for immutable ConfigMaps and Namespaces (see the module docstring), else None (Pulumi's default)."""
    immutable_configmap = obj.kind == "ConfigMap" and obj.manifest.get("immutable") is True
    namespace = obj.api_version == "v1" and obj.kind == "Namespace"
    return True if immutable_configmap or namespace else None
