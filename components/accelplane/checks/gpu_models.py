"""GPU model names: every pool's ``gpu.model`` must be the name its consumer will see.

A pool's model reaches a different consumer per platform, each comparing it with its own form of
the name the driver reports (`accelplane.gpu_names`, docs/gpu-names.md):

* Kubernetes, NVIDIA device plugin: TaskManager node affinity ``nvidia.com/gpu.product In [...]``
  against GPU Feature Discovery's label (``NVIDIA-L4``; case matters);
* Kubernetes, DRA: the DeviceClass CEL ``productName == "..."`` against the DRA driver's attribute
  (the NVML name verbatim; AMD's sysfs name with ``_``);
* Kubernetes, AMD device plugin: the AMD node labeller's ``amd.com/gpu.product-name``;
* YARN and standalone hosts: the discovery script's ``--model`` filter and the YARN node label
  ``gpu-<model>``, both ignoring case, spaces, ``-`` and ``_``.

A model the table knows as a shorthand or market name (``L4``, ``H100``, ``AMD Instinct MI300X``)
whose form differs from what that consumer sees is an error (nothing would ever match) with the
real names; a model the table does not know is a warning with the nearest known names.
"""

from __future__ import annotations

from collections.abc import Iterator

from accelplane.derive.dra import driver_product_name, is_dra_pool
from accelplane.derive.gpu_resources import pool_models_meant
from accelplane.derive.yarn_labels import is_valid_label, label_for_model
from accelplane.errors import Problem
from accelplane.findings import ERROR, WARNING, declare
from accelplane.gpu_names import GpuName, Match, amd_attribute_form, lookup
from accelplane.model import FlinkCluster, NodePool, Spec
from accelplane.names import gfd_product_label, is_label_value, normalize_gpu_model

GPU_MODEL_UNKNOWN = declare(
    "AP3501",
    WARNING,
    "gpu.model is not a name accelplane's GPU name table knows a driver to report",
    fix="check the name the driver reports on a node (nvidia-smi -L, or sysfs product_name for AMD) "
    "and use it verbatim; see docs/gpu-names.md",
)
GPU_MODEL_SHORTHAND = declare(
    "AP3502",
    ERROR,
    "gpu.model is a market name or shorthand no driver reports, so nothing selecting it matches",
    fix="use the name the driver reports, e.g. 'NVIDIA L4' (docs/gpu-names.md lists them)",
)

CLUSTER_GPU_MODEL_SHORTHAND = declare(
    "AP3503",
    ERROR,
    "a Flink cluster's taskManager.gpu.model is a shorthand of a pool's gpu.model, so no pool matches it",
    fix="write the pool's gpu.model, e.g. taskManager.gpu.model: 'NVIDIA L4' (docs/gpu-names.md)",
    whole_spec=True,
)


def _consumer(pool: NodePool) -> tuple[str, str]:
    """(what compares the model on this pool, how to name its form in a message)."""
    assert pool.gpu is not None
    if is_dra_pool(pool):
        return "dra", f"the {pool.gpu.vendor.upper()} DRA driver publishes productName"
    if pool.platform == "kubernetes":
        if pool.gpu.vendor == "nvidia":
            return "gfd", "GPU Feature Discovery labels these nodes nvidia.com/gpu.product"
        return "amd-label", "the AMD node labeller labels these nodes amd.com/gpu.product-name"
    return "host", "the discovery script's --model filter and YARN node labels compare with the driver's name"


def _rendered(kind: str, vendor: str, model: str) -> str:
    """The form accelplane renders from the spec's model for that consumer."""
    if kind == "dra":
        return driver_product_name(vendor, model)
    if kind == "gfd":
        return gfd_product_label(model)
    if kind == "amd-label":
        return amd_attribute_form(model)
    return normalize_gpu_model(model)


def _seen(kind: str, row: GpuName) -> str:
    """The form that consumer sees on a node with the row's GPU."""
    if kind == "dra":
        return row.dra_product_name or row.name
    if kind == "gfd":
        return row.gfd_product or gfd_product_label(row.name)
    if kind == "amd-label":
        return row.node_label or amd_attribute_form(row.name)
    return normalize_gpu_model(row.name)


