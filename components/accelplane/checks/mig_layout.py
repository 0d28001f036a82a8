"""MIG layouts the GPU model can really be partitioned into (docs/gpu-names.md, MIG profiles).

A pool's ``gpu.mig.devices`` becomes the MIG manager's mig-parted layout, the device plugin's
``nvidia.com/mig-<profile>`` resources and the DRA DeviceClasses' ``profile``. mig-parted checks
only a profile name's format; the GPU's driver (NVML) refuses the rest when the MIG manager
applies the layout on the node, and then no MIG device exists at all. So for a pool whose
``gpu.model`` the name table knows (``accelplane.mig_profiles``), each of these is an error:

* a GPU without MIG asked to run MIG (AP3088);
* a profile the model does not have (``1g.5gb`` is an A100-40GB profile, not an H100 80GB one;
  AP3085);
* more instances of a profile than one GPU offers (two ``+me`` instances; AP3086);
* instances that do not fit the GPU's slices together (``{3g.40gb: 2, 1g.10gb: 1}`` needs 9 of
  an H100's 8 memory slices; AP3087).

A model the table does not know is checked by the device plugin check's generic rule only (at most
7 compute slices, `accelplane.checks.device_plugins`). MIG is Kubernetes-only: on YARN, standalone
hosts and AMD pools the platform's own check refuses it (one finding).
"""

from __future__ import annotations

from collections.abc import Iterator

from accelplane.errors import PathTuple, Problem
from accelplane.findings import ERROR, declare
from accelplane.mig_profiles import MigModel, mig_table, place
from accelplane.model import NodePool, Spec

MIG_PROFILE_NOT_OF_MODEL = declare(
    "AP3085", ERROR, "a MIG profile is not one the pool's GPU model offers",
    fix="use a profile of the model (the message lists them; docs/gpu-names.md, MIG profiles)",
)
MIG_INSTANCES_OVER_MAX = declare(
    "AP3086", ERROR, "more instances of a MIG profile than one GPU of the model offers",
    fix="lower the profile's count to the maximum the message names",
)
MIG_LAYOUT_DOES_NOT_FIT = declare(
    "AP3087", ERROR, "the MIG instances do not fit one GPU's compute and memory slices together",
    fix="drop or shrink instances until they fit (the message names the GPU's slices)",
)
MIG_ON_GPU_WITHOUT_MIG = declare(
    "AP3088", ERROR, "MIG is configured on a GPU model that has no MIG",
    fix="set gpu.mig.strategy none (and remove mig.devices), or use a MIG-capable GPU",
)


def _layout(devices: tuple[tuple[str, int], ...]) -> str:
    return "{" + ", ".join(f"{p}: {n}" for p, n in devices) + "}"


def _model_problems(path: PathTuple, model_name: str, table: MigModel,
                    devices: tuple[tuple[str, int], ...]) -> Iterator[Problem]:
    """The findings of one pool's layout against its model's MIG table (one root cause, one
    finding: the fit is judged only when every profile is the model's and within its maximum)."""
    unknown = [p for p, _ in devices if table.profile(p) is None]
    for name in unknown:
        yield Problem(
            (*path, name),
            f"MIG profile {name!r} is not one a {model_name!r} offers (NVML refuses it when the MIG manager "
            f"applies the layout, and the node gets no MIG device); its profiles: {', '.join(table.names())} "
            f"({table.source})", MIG_PROFILE_NOT_OF_MODEL,
        )
    over = False
    for name, count in devices:
        found = table.profile(name)
        if found is not None and count > found.max_instances:
            over = True
            yield Problem(
                (*path, name),
                f"{count} instances of MIG profile {name!r}, but one {model_name!r} offers at most "
                f"{found.max_instances} ({table.source}); lower the count to {found.max_instances}",
                MIG_INSTANCES_OVER_MAX,
            )
    if unknown or over or place(table, devices) is not None:
        return
    profiles = {p.name: p for p in table.profiles}
    compute = sum(profiles[p].compute * n for p, n in devices)
    memory = sum(profiles[p].memory * n for p, n in devices)
    yield Problem(
        path,
        f"the MIG layout {_layout(devices)} does not fit one {model_name!r}: it needs {compute} of the GPU's "
        f"{table.compute_slices} compute slices and {memory} of its {table.memory_slices} memory slices, and "
        f"NVML places each profile only at fixed slices ({table.source}); drop or shrink instances until "
        "they fit", MIG_LAYOUT_DOES_NOT_FIT,
    )


def layout_checked_by_model(pool: NodePool) -> bool:
    """True when this check judges the pool's MIG layout against its GPU model's table (the
    generic 7-compute-slice rule of the device plugin check stands back then)."""
    gpu = pool.gpu
    return (pool.platform == "kubernetes" and gpu is not None and gpu.vendor == "nvidia"
            and mig_table(gpu.vendor, gpu.model).known)


def _check_pool(pool: NodePool) -> Iterator[Problem]:
    gpu = pool.gpu
    if gpu is None or gpu.model is None or gpu.mig.strategy == "none" or not layout_checked_by_model(pool):
        return  # MIG elsewhere (AMD, YARN, standalone hosts) is refused by those platforms' checks
    capability = mig_table(gpu.vendor, gpu.model)
    if not capability.known:
        return
    path: PathTuple = (*pool.path, "gpu", "mig")
    if capability.model is None:
        yield Problem(
            (*path, "strategy"),
            f"mig.strategy {gpu.mig.strategy} on {gpu.model!r}, a GPU without MIG (NVIDIA's MIG user guide, "
            "supported GPUs): the MIG manager cannot enable it and no MIG device would exist; set "
            "mig.strategy none", MIG_ON_GPU_WITHOUT_MIG,
        )
        return
    table = capability.table_for([p for p, _ in gpu.mig.devices])
    if gpu.mig.devices and table is not None:
        yield from _model_problems((*path, "devices"), gpu.model, table, gpu.mig.devices)


def check(spec: Spec) -> Iterator[Problem]:
    """Every NVIDIA MIG pool of a known model whose layout its GPUs cannot apply."""
    for pool in spec.node_pools:
        yield from _check_pool(pool)
