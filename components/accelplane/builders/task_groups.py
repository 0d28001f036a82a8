"""YuniKorn gang scheduling of a Flink cluster: its task groups, labels and annotations.

YuniKorn's shim reads the ``yunikorn.apache.org/task-groups`` annotation of an application's first
pod (Flink's JobManager) and, before that pod runs, asks the core for one placeholder pod per member
of every task group: ``jobmanager`` (``minMember`` = the JobManager replicas) and ``taskmanager``
(``minMember`` = the TaskManager replicas, placed like the TaskManagers: the GPU pool's node
selector or affinity and its tolerations). Each group is also placed where Flink's config puts its
pods (``kubernetes.<role>.node-selector`` and ``.tolerations``,
`accelplane.derive.flink_placement`): a placeholder on a node the real pod cannot use would be
released at the timeout and the gang lost. Only when every placeholder is allocated does the
application run (when they are not all allocated within ``placeholderTimeoutInSeconds`` of the
first one, ``Soft`` releases them and falls back to pod-by-pod scheduling; ``Hard``, which
`accelplane.checks.yunikorn` refuses, fails the application for good); each real pod then
takes over a placeholder of its ``yunikorn.apache.org/task-group-name``. So the TaskManagers' GPUs
are reserved before the JobManager starts, the gang Volcano's ``minMember: 1`` PodGroup can only
approximate with ``minResources`` admission.

A real pod replaces a placeholder only when its requests fit the placeholder's, so ``minResource``
is the pod's effective request: the larger of what Flink puts on the main container
(`accelplane.derive.flink_pods.jobmanager_requests`/`taskmanager_requests`) and each init container
of the template, per resource. No ``pods`` key: the shim counts one pod per member itself and
rejects an explicit one (``validateTaskGroupResources``).
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from accelplane.derive.flink_keys import jobmanager_replicas, started_taskmanagers
from accelplane.derive.flink_placement import with_config_placement
from accelplane.derive.flink_pods import format_min_resources, jobmanager_requests, taskmanager_requests
from accelplane.derive.yunikorn import (
    APP_ID_LABEL,
    JOBMANAGER_TASK_GROUP,
    QUEUE_LABEL,
    SCHEDULING_POLICY_ANNOTATION,
    TASK_GROUP_NAME_ANNOTATION,
    TASK_GROUPS_ANNOTATION,
    TASKMANAGER_TASK_GROUP,
    queue_path,
)
from accelplane.model import FlinkCluster, Spec
from accelplane.quantity import parse_quantity

PLACEMENT_KEYS = ("nodeSelector", "tolerations", "affinity")


def application_id(cluster: FlinkCluster) -> str:
    """The YuniKorn application id of every pod of the cluster: the cluster id (unique in the spec,
    a DNS label, so a valid label value)."""
    return cluster.name


def yunikorn_labels(spec: Spec, cluster: FlinkCluster) -> dict[str, str]:
    """``applicationId`` and, when the cluster names a queue, ``queue`` (its full path)."""
    labels = {APP_ID_LABEL: application_id(cluster)}
    if cluster.queue is not None:
        labels[QUEUE_LABEL] = queue_path(spec, cluster.queue)
    return labels


def effective_requests(main: dict[str, Decimal], init_containers: list[dict[str, Any]]) -> dict[str, Decimal]:
    """A pod's effective request per resource: the larger of the main container's and each init
    container's (an init container's limits count where it sets no request, as Kubernetes defaults
    them)."""
    out = dict(main)
    for container in init_containers:
        resources = container.get("resources", {})
        values = {**resources.get("limits", {}), **resources.get("requests", {})}
        for name, raw in values.items():
            value = parse_quantity(raw)
            if value > out.get(name, Decimal(0)):
                out[name] = value
    return dict(sorted(out.items()))


def task_groups(
    spec: Spec, cluster: FlinkCluster, tm_placement: dict[str, Any], tm_init_containers: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The cluster's task groups as YuniKorn's shim parses them: JobManagers, and TaskManagers
    when Flink starts them with the cluster (`started_taskmanagers`; an older session cluster
    starts none until a job arrives, and the shim refuses a group of 0 members, so it has none)."""
    jm: dict[str, Any] = {
        "name": JOBMANAGER_TASK_GROUP,
        "minMember": jobmanager_replicas(cluster),
        "minResource": format_min_resources(jobmanager_requests(cluster)),
    }
    jm_placement = with_config_placement({}, cluster, "jobmanager")
    jm.update({k: jm_placement[k] for k in PLACEMENT_KEYS if k in jm_placement})
    if started_taskmanagers(cluster) == 0:
        return [jm]
    tm: dict[str, Any] = {
        "name": TASKMANAGER_TASK_GROUP,
        "minMember": started_taskmanagers(cluster),
        "minResource": format_min_resources(effective_requests(taskmanager_requests(spec, cluster), tm_init_containers)),
    }
    tm_placement = with_config_placement(tm_placement, cluster, "taskmanager")
    tm.update({k: tm_placement[k] for k in PLACEMENT_KEYS if k in tm_placement})
    return [jm, tm]


def scheduling_policy_parameters(spec: Spec) -> str:
    """``placeholderTimeoutInSeconds=<s> gangSchedulingStyle=<Hard|Soft>`` (space-separated, as the
    shim's ``GetSchedulingPolicyParam`` splits it)."""
    return (
        f"placeholderTimeoutInSeconds={spec.yunikorn.placeholder_timeout_seconds} "
        f"gangSchedulingStyle={spec.yunikorn.gang_scheduling_style}"
    )


def yunikorn_annotations(
    spec: Spec,
    cluster: FlinkCluster,
    role_group: str,
    tm_placement: dict[str, Any],
    tm_init_containers: list[dict[str, Any]],
) -> dict[str, str]:
    """The gang annotations of one pod template: its task group's name, every task group (compact
    JSON with sorted keys, so the same spec renders the same bytes) and the scheduling policy."""
    groups = task_groups(spec, cluster, tm_placement, tm_init_containers)
    out = {
        SCHEDULING_POLICY_ANNOTATION: scheduling_policy_parameters(spec),
        TASK_GROUP_NAME_ANNOTATION: role_group,
        TASK_GROUPS_ANNOTATION: json.dumps(groups, sort_keys=True, separators=(",", ":")),
    }
    if role_group not in {g["name"] for g in groups}:
        del out[TASK_GROUP_NAME_ANNOTATION]  # no placeholder to take over: scheduled as a plain pod
    return out
