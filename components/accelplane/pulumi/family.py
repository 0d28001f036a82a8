"""The component every artifact family gets: one typed resource per object, children of the component.

A family (``K8sObject.family`` / the top directory of its files) that has no specialised component
is applied by `FamilyComponent` itself, so families that land later need no change here. The type
token is ``accelplane:<family_module>:<FamilyType>`` for every family, generic or specialised (see
`graph.family_token`), so giving a family a specialised class later changes no URN.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Self

import pulumi

from accelplane.artifacts import FileArtifact, K8sObject
from accelplane.digests import sha256
from accelplane.pulumi import kinds
from accelplane.pulumi.planning import ObjectKey, PlanError, family_token, logical_name


@dataclass(frozen=True)
class FamilyArgs:
    """Inputs of a family component: the family's name, its Kubernetes objects and its files."""

    family: str
    objects: tuple[K8sObject, ...] = ()
    files: tuple[FileArtifact, ...] = ()


class FamilyComponent(pulumi.ComponentResource):
    """Applies one family's Kubernetes objects and records its files' digests.

    Objects of different families may reference each other in any direction (a FlinkDeployment
    mounts the discovery family's ConfigMap, which lives in a Namespace the Flink family creates), so
    the owner of the whole bundle (`GpuPlatform`) registers objects in one global dependency order:
    it calls `add` for each object — the resource is created here, as a child of this component —
    and `complete` once every object is added.

    Outputs: ``objects`` (logical names of the resources), ``files`` (path → sha256 of the family's
    files that no Kubernetes API receives), plus whatever a subclass adds in `extra_outputs`.
    """

    resources: dict[ObjectKey, pulumi.CustomResource]

    @classmethod
    def create(cls, name: str, args: FamilyArgs, opts: pulumi.ResourceOptions | None = None) -> Self:
        """The component, registered outside any constructor: how `GpuPlatform` makes its families.

        Pulumi captures the call stack of a resource registered below a third ``__init__`` frame
        (`accelplane.pulumi.platform.GpuPlatform.create` says why that is worth avoiding), and a
        component's own constructor is that frame. The component is the same either way; only the
        source position the engine records differs (none instead of the platform's line)."""
        component = cls.__new__(cls)
        component._register(name, args, opts)
        return component

    def __init__(self, name: str, args: FamilyArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        """Register the component (`create` does the same without a captured call stack)."""
        self._register(name, args, opts)

    def _register(self, name: str, args: FamilyArgs, opts: pulumi.ResourceOptions | None) -> None:
        """Register the component and keep what `add` and `complete` need (the constructor's body)."""
        module, type_name = family_token(args.family)
        pulumi.ComponentResource.__init__(self, f"accelplane:{module}:{type_name}", name, None, opts)
        self.family = args.family
        self.objects = args.objects
        self.file_artifacts = args.files
        self.resources = {}
        self._members = {o.key: o for o in args.objects}
        # plain values: Pulumi serialises them exactly like Outputs of the same values, without an
        # Output per list item and dict entry
        self.object_names: list[str] = sorted(logical_name(o) for o in args.objects)
        self.file_digests: dict[str, str] = {f.path: sha256(f.text) for f in args.files}

    def add(
        self, obj: K8sObject, depends_on: Sequence[pulumi.Resource] = (), prepared: kinds.Prepared | None = None
    ) -> pulumi.CustomResource:
        """Register one of this family's objects as a child resource that depends on ``depends_on``
        and return it. ``prepared`` is `kinds.prepare(obj)` when the caller has it already."""
        member = self._members.get(obj.key)
        if member is not obj and member != obj:
            raise PlanError(
                f"{logical_name(obj)} (family {obj.family!r}) is not an object of family {self.family!r}"
            )
        if prepared is None or prepared.obj is not obj:
            prepared = kinds.prepare(obj)
        opts = pulumi.ResourceOptions(parent=self, depends_on=list(depends_on), **prepared.lifecycle_options())
        resource = prepared.create(opts)
        self.resources[obj.key] = resource
        return resource

    def complete(self) -> None:
        """Register the component's outputs (after every object was added)."""
        missing = sorted(logical_name(o) for o in self.objects if o.key not in self.resources)
        if missing:
            raise PlanError(f"family {self.family!r} completed before its objects {missing} were added")
        self.register_outputs(
            {"objects": self.object_names, "files": self.file_digests, **self.extra_outputs()}
        )

    def extra_outputs(self) -> dict[str, Any]:
        """Family-specific outputs (none for the generic component)."""
        return {}

    def names_of(self, kind: str) -> list[str]:
        """Sorted ``name`` (cluster-scoped) or ``namespace/name`` of this family's objects of ``kind``."""
        return sorted(
            f"{o.namespace}/{o.name}" if o.namespace else o.name for o in self.objects if o.kind == kind
        )
