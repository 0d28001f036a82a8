"""One Volcano PodGroup per Flink cluster on Kubernetes.

``minResources`` is what the whole cluster requests (`accelplane.derive.flink_pods.min_resources`):
the JobManager (times its replicas when standby JobManagers are configured) plus every
TaskManager, with CPU and memory exactly as Flink puts them on the containers (memory in whole MiB)
and the GPUs under the resource name the TaskManagers request; tests/flink/test_flink_pod_factory.py
compares it with the pods Flink's own factories build. Volcano's ``enqueue`` action admits the
PodGroup only when the queue (and the cluster) can hold all of it, so the JobManager never starts
while its TaskManagers would starve.

``minMember`` is 1 (the JobManager), not 1 + replicas: Flink — natively and through the operator —
creates TaskManager pods only after the JobManager runs and asks for slots, and Volcano's gang
plugin does not schedule any pod of a PodGroup while fewer than ``minMember`` pods exist
(``JobValid``: valid tasks < minAvailable → "NotEnoughTasks"). ``minMember = 1 + replicas`` would
leave the JobManager Pending forever. The gang guarantee comes from ``minResources`` admission.
"""

from __future__ import annotations

from typing import Any

from accelplane.artifacts import K8sObject, k8s_object
from accelplane.builders.pod_templates import flink_cluster_labels
from accelplane.derive.flink_pods import format_min_resources, min_resources, podgroup_name
from accelplane.model import FlinkCluster, Spec

PODGROUP_API = "scheduling.volcano.sh/v1beta1"
MIN_MEMBER = 1


def podgroup_spec(spec: Spec, cluster: FlinkCluster) -> dict[str, Any]:
    """The ``spec`` of the cluster's PodGroup."""
    body: dict[str, Any] = {
        "minMember": MIN_MEMBER,
        "minResources": format_min_resources(min_resources(spec, cluster)),
    }
    if cluster.queue is not None:
        body["queue"] = cluster.queue
    if cluster.priority_class is not None:
        body["priorityClassName"] = cluster.priority_class
    return body


def podgroup(spec: Spec, cluster: FlinkCluster, family: str) -> K8sObject:
    """The PodGroup manifest (namespaced, in the cluster's namespace)."""
    labels = flink_cluster_labels(spec, cluster)
    return k8s_object(
        PODGROUP_API,
        "PodGroup",
        podgroup_name(cluster),
        family=family,
        namespace=cluster.namespace,
        labels=labels,
        body={"spec": podgroup_spec(spec, cluster)},
    )
