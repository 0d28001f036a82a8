"""The component every artifact family gets: one typed resource per object, children of the component.

A family (``K8sObject.family`` / the top directory of its files) that has no specialised component
is applied by `FamilyComponent` itself, so families that land later need no change here. The type
token is ``accelplane:<family_module>:<FamilyType>`` for every family, generic or specialised (see
`graph.family_token`), so giving a family a specialised class later changes no URN.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

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
    digests: Mapping[str, str] | None = None
    """sha256 of the files by path when the caller has them already (`GpuPlatform`: its ``files``
    output); None: the component hashes its files itself."""


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

    def __init__(self, name: str, args: FamilyArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        """Register the component; `GpuPlatform` adds its objects (`add`) and completes it."""
        module, type_name = family_token(args.family)
        super().__init__(f"accelplane:{module}:{type_name}", name, None, opts)
        self.family = args.family
        self.objects = args.objects
        self.file_artifacts = args.files
        self.resources = {}
        self._members = {o.key: o for o in args.objects}
        # plain values: Pulumi serialises them exactly like Outputs of the same values, without an
        # Output per list item and dict entry
        self.object_names: list[str] = sorted(logical_name(o) for o in args.objects)
        known = args.digests or {}
        self.file_digests: dict[str, str] = {f.path: known.get(f.path) or sha256(f.text) for f in args.files}

    def add(
        self,
        obj: K8sObject,
        depends_on: Sequence[pulumi.Resource] = (),
        prepared: kinds.Prepared | None = None,
        *,
        name: str | None = None,
        aliases: Sequence[pulumi.Alias] = (),
    ) -> pulumi.CustomResource:
        """Register one of this family's objects as a child resource that depends on ``depends_on``
        and return it. ``prepared`` is `kinds.prepare(obj)` when the caller has it already; ``name``
        the resource's name (default: its logical name), ``aliases`` its earlier identities. The
        object's own options come from `accelplane.pulumi.object_options` (one table for all)."""
        member = self._members.get(obj.key)
        if member is not obj and member != obj:
            raise PlanError(
                f"{logical_name(obj)} (family {obj.family!r}) is not an object of family {self.family!r}"
            )
        if prepared is None or prepared.obj is not obj:
            prepared = kinds.prepare(obj)
        opts = pulumi.ResourceOptions(
            parent=self,
            depends_on=list(depends_on),
            aliases=list(aliases) or None,
            **prepared.options.resource_options(),
        )
        resource = prepared.create(name or prepared.name, opts)
        self.resources[obj.key] = resource
        return resource

    def share(self, obj: K8sObject, resource: pulumi.CustomResource) -> None:
        """Record ``resource``, registered by another platform of the same program for the same
        Kubernetes object (`accelplane.pulumi.ownership`), as this family's resource for ``obj``."""
        self.resources[obj.key] = resource

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
