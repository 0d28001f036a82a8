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

from accelplane.derive.node_fit import Misfit, app_request, misfits
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

_NAMES = {"jobManager": "JobManager", "taskManager": "TaskManager"}


def _q(resource: str, value: Decimal) -> str:
    return format_quantity(value, binary=resource == "memory")


def _problem(c: FlinkCluster, m: Misfit) -> Problem:
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
    return Problem(
        path,
        f"{unit} but the largest node of {where} has {_q(m.resource, m.largest)} ({per_pool}); a process "
        f"runs on one node, so {outcome}: use at most {_q(m.resource, m.largest)} or add a pool with larger "
        "nodes",
        PROCESS_EXCEEDS_NODE,
    )


def check(spec: Spec) -> Iterator[Problem]:
    """One problem per (cluster, role, resource) that no node can hold."""
    for c in spec.flink_clusters:
        for m in misfits(spec, c):
            yield _problem(c, m)
