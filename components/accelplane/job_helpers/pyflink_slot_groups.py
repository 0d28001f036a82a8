"""accelplane job helper for PyFlink (Flink 1.20): Flink ``SlotSharingGroup``s from the rendered
``slot-groups.json``.

Standard library only plus ``pyflink`` (imported when a group is built), Python >= 3.8: ship this one
file with the job (``env.add_python_file`` / ``-pyfs``) or install accelplane beside it.

    from pyflink_slot_groups import load   # or: from accelplane.job_helpers.pyflink_slot_groups import load
    groups = load("/opt/flink/accelplane/slot-groups.json")
    groups.register(env)                   # every group, "default" included
    stream.map(embed).slot_sharing_group(groups.get("embed"))

``register`` matters: operators that name no group run in ``default``; registered with its own
resources it never takes GPU capacity (unregistered, Flink gives each default slot TaskManager
total ÷ ``taskmanager.numberOfTaskSlots``, GPUs included). Device assignment inside a TaskManager
(a device per GPU subtask) is the Java helper's ``GpuDevices``; see docs/gpu-slots.md.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

FORMAT = "accelplane.io/slot-groups/v1"
DEFAULT_GROUP = "default"


@dataclass(frozen=True)
class GroupSpec:
    """One declared group, as the file gives it."""

    name: str
    slots: int
    cpu_cores: float
    task_heap_memory_mb: int
    managed_memory_mb: int = 0
    external_resources: dict[str, float] = field(default_factory=dict)
    gpu_resource: str | None = None
    gpu_amount: float = 0.0
    gpu_model: str | None = None


class SlotGroups:
    """The slot groups of one accelplane-rendered Flink cluster."""

    def __init__(self, cluster: str, groups: list[GroupSpec]) -> None:
        self.cluster = cluster
        self._groups = {g.name: g for g in groups}

    def names(self) -> list[str]:
        """Declared group names, in file order."""
        return list(self._groups)

    def spec(self, name: str) -> GroupSpec:
        """The declared group ``name``; an unknown name is an error listing the declared ones."""
        try:
            return self._groups[name]
        except KeyError:
            raise KeyError(
                f"slot group {name!r} is not declared for Flink cluster {self.cluster} "
                f"(declared: {', '.join(self._groups)}); add it to the spec's slotGroups"
            ) from None

    def get(self, name: str) -> Any:
        """A ``pyflink.datastream.SlotSharingGroup`` for the declared group ``name``."""
        from pyflink.datastream.slot_sharing_group import SlotSharingGroup

        g = self.spec(name)
        builder = (
            SlotSharingGroup.builder(g.name)
            .set_cpu_cores(g.cpu_cores)
            .set_task_heap_memory_mb(g.task_heap_memory_mb)
        )
        if g.managed_memory_mb:
            builder = builder.set_managed_memory_mb(g.managed_memory_mb)
        for resource, amount in sorted(g.external_resources.items()):
            builder = builder.set_external_resource(resource, amount)
        return builder.build()

    def register(self, env: Any) -> Any:
        """Register every group with a ``StreamExecutionEnvironment``; returns the environment."""
        for name in self._groups:
            env.register_slot_sharing_group(self.get(name))
        return env

    def gpu_resource(self, name: str) -> str | None:
        """Flink external resource a GPU group asks for (None without GPUs)."""
        return self.spec(name).gpu_resource

    def slots(self, name: str) -> int:
        """Slots the platform sized the cluster for (use it as the group's parallelism)."""
        return self.spec(name).slots

    def gpu_amount(self, name: str) -> float:
        """GPUs per slot of a group (0 without GPUs)."""
        return self.spec(name).gpu_amount


def parse(text: str, source: str = "slot-groups.json") -> SlotGroups:
    """Parse the text of a ``slot-groups.json``; ``source`` names it in errors (ValueError)."""
    doc = json.loads(text)
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ValueError(f"{source}: not an accelplane slot group file (format {FORMAT})")
    groups = []
    for g in doc.get("groups", []):
        groups.append(
            GroupSpec(
                name=str(g["name"]),
                slots=int(g.get("slots", 0)),
                cpu_cores=float(g["cpuCores"]),
                task_heap_memory_mb=int(g["taskHeapMemoryMB"]),
                managed_memory_mb=int(g.get("managedMemoryMB", 0)),
                external_resources={str(k): float(v) for k, v in g.get("externalResources", {}).items()},
                gpu_resource=g.get("gpuResource"),
                gpu_amount=float(g.get("gpuAmount", 0.0)),
                gpu_model=g.get("gpuModel"),
            )
        )
    if DEFAULT_GROUP not in {g.name for g in groups}:
        raise ValueError(f"{source}: no 'default' group (accelplane always declares one)")
    return SlotGroups(str(doc.get("cluster", "")), groups)


def load(path: str) -> SlotGroups:
    """Read a rendered ``slot-groups.json``."""
    with open(path, encoding="utf-8") as f:
        return parse(f.read(), str(path))
