"""YARN node labels (partitions) that place TaskManagers by GPU model while they request ``yarn.io/gpu``.

With ``yarn.nodeLabels: true`` every YARN node pool whose GPUs have a ``model`` becomes part of one
exclusive node partition per model, named ``gpu-<model token>`` (`accelplane.names.normalize_gpu_model`:
``Tesla V100-SXM2-32GB`` → ``gpu-teslav100sxm232gb``). Pools without GPUs or without a model stay in
the default partition, which must keep some NodeManagers for ApplicationMasters (the Flink
JobManager requests no label). The labels reach YARN by stock mechanisms only:

* ResourceManager: ``yarn.node-labels.enabled=true``, ``yarn.node-labels.configuration-type=distributed``
  and the cluster label list for ``yarn rmadmin -addToClusterNodeLabels``;
* NodeManagers of a labelled pool: ``yarn.nodemanager.node-labels.provider=config`` and
  ``yarn.nodemanager.node-labels.provider.configured-node-partition=<label>`` (their yarn-site fragment);
* CapacityScheduler: a queue may use the partitions of the models it lists in ``gpuModels``
  (``accessible-node-labels``), with a per-partition capacity (`accelplane.derive.yarn_capacity`);
* Flink: ``yarn.taskmanager.node-label`` (``YarnConfigOptions.TASK_MANAGER_NODE_LABEL``), which
  Flink's ``YarnResourceManagerDriver`` puts on every TaskManager ``ContainerRequest``.
"""

from __future__ import annotations

import re

from accelplane.derive.gpu_resources import candidate_pools
from accelplane.derive.yarn_types import yarn_gpu_clusters, yarn_pools
from accelplane.model import FlinkCluster, NodePool, Spec
from accelplane.names import normalize_gpu_model

LABEL_PREFIX = "gpu-"
# Hadoop NodeLabelUtil.checkAndThrowLabelName: letters, digits, '-' and '_', starting with a letter
# or digit, at most 255 characters.
LABEL_RE = re.compile(r"[0-9a-zA-Z][0-9a-zA-Z_-]*")
MAX_LABEL_LENGTH = 255


def labels_enabled(spec: Spec) -> bool:
    """True when the spec places YARN TaskManagers by node label."""
    return spec.has_platform("yarn") and spec.yarn is not None and spec.yarn.node_labels


def label_for_model(model: str) -> str:
    """Node label of a GPU model: ``gpu-<normalised model>``."""
    return LABEL_PREFIX + normalize_gpu_model(model)


def is_valid_label(label: str) -> bool:
    """True when Hadoop accepts ``label`` as a node label name."""
    return len(label) <= MAX_LABEL_LENGTH and bool(LABEL_RE.fullmatch(label))


def pool_label(spec: Spec, pool: NodePool) -> str | None:
    """The node partition of a YARN pool's NodeManagers (None: the default partition)."""
    if not labels_enabled(spec) or pool.platform != "yarn" or pool.gpu is None or not pool.gpu.model:
        return None
    return label_for_model(pool.gpu.model)


def cluster_labels(spec: Spec) -> list[str]:
    """Every node label of the cluster, sorted (the ``-addToClusterNodeLabels`` list)."""
    return sorted({lb for p in yarn_pools(spec) if (lb := pool_label(spec, p)) is not None})


def add_to_cluster_argument(spec: Spec) -> str:
    """The argument of ``yarn rmadmin -addToClusterNodeLabels``: ``a(exclusive=true),b(exclusive=true)``."""
    return ",".join(f"{lb}(exclusive=true)" for lb in cluster_labels(spec))


def label_pools(spec: Spec, label: str | None) -> list[NodePool]:
    """YARN pools in a partition (None: the default partition)."""
    return [p for p in yarn_pools(spec) if pool_label(spec, p) == label]


def candidate_labels(spec: Spec, cluster: FlinkCluster) -> list[str | None]:
    """Distinct partitions of the YARN pools that may host the cluster's GPU TaskManagers."""
    found = {pool_label(spec, p) for p in candidate_pools(spec, cluster) if p.platform == "yarn"}
    return sorted(found, key=lambda x: x or "")


def taskmanager_label(spec: Spec, cluster: FlinkCluster) -> str | None:
    """``yarn.taskmanager.node-label`` of a YARN Flink cluster: the one partition of its candidate
    pools, None without labels, without GPUs or when the candidates span partitions (a check)."""
    if not labels_enabled(spec) or cluster not in yarn_gpu_clusters(spec):
        return None
    labels = candidate_labels(spec, cluster)
    return labels[0] if len(labels) == 1 else None


APPLICATION_LABEL_KEY = "yarn.application.node-label"
"""Flink's ``YarnConfigOptions.APPLICATION_NODE_LABEL``: ``YarnClusterDescriptor`` sets it as the
application's node label expression, which YARN applies to the ApplicationMaster (the JobManager) and
to every container without its own label (``yarn.taskmanager.node-label`` overrides it for the
TaskManagers)."""


def application_label(cluster: FlinkCluster) -> str | None:
    """The partition a YARN Flink cluster's JobManager (and its TaskManagers without their own node
    label) run in: the cluster's ``yarn.application.node-label``, None for the default partition."""
    for key, value in cluster.config:
        if key == APPLICATION_LABEL_KEY:
            return str(value).strip() or None
    return None
