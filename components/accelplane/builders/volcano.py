"""Volcano Queues and the scheduler ConfigMap derived from the queue model."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from accelplane.artifacts import Bundle, k8s_object
from accelplane.derive.dra import uses_dra
from accelplane.derive.queues import queue_parent, uses_hierarchy, volcano_queue_plugin
from accelplane.model import Spec
from accelplane.templating import render_template

FAMILY = "scheduling"
QUEUE_API = "scheduling.volcano.sh/v1beta1"
SCHEDULER_CONFIGMAP = "volcano-scheduler-configmap"
SCHEDULER_CONF_KEY = "volcano-scheduler.conf"


@dataclass(frozen=True)
class Plugin:
    """A scheduler plugin entry with its options and ``arguments`` (in output order)."""

    name: str
    options: tuple[tuple[str, Any], ...] = ()
    arguments: tuple[tuple[str, Any], ...] = ()


def queue_manifest_spec(spec: Spec, name: str) -> dict[str, Any]:
    """The ``spec`` of one Volcano Queue, camelCase, only fields the user set (plus weight)."""
    q = spec.queue(name)
    assert q is not None
    body: dict[str, Any] = {"weight": q.weight}
    if q.capability:
        body["capability"] = q.capability.as_dict()
    if q.deserved:
        body["deserved"] = q.deserved.as_dict()
    if q.guarantee:
        body["guarantee"] = {"resource": q.guarantee.as_dict()}
    if q.reclaimable is not None:
        body["reclaimable"] = q.reclaimable
    parent = queue_parent(q)
    if parent is not None:
        body["parent"] = parent
    if q.priority is not None:
        body["priority"] = q.priority
    return body


def scheduler_actions(spec: Spec) -> list[str]:
    """Scheduler actions: ``reclaim`` when queues use deserved/guarantee/reclaimable, ``preempt``
    when a PriorityClass asks to preempt lower priorities."""
    actions = ["enqueue", "allocate", "backfill"]
    if any(q.deserved or q.guarantee or q.reclaimable is not None for q in spec.queues):
        actions.append("reclaim")
    if any(p.preemption_policy == "PreemptLowerPriority" for p in spec.priority_classes):
        actions.append("preempt")
    return actions


def scheduler_tiers(spec: Spec) -> list[list[Plugin]]:
    """Plugin tiers: upstream defaults with `proportion`, or `capacity` (with ``enableHierarchy``
    when the queues form a hierarchy) when the queues form a hierarchy, set ``deserved`` or limit DRA
    devices (`accelplane.derive.queues.volcano_queue_plugin`); proportion and capacity are never
    enabled together. With DRA pools the ``predicates`` plugin allocates claims
    (``predicate.DynamicResourceAllocationEnable``, Volcano docs/user-guide/how_to_enable_dra.md)
    and the capacity plugin counts them (``capacity.DynamicResourceAllocationEnable``,
    docs/user-guide/how_to_use_dra_quota.md)."""
    tier1 = [Plugin("priority"), Plugin("gang", (("enablePreemptable", False),)), Plugin("conformance")]
    dra = uses_dra(spec)
    predicates = Plugin("predicates", arguments=(("predicate.DynamicResourceAllocationEnable", True),) if dra else ())
    if volcano_queue_plugin(spec) == "capacity":
        capacity_options = (("enableHierarchy", True),) if uses_hierarchy(spec) else ()
        tier2 = [
            Plugin("drf", (("enablePreemptable", False),)),
            predicates,
            Plugin(
                "capacity",
                capacity_options,
                (("capacity.DynamicResourceAllocationEnable", True),) if dra else (),
            ),
            Plugin("nodeorder"),
            Plugin("binpack"),
        ]
    else:
        tier2 = [
            Plugin("overcommit"),
            Plugin("drf", (("enablePreemptable", False),)),
            predicates,
            Plugin("proportion"),
            Plugin("nodeorder"),
            Plugin("binpack"),
        ]
    return [tier1, tier2]


def scheduler_conf(spec: Spec) -> str:
    """Text of ``volcano-scheduler.conf`` for this spec."""
    return render_template(
        "volcano/volcano-scheduler.conf.j2", actions=scheduler_actions(spec), tiers=scheduler_tiers(spec)
    )


def build(spec: Spec) -> Bundle:
    """Queues (cluster-scoped) and, unless disabled, the scheduler ConfigMap (nothing on a YuniKorn
    cluster: `accelplane.builders.yunikorn` renders its queues; nor on a Kueue one)."""
    bundle = Bundle()
    if not spec.uses_volcano:
        return bundle
    labels = spec.common_labels()
    for q in spec.queues:
        bundle.objects.append(
            k8s_object(
                QUEUE_API,
                "Queue",
                q.name,
                family=FAMILY,
                labels=labels,
                body={"spec": queue_manifest_spec(spec, q.name)},
            )
        )
    if spec.volcano.manage_scheduler_config and spec.queues:
        bundle.objects.append(
            k8s_object(
                "v1",
                "ConfigMap",
                SCHEDULER_CONFIGMAP,
                family=FAMILY,
                namespace=spec.volcano.namespace,
                labels=labels,
                body={"data": {SCHEDULER_CONF_KEY: scheduler_conf(spec)}},
            )
        )
    return bundle
