"""``accelplane:index:GpuPlatform`` — everything one cluster spec produces, as one component.

It calls the same builders as `accelplane render` (`accelplane.pipeline.render_spec`), then gives each
artifact family a component (a specialised one from `FAMILY_COMPONENTS`, else the generic
`FamilyComponent`) and registers every object as a child of its family's component, in one global
dependency order: each object gets ``depends_on`` for the objects it references (a PodGroup for its
Queue and PriorityClass), whichever family built them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi

from accelplane.artifacts import Bundle
from accelplane.model import Spec
from accelplane.pulumi import kube
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
    logical_name,
    sha256,
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


def file_entries(bundle: Bundle) -> dict[str, dict[str, str]]:
    """Every file `accelplane render` writes for ``bundle`` → ``{"sha256", "mode", "family"}``."""
    family = {f"kubernetes/{o.filename}": o.family for o in bundle.objects}
    family.update({f.path: file_family(f) for f in bundle.files})
    return {
        path: {"sha256": sha256(text), "mode": f"{mode:04o}", "family": family[path]}
        for path, (text, mode) in bundle_files(bundle).items()
    }


class GpuPlatform(pulumi.ComponentResource):
    """One GPU Flink platform (one cluster spec).

    Outputs: ``cluster``, ``queueNames``, ``priorityClassNames``, ``podGroupNames``, ``objects``
    (logical names of every Kubernetes resource), ``files`` (every file `accelplane render` writes →
    sha256/mode/family) and ``fileContents`` (text of the files no Kubernetes API receives: YARN XML,
    Flink configuration, node provisioning, node image context).
    """

    bundle: Bundle
    families: dict[str, FamilyComponent]
    resources: dict[ObjectKey, pulumi.CustomResource]

    def __init__(self, name: str, args: GpuPlatformArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("accelplane:index:GpuPlatform", name, None, opts)
        bundle = args.bundle
        kube.check_supported(bundle.objects)
        order = creation_order(bundle.objects)
        deps = dependencies(bundle.objects)
        self.bundle = bundle
        self.families = {}
        self.resources = {}
        for family in families(bundle):
            component_class = FAMILY_COMPONENTS.get(family, FamilyComponent)
            family_args = FamilyArgs(
                family=family,
                objects=tuple(o for o in bundle.objects if o.family == family),
                files=tuple(f for f in bundle.files if file_family(f) == family),
            )
            self.families[family] = component_class(
                f"{name}-{family}", family_args, pulumi.ResourceOptions(parent=self)
            )
        for obj in order:
            depends_on = [self.resources[k] for k in deps[obj.key]]
            self.resources[obj.key] = self.families[obj.family].add(obj, depends_on)
        for component in self.families.values():
            component.complete()

        def names(kind: str) -> list[str]:
            return sorted(
                f"{o.namespace}/{o.name}" if o.namespace else o.name for o in bundle.objects if o.kind == kind
            )

        self.cluster = pulumi.Output.from_input(args.spec.name)
        self.files = pulumi.Output.from_input(file_entries(bundle))
        self.file_contents = pulumi.Output.from_input({f.path: f.text for f in bundle.files})
        outputs: dict[str, Any] = {
            "cluster": self.cluster,
            "queueNames": names("Queue"),
            "priorityClassNames": names("PriorityClass"),
            "podGroupNames": names("PodGroup"),
            "objects": sorted(logical_name(o) for o in bundle.objects),
            "files": self.files,
            "fileContents": self.file_contents,
        }
        self.outputs = outputs
        self.register_outputs(outputs)
