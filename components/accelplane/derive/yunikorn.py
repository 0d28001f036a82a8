"""The queue tree and the Flink gang as Apache YuniKorn reads them, shared by checks, builders and reports.

Queues (apache/yunikorn-core ``pkg/common/configs``): one partition ``default`` (the Kubernetes
shim schedules into no other) whose ``queues`` list holds ``root`` and, below it, the spec's
tree. Each queue's ``resources.guaranteed`` is its ``deserved`` share (what YuniKorn's fair sharing
and preemption defend, as Volcano's capacity plugin defends ``deserved``), or its ``guarantee``
when it sets no ``deserved``; ``resources.max`` is its ``capability``. YuniKorn names CPU
``vcore`` and counts it in milli-cores (``resources.ParseVCore``); every other resource keeps its
Kubernetes name and is an integer (``resources.ParseQuantity``: digits and an optional
``k M G T P E Ki … Ei`` suffix, no fraction, no ``m``). ``deviceclass/<class>`` keys are Volcano's
DRA quota names: YuniKorn never counts claims under them, so they are left out (and warned
about, `accelplane.checks.yunikorn`).

Pods (apache/yunikorn-k8shim ``pkg/common/constants``, ``pkg/cache``): ``schedulerName:
yunikorn``; the application id label ``applicationId`` and the queue label ``queue`` (the full
path ``root.<…>.<queue>``: the ``provided`` placement rule puts the application there); gang
scheduling with the ``yunikorn.apache.org/task-groups`` annotation (JSON list of ``{name,
minMember, minResource, nodeSelector, tolerations, affinity}``) read from the application's first
pod, ``yunikorn.apache.org/task-group-name`` on each pod and
``yunikorn.apache.org/schedulingPolicyParameters`` (``placeholderTimeoutInSeconds=<s>
gangSchedulingStyle=Hard|Soft``).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from accelplane.derive.queues import ROOT_QUEUE, children_by_parent, leaf_queue_names, queue_parent
from accelplane.model import Queue, ResourceList, Spec

PARTITION = "default"
"""The only partition YuniKorn's Kubernetes shim registers (``constants.DefaultPartition``)."""
CONFIGMAP = "yunikorn-configs"
"""The ConfigMap the shim watches in its own namespace (``constants.ConfigMapName``)."""
QUEUES_KEY = "queues.yaml"
FALLBACK_QUEUE = "default"
"""Where pods without a ``queue`` label land (``root.default``, created on demand): with YuniKorn's
admission controller every pod of the cluster may be handed to YuniKorn, not only Flink's."""

CPU = "vcore"
APP_ID_LABEL = "applicationId"
QUEUE_LABEL = "queue"
TASK_GROUP_NAME_ANNOTATION = "yunikorn.apache.org/task-group-name"
TASK_GROUPS_ANNOTATION = "yunikorn.apache.org/task-groups"
SCHEDULING_POLICY_ANNOTATION = "yunikorn.apache.org/schedulingPolicyParameters"
JOBMANAGER_TASK_GROUP = "jobmanager"
TASKMANAGER_TASK_GROUP = "taskmanager"

SORT_POLICY = "application.sort.policy"
PRIORITY_OFFSET = "priority.offset"
PREEMPTION_POLICY = "preemption.policy"

INT64_MAX = 2**63 - 1
"""YuniKorn stores every quantity as an int64 (milli-cores for ``vcore``) and rejects larger ones."""
MAX_LABEL_VALUE = 63
"""A Kubernetes label value: at most 63 characters (the queue path travels in one)."""

