"""A TaskManager or JobManager bigger than any node that may run it never starts.

CPU and memory of each Flink process, counted the way its platform counts them
(`accelplane.derive.node_fit`: a Kubernetes pod's effective request with its init containers, a YARN
container, the TaskManagers a standalone host runs together), against the allocatable the node pools
declare. GPUs per TaskManager are checked against a node by `accelplane.checks.device_plugins`,
`accelplane.checks.dra`, `accelplane.checks.yarn` and `accelplane.checks.flink`.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

from accelplane.derive.node_fit import (
    HADOOP_MINIMUM_ALLOCATION,
    HADOOP_NODEMANAGER_OFFER,
    ROLES,
    Misfit,
    OverAllocation,
    app_request,
    misfits,
    over_allocations,
    yarn_container_request,
    yarn_maximum_allocation,
    yarn_nodemanager_offer,
)
from accelplane.errors import Problem
from accelplane.findings import ERROR, WARNING, declare
from accelplane.model import FlinkCluster, Spec
from accelplane.quantity import format_quantity

PROCESS_EXCEEDS_NODE = declare(
    "AP3511",
    ERROR,
    "a TaskManager or JobManager requests more CPU or memory than any node that may run it has",
    fix="lower the process's cpu/memory to at most the largest node's allocatable, or add a pool with larger nodes",
)
STANDALONE_CPU_OVERCOMMITTED = declare(
    "AP3512",
    WARNING,
    "standalone TaskManagers on one host ask for more cores than the host has",
    fix="lower taskManager.cpu or replicas, or add hosts (standalone Flink does not reserve cores)",
)
YARN_OVER_MAXIMUM_ALLOCATION = declare(
    "AP3513",
    ERROR,
    "a Flink JobManager or TaskManager container on YARN is larger than the scheduler's maximum allocation",
    fix="raise yarn.maximumAllocation (yarn.scheduler.maximum-allocation-mb/-vcores) to at least the container, "
    "or lower the process's memory/cpu to at most the maximum",
)
YARN_MAXIMUM_BELOW_MINIMUM = declare(
    "AP3514",
    ERROR,
    "yarn.maximumAllocation.memory is below the scheduler's minimum allocation (1024 MiB): the ResourceManager does not start",
    fix="set yarn.maximumAllocation.memory to at least 1Gi",
)

_NAMES = {"jobManager": "JobManager", "taskManager": "TaskManager"}
_YARN_KEYS = {"memory": "yarn.scheduler.maximum-allocation-mb", "cpu": "yarn.scheduler.maximum-allocation-vcores"}
_SPEC_KEYS = {"memory": "yarn.maximumAllocation.memory", "cpu": "yarn.maximumAllocation.vcores"}


def _q(resource: str, value: Decimal) -> str:
    return format_quantity(value, binary=resource == "memory")


def _unset_offers(spec: Spec, m: Misfit) -> list[str]:
    """The YARN pools among a misfit's whose NodeManagers offer Hadoop's default (the pool does not
    set the resource)."""
    out = []
    for name, _ in m.pools:
        pool = spec.pool(name)
        if pool is not None and pool.platform == "yarn" and not yarn_nodemanager_offer(pool)[m.resource][1]:
            out.append(name)
    return out


def _problem(spec: Spec, c: FlinkCluster, m: Misfit) -> Problem:
    role = _NAMES[m.role]
    per_pool = ", ".join(f"{name}: {_q(m.resource, v)}" for name, v in m.pools)
    path = c.field_path(m.role, m.resource)
    if m.host is not None:
        assert m.host_allocatable is not None
        what = f"{m.count} TaskManagers × {_q(m.resource, m.per_process)}" if m.count > 1 else "one TaskManager"
        if m.resource == "cpu":
            return Problem(
                path,
                f"the workers file puts {what} on host {m.host}: {_q('cpu', m.need)} cores where it has "
                f"{_q('cpu', m.host_allocatable)}; standalone Flink shares the cores rather than reserving "
                "them, so the TaskManagers get less CPU than asked: lower taskManager.cpu or replicas, or add hosts",
                STANDALONE_CPU_OVERCOMMITTED,
            )
        return Problem(
            path,
            f"the workers file puts {what} on host {m.host}: {_q('memory', m.need)} of process memory where it "
            f"has {_q('memory', m.host_allocatable)} allocatable, so TaskManagers would be killed for lack of "
            "memory: lower taskManager.memory or replicas, or add hosts",
            PROCESS_EXCEEDS_NODE,
        )
    if c.on_kubernetes:
        app = app_request(c, m.role)[m.resource]
        unit = f"a {role} pod requests {m.resource} {_q(m.resource, m.need)}"
        if m.need > app:
            unit += f" (its largest init container's request; the {role} container asks {_q(m.resource, app)})"
        where = "the pools that may run it"
        outcome = "the scheduler would leave it Pending forever"
    else:
        what = "vcores" if m.resource == "cpu" else "memory"
        unit = f"a {role} container requests {what} {_q(m.resource, m.need)}"
        where = "the NodeManagers that may run it" if c.target == "yarn" else "the hosts that may run it"
        outcome = "YARN would never allocate it" if c.target == "yarn" else "it would never start"
        unset = _unset_offers(spec, m) if c.target == "yarn" else []
        if unset:
            key = "memory-mb" if m.resource == "memory" else "cpu-vcores"
            default = _yarn_amount(m.resource, HADOOP_NODEMANAGER_OFFER[m.resource])
            return Problem(
                path,
                f"{unit} but the NodeManagers that may run it offer at most {_q(m.resource, m.largest)} "
                f"({per_pool}); pool(s) {', '.join(unset)} set no {m.resource}, so their NodeManagers "
                f"offer Hadoop's default yarn.nodemanager.resource.{key} ({default}) and {outcome}: set "
                f"nodePools[].{m.resource} of those pools to what their nodes can give containers "
                f"(accelplane renders it into their yarn-site.xml), or use at most {_q(m.resource, m.largest)}",
                PROCESS_EXCEEDS_NODE,
            )
    return Problem(
        path,
        f"{unit} but the largest node of {where} has {_q(m.resource, m.largest)} ({per_pool}); a process "
        f"runs on one node, so {outcome}: use at most {_q(m.resource, m.largest)} or add a pool with larger "
        "nodes",
        PROCESS_EXCEEDS_NODE,
    )


def _yarn_amount(resource: str, value: int | Decimal) -> str:
    """A YARN container figure as YARN counts it: MiB or vcores."""
    return f"{value} MiB" if resource == "memory" else f"{value} vcores"


def _spec_amount(resource: str, value: int | Decimal) -> str:
    """The spec value that means a YARN figure: ``16Gi`` for 16384 MiB, whole cores for vcores."""
    return format_quantity(Decimal(value) * 2**20, binary=True) if resource == "memory" else str(value)


_SOURCES = {
    "spec": "yarn.maximumAllocation",
    "nodes": "the largest NodeManager offer of the YARN pools (yarn.maximumAllocation unset)",
    "default": "Hadoop's default (yarn.maximumAllocation unset and no YARN pool states it)",
}


def _consequence(o: OverAllocation) -> str:
    """What Flink or YARN does with a container above the maximum allocation."""
    if o.resource == "memory":
        return "Flink's YARN client refuses to deploy it"
    if o.role == "jobManager":
        return "the ResourceManager rejects the ApplicationMaster"
    return "Flink's ResourceManager driver never requests the TaskManagers"


def _over_allocation(c: FlinkCluster, o: OverAllocation, node: Misfit) -> Problem:
    """The finding for a container above the maximum allocation that no node of its pools could
    hold either: raising the maximum is no way out, so the fix names only the smaller size."""
    role = _NAMES[o.role]
    field = "cpu" if o.resource == "cpu" else "memory"
    what = "" if o.resource == "cpu" else " of memory"
    largest = int(node.largest // 2**20) if o.resource == "memory" else int(node.largest)
    fit = min(o.maximum, largest)
    return Problem(
        c.field_path(o.role, field),
        f"a {role} container requests {_yarn_amount(o.resource, o.need)}{what} but the scheduler's largest "
        f"container ({_YARN_KEYS[o.resource]}) is {_yarn_amount(o.resource, o.maximum)}, from "
        f"{_SOURCES[o.source]}, so {_consequence(o)}; no node of the pools that may run it could hold it "
        f"either (largest: {_yarn_amount(o.resource, largest)}): use at most {_spec_amount(o.resource, fit)}",
        YARN_OVER_MAXIMUM_ALLOCATION,
    )


def _maximum_too_small(spec: Spec, found: list[tuple[FlinkCluster, OverAllocation]]) -> Iterator[Problem]:
    """One finding per resource whose maximum allocation is below containers that some NodeManager
    could hold: the setting is the one root cause, so the finding sits at ``yarn.maximumAllocation``
    and names every affected cluster and role (one fix raises it for all of them)."""
    for res in ("memory", "cpu"):
        items = [(c, o) for c, o in found if o.resource == res]
        if not items:
            continue
        need = max(o.need for _, o in items)
        o0 = items[0][1]
        field = "vcores" if res == "cpu" else "memory"
        who = "; ".join(
            f"flink.clusters.{c.name} {_NAMES[o.role]} ({_yarn_amount(res, o.need)}: {_consequence(o)})"
            for c, o in items
        )
        yield Problem(
            ("yarn", "maximumAllocation", field) if spec.yarn is not None else ("yarn",),
            f"the scheduler's largest container ({_YARN_KEYS[res]}) is {_yarn_amount(res, o0.maximum)}, from "
            f"{_SOURCES[o0.source]}, below the container(s) of {who}: set {_SPEC_KEYS[res]}: "
            f"{_spec_amount(res, need)} (or more)",
            YARN_OVER_MAXIMUM_ALLOCATION,
        )


def _maximum_below_minimum(spec: Spec) -> Problem | None:
    """The finding for a ``yarn.maximumAllocation.memory`` below Hadoop's minimum allocation; its fix
    also covers every YARN container (they are not reported apart: one root cause)."""
    if spec.yarn is None or spec.yarn.maximum_allocation_memory is None:
        return None
    memory, _ = yarn_maximum_allocation(spec)["memory"]
    minimum = HADOOP_MINIMUM_ALLOCATION["memory"]
    if memory >= minimum:
        return None
    largest = max(
        (yarn_container_request(c, r)["memory"] for c in spec.flink_clusters if c.target == "yarn" for r in ROLES),
        default=0,
    )
    return Problem(
        ("yarn", "maximumAllocation", "memory"),
        f"{_yarn_amount('memory', memory)} is below the scheduler's minimum allocation "
        f"(yarn.scheduler.minimum-allocation-mb, {minimum} MiB), so the ResourceManager refuses to start; "
        f"set yarn.maximumAllocation.memory to at least {_spec_amount('memory', max(minimum, largest))}",
        YARN_MAXIMUM_BELOW_MINIMUM,
    )


def check(spec: Spec) -> Iterator[Problem]:
    """One problem per (cluster, role, resource) that no node can hold (AP3513 when it also exceeds
    YARN's maximum allocation: one finding, whose fix then fits the nodes) and one per resource whose
    maximum allocation alone is too small, naming every cluster it stops."""
    below = _maximum_below_minimum(spec)
    if below is not None:
        yield below
    too_small: list[tuple[FlinkCluster, OverAllocation]] = []
    for c in spec.flink_clusters:
        over = {
            (o.role, o.resource): o
            for o in over_allocations(spec, c)
            if not (below is not None and o.resource == "memory")
        }
        for m in misfits(spec, c):
            o = over.pop((m.role, m.resource), None)
            yield _problem(spec, c, m) if o is None else _over_allocation(c, o, m)
        too_small.extend((c, o) for o in over.values())
    yield from _maximum_too_small(spec, too_small)
