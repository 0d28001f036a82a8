"""``accelplane:index:GpuPlatform`` — everything one cluster spec produces, as one component.

`GpuPlatform.create` makes one. It calls the same builders as `accelplane render`
(`accelplane.pipeline.render_spec`), then gives each
artifact family a component (a specialised one from `FAMILY_COMPONENTS`, else the generic
`FamilyComponent`) and registers every object as a child of its family's component, in one global
dependency order: each object gets ``depends_on`` for the objects it references (a PodGroup for its
Queue and PriorityClass), whichever family built them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pulumi

from accelplane.artifacts import Bundle, FileArtifact, K8sObject
from accelplane.digests import sha256
from accelplane.model import Spec
from accelplane.pulumi import kinds
from accelplane.pulumi.device_plugins import DevicePlugins
from accelplane.pulumi.family import FamilyArgs, FamilyComponent
from accelplane.pulumi.flink import Flink
from accelplane.pulumi.node_image import Discovery, NodeImage
from accelplane.pulumi.planning import (
    ObjectKey,
    creation_order,
    dependencies,
    families,
    file_family,
)
from accelplane.pulumi.scheduling import Scheduling
from accelplane.render import bundle_files

FAMILY_COMPONENTS: dict[str, type[FamilyComponent]] = {
    "scheduling": Scheduling,
    "device-plugins": DevicePlugins,
    "flink": Flink,
    "discovery": Discovery,
    "node-image": NodeImage,
}
"""Specialised components (extra outputs). Any other family uses `FamilyComponent` unchanged."""


@dataclass(frozen=True)
class GpuPlatformArgs:
    """Inputs of `GpuPlatform`: the validated typed model and the bundle built from it
    (`accelplane.pipeline.render_spec`, exactly what `accelplane render` writes; tests may pass
    another)."""

    spec: Spec
    bundle: Bundle


def file_entries(
    bundle: Bundle, files: Mapping[str, tuple[str, int]] | None = None
) -> dict[str, dict[str, str]]:
    """Every file `accelplane render` writes for ``bundle`` → ``{"sha256", "mode", "family"}``.

    ``files`` is `bundle_files(bundle)` if the caller has it (serialising the bundle is the costly
    part), else it is computed here."""
    family = {f"kubernetes/{o.filename}": o.family for o in bundle.objects}
    family.update({f.path: file_family(f) for f in bundle.files})
    return {
        path: {"sha256": sha256(text), "mode": f"{mode:04o}", "family": family[path]}
        for path, (text, mode) in (bundle_files(bundle) if files is None else files).items()
    }


class GpuPlatform(pulumi.ComponentResource):
    """One GPU Flink platform (one cluster spec).

    Outputs (registered, `outputs`): ``cluster``, ``queueNames``, ``priorityClassNames``,
    ``podGroupNames`` and ``objects`` (logical names of every Kubernetes resource).

    Attributes for the program's stack outputs, not registered as the component's own: `files`
    (every file `accelplane render` writes → sha256/mode/family) and `file_contents` (text of the
    files no Kubernetes API receives: YARN XML, Flink configuration, node provisioning, node image
    context). The program exports them as the stack's ``files`` and ``fileContents``; registered
    here as well, the state would hold every file's text twice and Pulumi would serialise both
    copies on every run (the largest outputs by far: about 7 % of the program's registration time
    at 1 unit).
    """

    bundle: Bundle
    families: dict[str, FamilyComponent]
    resources: dict[ObjectKey, pulumi.CustomResource]
    _name: str
    _registered: bool
    _prepared_list: list[kinds.Prepared]
    rendered_files: dict[str, tuple[str, int]]
    """`bundle_files(bundle)`: every file `accelplane render` writes, serialised once for ``files``
    (and for the program's render tree)."""

    @classmethod
    def create(
        cls, name: str, args: GpuPlatformArgs, opts: pulumi.ResourceOptions | None = None
    ) -> GpuPlatform:
        """The platform with every child registered: how to make one.

        Everything is registered outside any constructor: the platform here (`_register`, the
        constructor's body), its family components through `FamilyComponent.create`, then the
        objects. Pulumi captures the call stack of every resource registered below a third
        ``__init__`` frame (``pulumi.runtime.resource._get_stack_trace``: the resource's,
        ``CustomResource``'s or ``ComponentResource``'s, and the caller's), one file URI per frame
        (each frame's source line looked up too), about a fifth of registering these manifests with
        a program's usual depth. Those traces would name this module's lines for every resource
        alike; the spec, not the program, says where a resource comes from.
        """
        platform = cls.__new__(cls)
        platform._register(name, args, opts)
        platform.register_children()
        return platform

    def __init__(self, name: str, args: GpuPlatformArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        """Register the component and compute its outputs; `register_children` registers the rest
        (`create` does both, without a captured call stack)."""
        self._register(name, args, opts)

    def _register(self, name: str, args: GpuPlatformArgs, opts: pulumi.ResourceOptions | None) -> None:
        """Register the component and compute its outputs (the constructor's body)."""
        pulumi.ComponentResource.__init__(self, "accelplane:index:GpuPlatform", name, None, opts)
        self._name = name
        self._registered = False
        self.bundle = bundle = args.bundle
        self._prepared_list = prepared_list = kinds.prepare_all(bundle.objects)
        self.families = {}
        self.resources = {}
        names: dict[str, list[str]] = {}
        for o in bundle.objects:
            names.setdefault(o.kind, []).append(f"{o.namespace}/{o.name}" if o.namespace else o.name)
        for found in names.values():
            found.sort()

        # plain values: Pulumi serialises them exactly like Outputs of the same values, without an
        # Output per list item and dict entry
        self.cluster: str = args.spec.name
        self.rendered_files = bundle_files(bundle)
        self.files: dict[str, dict[str, str]] = file_entries(bundle, self.rendered_files)
        self.file_contents: dict[str, str] = {f.path: f.text for f in bundle.files}
        outputs: dict[str, Any] = {
            "cluster": self.cluster,
            "queueNames": names.get("Queue", []),
            "priorityClassNames": names.get("PriorityClass", []),
            "podGroupNames": names.get("PodGroup", []),
            "objects": sorted(p.name for p in prepared_list),
        }
        self.outputs = outputs

    def register_children(self) -> None:
        """Register a component per family and every object as a child of its family's component,
        in one global dependency order (see `create`), then the platform's outputs."""
        if self._registered:
            raise RuntimeError(f"{self._name}: children already registered")
        self._registered = True
        bundle = self.bundle
        prepared = {p.obj.key: p for p in self._prepared_list}
        deps = dependencies(bundle.objects)
        order = creation_order(bundle.objects, deps)
        members: dict[str, list[K8sObject]] = {}
        for obj in bundle.objects:
            members.setdefault(obj.family, []).append(obj)
        files: dict[str, list[FileArtifact]] = {}
        for f in bundle.files:
            files.setdefault(file_family(f), []).append(f)
        for family in families(bundle):
            component_class = FAMILY_COMPONENTS.get(family, FamilyComponent)
            family_args = FamilyArgs(
                family=family, objects=tuple(members.get(family, ())), files=tuple(files.get(family, ()))
            )
            self.families[family] = component_class.create(
                f"{self._name}-{family}", family_args, pulumi.ResourceOptions(parent=self)
            )
        resources = self.resources
        for obj in order:
            key = obj.key
            depends_on = [resources[k] for k in deps[key]]
            resources[key] = self.families[obj.family].add(obj, depends_on, prepared[key])
        for component in self.families.values():
            component.complete()
        self.register_outputs(self.outputs)
