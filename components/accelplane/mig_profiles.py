"""MIG profiles per GPU model: which layouts a GPU can really be partitioned into.

``schemas/mig-profiles.yaml`` lists, per MIG-capable GPU model, the GPU instance profiles of NVIDIA's
MIG user guide with their compute and memory slices, the instances one GPU offers and where an
instance may be placed; ``schemas/gpu-names.yaml`` names each GPU's table (``mig:``). mig-parted
only checks a profile name's format; NVML refuses a layout that does not fit when the MIG manager
applies it on the node, long after accelplane rendered it. `mig_table` finds a pool's table and
`place` answers "can this layout be applied?" (docs/gpu-names.md, MIG profiles).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from accelplane.gpu_names import table
from accelplane.package_data import data_dir
from accelplane.yaml_io import load_yaml_text

TABLE_FILE = "mig-profiles.yaml"


@dataclass(frozen=True)
class MigProfile:
    """One GPU instance profile of a model (``1g.10gb``, ``1g.10gb+me``)."""

    name: str
    compute: int
    """Compute slices (the ``g`` number)."""
    memory: int
    """Memory slices an instance occupies from its start."""
    max_instances: int
    """Instances of this profile one GPU offers at most."""
    placements: tuple[int, ...]
    """Memory slices an instance may start at."""


@dataclass(frozen=True)
class MigModel:
    """The MIG geometry of one GPU model: its slices and profiles."""

    key: str
    compute_slices: int
    memory_slices: int
    source: str
    profiles: tuple[MigProfile, ...]

    def profile(self, name: str) -> MigProfile | None:
        """The model's profile of that exact name, or None."""
        return next((p for p in self.profiles if p.name == name), None)

    def names(self) -> tuple[str, ...]:
        """Every profile name of the model, in table order."""
        return tuple(p.name for p in self.profiles)


@cache
def models() -> dict[str, MigModel]:
    """Every model of ``schemas/mig-profiles.yaml``, by key."""
    path = data_dir("schemas") / TABLE_FILE
    doc = load_yaml_text(path.read_text(encoding="utf-8"), str(path))
    out: dict[str, MigModel] = {}
    for key, raw in doc["models"].items():
        profiles = tuple(
            MigProfile(str(p["name"]), int(p["compute"]), int(p["memory"]), int(p["max"]),
                       tuple(int(s) for s in p["placements"]))
            for p in raw["profiles"]
        )
        out[str(key)] = MigModel(str(key), int(raw["computeSlices"]), int(raw["memorySlices"]),
                                 str(raw["source"]), profiles)
    return out


@dataclass(frozen=True)
class MigCapability:
    """What the name table says about MIG on a GPU model: ``known`` False for a name the table
    does not know (nothing can be said), else ``tables`` are its MIG tables (one per naming of its
    profiles; empty: the GPU has no MIG)."""

    known: bool
    tables: tuple[MigModel, ...] = ()

    @property
    def model(self) -> MigModel | None:
        """The GPU's first (current) MIG table, or None."""
        return self.tables[0] if self.tables else None

    def table_for(self, profiles: Sequence[str]) -> MigModel | None:
        """The table holding the most of ``profiles`` (all of them where one does; the first
        such table on a tie), or None for a GPU without MIG."""
        if not self.tables:
            return None
        return max(self.tables, key=lambda t: sum(t.profile(p) is not None for p in profiles))


def mig_table(vendor: str, gpu_model: str | None) -> MigCapability:
    """The MIG capability of the GPU the driver names ``gpu_model`` (exact name-table rows only:
    a shorthand is already an error of its own, AP3502)."""
    if gpu_model is None:
        return MigCapability(False)
    row = next((r for r in table() if r.vendor == vendor and r.name == gpu_model), None)
    if row is None:
        return MigCapability(False)
    return MigCapability(True, tuple(models()[k] for k in row.mig))


def place(model: MigModel, layout: Sequence[tuple[str, int]]) -> tuple[tuple[str, int], ...] | None:
    """One placement of every instance of ``layout`` (profile, count) on a GPU of ``model``:
    ``(profile, start slice)`` per instance, or None when the instances cannot all be placed
    without overlapping. Every profile must be the model's. The largest instances are placed first
    and every choice is backtracked, so None means no placement exists (at most 8 slices)."""
    wanted = sorted(
        (p for name, n in layout for p in [model.profile(name)] if p is not None for _ in range(n)),
        key=lambda p: (-p.memory, -p.compute, p.name),
    )
    used = [False] * model.memory_slices
    chosen: list[tuple[str, int]] = []

    def fits(p: MigProfile, start: int) -> bool:
        end = start + p.memory
        return end <= model.memory_slices and not any(used[start:end])

    def assign(i: int, min_start: int) -> bool:
        if i == len(wanted):
            return True
        p = wanted[i]
        # instances of one profile are interchangeable: place each after the previous one
        for start in p.placements:
            if start < min_start or not fits(p, start):
                continue
            used[start : start + p.memory] = [True] * p.memory
            chosen.append((p.name, start))
            same_next = i + 1 < len(wanted) and wanted[i + 1].name == p.name
            if assign(i + 1, start + 1 if same_next else 0):
                return True
            chosen.pop()
            used[start : start + p.memory] = [False] * p.memory
        return False

    return tuple(chosen) if assign(0, 0) else None
