"""Facts about the pods of a Flink cluster on Kubernetes that checks, builders and reports share.

The PodGroup's name and ``minResources`` (what the whole cluster requests: the JobManager, times
its replicas when standby JobManagers are configured, plus every TaskManager, with CPU and memory
exactly as Flink puts them on the containers, memory in whole MiB, and the GPUs under the resource
name the TaskManagers request, ``deviceclass/<class>`` when they claim DRA devices: the key
Volcano's capacity plugin accounts claims under), the pod count, the PodGroup annotation and the host directory of
the coordination file. tests/flink/test_flink_pod_factory.py builds the pods with Flink's own
factories and compares their requests with ``minResources``.
"""

from __future__ import annotations

import posixpath
from decimal import Decimal

from accelplane.derive.dra import kubernetes_gpu_key
from accelplane.derive.flink_keys import jobmanager_replicas, mebibytes, started_taskmanagers
from accelplane.model import FlinkCluster, Spec
from accelplane.quantity import format_quantity

#: The annotation that binds a pod to its Volcano PodGroup.
GROUP_NAME_ANNOTATION = "scheduling.k8s.io/group-name"


def podgroup_name(cluster: FlinkCluster) -> str:
    """Name of the cluster's Volcano PodGroup (``podgroup-<cluster id>``)."""
    return f"podgroup-{cluster.name}"


def coordination_dir(cluster: FlinkCluster) -> str:
    """Host directory holding the cluster's coordination file (mounted at the same path)."""
    return posixpath.dirname(cluster.coordination_file)


def _totals(spec: Spec, cluster: FlinkCluster, taskmanagers: int) -> dict[str, Decimal]:
    """Resource name → exact total of all JobManagers and ``taskmanagers`` TaskManagers."""
    tm = cluster.task_manager
    jms = jobmanager_replicas(cluster)
    memory_mib = jms * mebibytes(cluster.job_manager.memory) + taskmanagers * mebibytes(tm.memory)
    totals: dict[str, Decimal] = {
        "cpu": jms * cluster.job_manager.cpu.value + taskmanagers * tm.cpu.value,
        "memory": Decimal(memory_mib * 2**20),
    }
    resource = kubernetes_gpu_key(spec, cluster)
    if resource is not None and taskmanagers:
        totals[resource] = Decimal(taskmanagers * cluster.gpus_per_task_manager)
    return dict(sorted(totals.items()))


def min_resources(spec: Spec, cluster: FlinkCluster) -> dict[str, Decimal]:
    """The PodGroup's ``minResources``: what the pods Flink starts with the cluster request (all
    JobManagers + `started_taskmanagers`: every TaskManager, but none for a session cluster whose
    Flink starts them only when a job arrives, so the gang reserves nothing it would hold idle)."""
    return _totals(spec, cluster, started_taskmanagers(cluster))


def cluster_resources(spec: Spec, cluster: FlinkCluster) -> dict[str, Decimal]:
    """What the cluster requests when fully running (all JobManagers + every TaskManager): what its
    queue must hold, whatever the gang reserves."""
    return _totals(spec, cluster, cluster.task_manager.replicas)


def jobmanager_requests(cluster: FlinkCluster) -> dict[str, Decimal]:
    """What Flink requests on one JobManager's main container: CPU and memory (whole MiB)."""
    return {
        "cpu": cluster.job_manager.cpu.value,
        "memory": Decimal(mebibytes(cluster.job_manager.memory) * 2**20),
    }


def taskmanager_requests(spec: Spec, cluster: FlinkCluster) -> dict[str, Decimal]:
    """What Flink requests on one TaskManager's main container: CPU, memory (whole MiB) and the
    GPUs under the device plugin's resource name (DRA claims are no request)."""
    tm = cluster.task_manager
    out = {"cpu": tm.cpu.value, "memory": Decimal(mebibytes(tm.memory) * 2**20)}
    resource = kubernetes_gpu_key(spec, cluster)
    if resource is not None and not resource.startswith("deviceclass/"):
        out[resource] = Decimal(cluster.gpus_per_task_manager)
    return dict(sorted(out.items()))


def taskmanagers_for_parallelism(cluster: FlinkCluster) -> int | None:
    """TaskManagers Flink's active resource manager starts for the job's parallelism, None without
    ``job.parallelism``.

    Natively on Kubernetes and YARN Flink requests ``ceil(parallelism / slots)`` TaskManagers (one
    slot per parallel subtask of the default slot sharing group), whatever ``replicas`` says; the
    Flink Kubernetes Operator instead derives the parallelism from ``taskManager.replicas ×
    slots``. The PodGroup ``minResources``, the queue checks and ``report`` count ``replicas``
    TaskManagers, so `accelplane.checks.flink` requires the two to agree.
    """
    if cluster.job is None or cluster.job.parallelism is None:
        return None
    slots = max(cluster.task_manager.slots, 1)
    return -(-cluster.job.parallelism // slots)


def pod_count(cluster: FlinkCluster) -> int:
    """Pods of the cluster when fully running: the JobManager(s) and every TaskManager."""
    return jobmanager_replicas(cluster) + cluster.task_manager.replicas


def format_min_resources(values: dict[str, Decimal]) -> dict[str, str]:
    """Canonical quantity strings (memory binary, everything else decimal)."""
    return {name: format_quantity(v, binary=name == "memory") for name, v in values.items()}
