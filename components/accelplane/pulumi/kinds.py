"""Generic mapping of a plain manifest to ONE typed pulumi_kubernetes resource.

The mapping is keyed by ``(apiVersion, kind)``. Core kinds use their typed class (the manifest's
top-level fields become the class's snake_case arguments; nested dicts are passed verbatim, which
is the camelCase wire format the provider expects); kinds served by a CRD (Volcano Queue/PodGroup,
Flink operator FlinkDeployment/FlinkSessionJob) use ``apiextensions.CustomResource``. A kind that is
not in the table is an error naming the object and the table, never a silent skip.

Registration (`Prepared.create`) goes through the public typed classes only (the class's own
constructor, never its generated internals), so a user's transformations see what they would see
for a resource they wrote themselves (a ``k8s.core.v1.ConfigMap`` with snake_case top-level
arguments) and any pulumi-kubernetes 4.x release that has the classes works. Each resource gets its
own copy of the manifest: an in-place edit by a user's transformation changes that resource, never
the bundle `accelplane render` writes and the ``files`` digests describe.

Resource options derived from the object itself (``retain_on_delete`` of Namespaces and immutable
ConfigMaps, …) come from `accelplane.pulumi.object_options`, the one table of per-object options.
"""

from __future__ import annotations

import functools
import inspect
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from accelplane.artifacts import K8sObject
from accelplane.pulumi.object_options import ObjectOptions, object_options
from accelplane.pulumi.planning import PlanError, logical_name


class UnsupportedObjectError(PlanError):
    """A builder produced a Kubernetes object the Pulumi layer has no resource mapping for."""


@dataclass(frozen=True)
class KindMapping:
    """How one (apiVersion, kind) is registered: typed class (None → CustomResource) and scope."""

    class_path: str | None
    """The typed class as an attribute path below ``pulumi_kubernetes`` (``"core.v1.ConfigMap"``),
    or None for ``apiextensions.CustomResource``."""
    namespaced: bool

    @property
    def resource_class(self) -> type[pulumi.CustomResource] | None:
        """The typed class (`resolve_class`), or None for ``apiextensions.CustomResource``."""
        return None if self.class_path is None else resolve_class(self.class_path)


@functools.cache
def resolve_class(class_path: str) -> type[pulumi.CustomResource]:
    """The pulumi_kubernetes class at ``class_path`` (``"resource.v1.DeviceClass"``).

    Resolved on first use, not when this module is imported: pulumi_kubernetes imports each API
    group's module (its classes and its large input and output types) when it is first reached, so
    a program imports only the groups its stack uses. The three ``resource.k8s.io`` versions alone
    cost about 0.14 s and 25,000 objects the garbage collector then walks on every full collection
    (docs/benchmarks.md, issue 40)."""
    found: Any = k8s
    for part in class_path.split("."):
        found = getattr(found, part)
    resource_class: type[pulumi.CustomResource] = found
    return resource_class


KINDS: dict[tuple[str, str], KindMapping] = {
    ("v1", "ConfigMap"): KindMapping("core.v1.ConfigMap", True),
    ("v1", "Namespace"): KindMapping("core.v1.Namespace", False),
    ("v1", "ServiceAccount"): KindMapping("core.v1.ServiceAccount", True),
    ("apps/v1", "DaemonSet"): KindMapping("apps.v1.DaemonSet", True),
    ("apps/v1", "Deployment"): KindMapping("apps.v1.Deployment", True),
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): KindMapping("rbac.v1.ClusterRole", False),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): KindMapping("rbac.v1.ClusterRoleBinding", False),
    ("rbac.authorization.k8s.io/v1", "Role"): KindMapping("rbac.v1.Role", True),
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): KindMapping("rbac.v1.RoleBinding", True),
    ("scheduling.k8s.io/v1", "PriorityClass"): KindMapping("scheduling.v1.PriorityClass", False),
    ("resource.k8s.io/v1beta1", "DeviceClass"): KindMapping("resource.v1beta1.DeviceClass", False),
    ("resource.k8s.io/v1beta2", "DeviceClass"): KindMapping("resource.v1beta2.DeviceClass", False),
    ("resource.k8s.io/v1", "DeviceClass"): KindMapping("resource.v1.DeviceClass", False),
    ("resource.k8s.io/v1beta1", "ResourceClaimTemplate"): KindMapping("resource.v1beta1.ResourceClaimTemplate", True),
    ("resource.k8s.io/v1beta2", "ResourceClaimTemplate"): KindMapping("resource.v1beta2.ResourceClaimTemplate", True),
    ("resource.k8s.io/v1", "ResourceClaimTemplate"): KindMapping("resource.v1.ResourceClaimTemplate", True),
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
_NOT_FIELDS = frozenset({"self", "__self__", "api_version", "kind", "metadata"})