def _names(rows: tuple[GpuName, ...]) -> str:
    return ", ".join(repr(r.name) for r in rows)


def _reported_elsewhere(pool: NodePool, kind: str, model: str) -> bool:
    """True when the consumer form of an unknown model is itself invalid: the device-plugin check
    (GFD label value) or the YARN check (node label) already reports that model, one finding."""
    if kind == "gfd":
        return not is_label_value(gfd_product_label(model))
    return pool.platform == "yarn" and not is_valid_label(label_for_model(model))


def _check_pool(pool: NodePool) -> Iterator[Problem]:
    gpu = pool.gpu
    if gpu is None or not gpu.model:
        return
    found = lookup(gpu.vendor, gpu.model)
    if found.match is Match.EXACT:
        return
    kind, consumer = _consumer(pool)
    rendered = _rendered(kind, gpu.vendor, gpu.model)
    path = (*pool.path, "gpu", "model")
    if found.match is Match.SHORTHAND:
        if any(_seen(kind, r) == rendered for r in found.rows):
            return  # another spelling of the name that this consumer sees identically
        seen = ", ".join(sorted({repr(_seen(kind, r)) for r in found.rows}))
        if kind == "host":
            detail = f"{consumer} ({_names(found.rows)}), which {gpu.model!r} does not match"
        else:
            detail = f"{consumer} {seen}, never {rendered!r}"
        yield Problem(
            path,
            f"{gpu.model!r} is a market name or shorthand, not the name the {gpu.vendor} driver reports: "
            f"{detail}, so no TaskManager would get these GPUs; did you mean {_names(found.rows)}?",
            GPU_MODEL_SHORTHAND,
        )
        return
    if _reported_elsewhere(pool, kind, gpu.model):
        return
    if found.match is Match.UNCONFIRMED:
        yield Problem(
            path,
            f"{gpu.model!r} is the name accelplane's GPU name table expects for this GPU, but no public "
            f"capture shows a driver reporting it (docs/gpu-names.md); {consumer} exactly as the driver "
            "reports it, so check it against a node (nvidia-smi -L, or sysfs product_name for AMD)",
            GPU_MODEL_UNKNOWN,
        )
        return
    nearest = f"; nearest known: {_names(found.rows)}" if found.rows else ""
    yield Problem(
        path,
        f"{gpu.model!r} is not in accelplane's GPU name table (docs/gpu-names.md); {consumer} exactly "
        f"as the driver reports it, so check it against a node (nvidia-smi -L, or sysfs product_name for "
        f"AMD){nearest}",
        GPU_MODEL_UNKNOWN,
    )


def _check_cluster(spec: Spec, cluster: FlinkCluster) -> Iterator[Problem]:
    meant = pool_models_meant(spec, cluster)
    gpu = cluster.task_manager.gpu
    if not meant or gpu is None or gpu.model is None:
        return
    pools = [p.name for p in spec.node_pools if p.platform == cluster.platform and p.gpu is not None and p.gpu.model in meant]
    names = " or ".join(repr(m) for m in meant)
    yield Problem(
        cluster.field_path("taskManager", "gpu", "model"),
        f"{gpu.model!r} is a market name or shorthand, not the name the driver reports, so it matches no "
        f"{cluster.platform} node pool's gpu.model and no TaskManager would get a GPU; did you mean {names} "
        f"(pool{'s' if len(pools) > 1 else ''} {', '.join(pools)})?",
        CLUSTER_GPU_MODEL_SHORTHAND,
    )


def check(spec: Spec) -> Iterator[Problem]:
    """Every pool whose ``gpu.model`` is a shorthand (error) or unknown (warning) for its consumer,
    and every Flink cluster whose ``taskManager.gpu.model`` is a shorthand of a pool's model (error)."""
    for pool in spec.node_pools:
        yield from _check_pool(pool)
    for cluster in spec.flink_clusters:
        yield from _check_cluster(spec, cluster)