_BINARY = (("Ei", 2**60), ("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10))


def resource_name(name: str) -> str:
    """YuniKorn's name of a Kubernetes resource: ``vcore`` for ``cpu``, every other name as is."""
    return CPU if name == "cpu" else name


def is_volcano_only_resource(name: str) -> bool:
    """``deviceclass/<class>``: Volcano's DRA quota keys, which YuniKorn never counts."""
    return name.startswith("deviceclass/")


def format_value(name: str, value: Decimal) -> str | None:
    """The quantity string YuniKorn's config parser accepts for ``value`` of resource ``name``
    (Kubernetes name), or None when it cannot be written (a fraction of a milli-core, of a byte or
    of a device; a negative value; more than an int64 holds).

    ``cpu``: whole cores as an integer, else milli-cores with ``m``. Others: an integer, memory with
    the largest binary suffix that divides it exactly (``64Gi``)."""
    if value < 0 or value * (1000 if name == "cpu" else 1) > INT64_MAX:
        return None
    if name == "cpu":
        if value == value.to_integral_value():
            return str(int(value))
        milli = value * 1000
        return f"{int(milli)}m" if milli == milli.to_integral_value() else None
    if value != value.to_integral_value():
        return None
    number = int(value)
    if name == "memory" and number:
        for suffix, size in _BINARY:
            if number % size == 0:
                return f"{number // size}{suffix}"
    return str(number)


def config_resources(values: ResourceList) -> dict[str, str]:
    """A ``resources.guaranteed``/``max`` map: YuniKorn names and quantities, Volcano-only keys and
    values it cannot hold left out (both are reported by the checks)."""
    out: dict[str, str] = {}
    for name, q in values.items:
        text = format_value(name, q.value)
        if text is not None and not is_volcano_only_resource(name):
            out[resource_name(name)] = text
    return dict(sorted(out.items()))


def guaranteed(queue: Queue) -> ResourceList:
    """The resources YuniKorn guarantees the queue: ``deserved``, else ``guarantee``."""
    return queue.deserved or queue.guarantee


def queue_path(spec: Spec, name: str) -> str:
    """The fully qualified YuniKorn queue path ``root.<parent>.<name>`` of a spec queue (a name
    without a queue in the spec, or a broken parent chain, stops the walk: checks report those)."""
    parts = [name]
    seen = {name}
    queue = spec.queue(name)
    while queue is not None and (parent := queue_parent(queue)) is not None and parent not in seen:
        parts.append(parent)
        seen.add(parent)
        queue = spec.queue(parent)
    return ".".join([ROOT_QUEUE, *reversed(parts)])


def _properties(queue: Queue, leaf: bool) -> dict[str, str]:
    props: dict[str, str] = {}
    if leaf:
        # YuniKorn's docs ask for FIFO in queues that run gang-scheduled applications.
        props[SORT_POLICY] = "fifo"
    if queue.priority is not None:
        props[PRIORITY_OFFSET] = str(queue.priority)
    if queue.reclaimable is False:
        # Volcano's reclaimable: false keeps the queue's pods from being reclaimed by other queues;
        # YuniKorn's preemption.policy: disabled keeps a leaf's tasks from being preemption victims.
        props[PREEMPTION_POLICY] = "disabled"
    return dict(sorted(props.items()))


def _queue_config(queue: Queue, by_parent: dict[str | None, list[Queue]], leaves: set[str]) -> dict[str, Any]:
    body: dict[str, Any] = {"name": queue.name}
    children = sorted(by_parent.get(queue.name, []), key=lambda q: q.name)
    if children:
        body["parent"] = True
    resources: dict[str, Any] = {}
    g = config_resources(guaranteed(queue))
    m = config_resources(queue.capability)
    if g:
        resources["guaranteed"] = g
    if m:
        resources["max"] = m
    if resources:
        body["resources"] = resources
    props = _properties(queue, queue.name in leaves)
    if props:
        body["properties"] = props
    if children:
        body["queues"] = [_queue_config(c, by_parent, leaves) for c in children]
    return body


def placement_rules() -> list[dict[str, Any]]:
    """``provided`` (the pod's ``queue`` label, an existing queue only), then ``root.default``
    (created on demand) for pods that name none."""
    return [
        {"name": "provided", "create": False},
        {"name": "fixed", "value": f"{ROOT_QUEUE}.{FALLBACK_QUEUE}", "create": True},
    ]


def scheduler_config(spec: Spec) -> dict[str, Any]:
    """The ``queues.yaml`` document: one partition, ``root`` (open to every submitter, as YuniKorn's
    Helm chart leaves it) with the spec's queue tree below it, in name order."""
    by_parent = children_by_parent(spec)
    leaves = leaf_queue_names(spec)
    root: dict[str, Any] = {"name": ROOT_QUEUE, "submitacl": "*"}
    top = sorted(by_parent.get(None, []), key=lambda q: q.name)
    if top:
        root["queues"] = [_queue_config(q, by_parent, leaves) for q in top]
    return {"partitions": [{"name": PARTITION, "placementrules": placement_rules(), "queues": [root]}]}