def _accepted_arguments(cls: type[pulumi.CustomResource]) -> frozenset[str]:
    """Top-level fields a typed resource class accepts: the keyword parameters of its public
    ``<Kind>InitArgs`` class (``ConfigMap`` → ``ConfigMapInitArgs``, exported beside it), introspected once per class."""
    accepted = _ACCEPTED.get(cls)
    if accepted is None:
        args_class = getattr(sys.modules[cls.__module__], f"{cls.__name__}InitArgs")
        accepted = _ACCEPTED[cls] = frozenset(inspect.signature(args_class.__init__).parameters) - _NOT_FIELDS
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


def copy_manifest(value: Any) -> Any:
    """A copy of a manifest's nested dicts and lists (strings, numbers and booleans are shared):
    each resource gets its own, so nothing Pulumi or a user's transformation does to a resource's
    inputs reaches the bundle."""
    if isinstance(value, dict):
        return {k: copy_manifest(v) for k, v in value.items()}
    if isinstance(value, list):
        return [copy_manifest(v) for v in value]
    return value


@dataclass(frozen=True)
class Prepared:
    """Everything registering one object needs, derived from the object once (`prepare`)."""

    obj: K8sObject
    resource_class: type[pulumi.CustomResource] | None
    """The typed class, or None for ``apiextensions.CustomResource``."""
    name: str
    """The logical name (`logical_name`), without the platform's prefix."""
    kwargs: dict[str, Any]
    """Constructor keyword arguments besides name and opts: the manifest's fields (see `_resource_arguments`)."""
    options: ObjectOptions
    """The object's own resource options (`accelplane.pulumi.object_options.object_options`)."""

    @property
    def type_token(self) -> str:
        """The Pulumi type token the resource is registered with (``kubernetes:<apiVersion>:<kind>``,
        what both the typed classes and ``apiextensions.CustomResource`` use)."""
        return f"kubernetes:{self.obj.api_version}:{self.obj.kind}"

    def create(self, name: str, opts: pulumi.ResourceOptions) -> pulumi.CustomResource:
        """Register the resource as ``name`` through its public typed class with ``opts`` (which
        must already carry `options`), on a fresh copy of the manifest (`copy_manifest`)."""
        kwargs = copy_manifest(self.kwargs)
        if self.resource_class is None:
            return k8s.apiextensions.CustomResource(name, opts=opts, **kwargs)
        resource: pulumi.CustomResource = self.resource_class(name, opts=opts, **kwargs)
        return resource


def prepare(obj: K8sObject) -> Prepared:
    """Map one object to what registering it needs; `UnsupportedObjectError` as `mapping_for` and
    `_resource_arguments` raise it."""
    mapping = mapping_for(obj)
    kwargs = _resource_arguments(obj, mapping)
    return Prepared(obj, mapping.resource_class, logical_name(obj), kwargs, object_options(obj))


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

    Nested values are the manifest's own here; `Prepared.create` copies them for each resource."""
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
