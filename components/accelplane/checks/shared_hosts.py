"""Clusters that share YARN/standalone hosts share those hosts' GPUs: one coordination file (and
start lock) per host, coordination on for all of them, and no more GPUs asked of a host than it
has (`accelplane.derive.shared_hosts`). Issue 38.1: per-file coordination let two clusters' TaskManagers
hold the same GPUs with no finding."""

from __future__ import annotations

from collections.abc import Iterator

from accelplane.derive.flink_keys import devices_isolated_per_container
from accelplane.derive.shared_hosts import host_capacity, host_demand, sharings
from accelplane.derive.slot_groups import standalone_hosts
from accelplane.errors import Problem
from accelplane.findings import ERROR, declare
from accelplane.model import FlinkCluster, Spec
from accelplane.names import normalize_gpu_model

COORDINATION_FILE_SPLIT = declare(
    "AP8065", ERROR, "clusters that share hosts use different coordination files",
    fix="remove the per-cluster discovery.coordinationFile (every cluster on a host uses the host's one file)",
)
COORDINATION_OFF_ON_SHARED_HOSTS = declare(
    "AP8066", ERROR, "coordination is off for a cluster whose hosts another GPU cluster uses",
    fix="remove discovery.coordination: false",
)
SHARED_HOST_OVERCOMMITTED = declare(
    "AP8067", ERROR, "the clusters on a host ask for more GPUs than it has",
    fix="lower taskManager.replicas or gpu.amount of one of the clusters, or add hosts",
)
COORDINATION_OFF_SEVERAL_PER_HOST = declare(
    "AP8068", ERROR, "coordination is off for a standalone cluster that starts several TaskManagers on a host",
    fix="remove discovery.coordination: false (or give each host one TaskManager)",
)
MAX_HOSTS_NAMED = 4


def _hosts(hosts: tuple[str, ...] | list[str]) -> str:
    shown = ", ".join(hosts[:MAX_HOSTS_NAMED])
    return shown + (f" and {len(hosts) - MAX_HOSTS_NAMED} more" if len(hosts) > MAX_HOSTS_NAMED else "")


def _override(spec: Spec, c: FlinkCluster) -> bool:
    return c.coordination_file != spec.discovery.coordination_file


def check(spec: Spec) -> Iterator[Problem]:
    """One finding per cluster and root cause (a split file, coordination off), one per group of
    hosts that are over-asked by the same clusters."""
    split: dict[str, tuple[FlinkCluster, str, tuple[str, ...]]] = {}
    off: dict[str, tuple[FlinkCluster, str, tuple[str, ...]]] = {}
    for s in sharings(spec):
        if devices_isolated_per_container(spec, s.first) and devices_isolated_per_container(spec, s.second):
            continue  # YARN with Docker: each container sees only the GPUs YARN gave it
        for me, other in ((s.first, s.second), (s.second, s.first)):
            if not me.coordination:
                off.setdefault(me.name, (me, other.name, s.hosts))
        if s.first.coordination and s.second.coordination and s.first.coordination_file != s.second.coordination_file:
            culprits = [c for c in (s.first, s.second) if _override(spec, c)] or [s.second]
            for culprit in culprits:
                partner = s.second if culprit is s.first else s.first
                split.setdefault(culprit.name, (culprit, partner.name, s.hosts))
    for me, other_name, hosts in split.values():
        yield Problem(
            me.field_path("discovery", "coordinationFile"),
            f"Flink cluster {me.name} may run TaskManagers on {_hosts(hosts)}, which Flink cluster {other_name} uses "
            f"too, but records its GPUs in {me.coordination_file} while {other_name} uses another file: each file "
            "(and its start lock) knows only its own TaskManagers, so both clusters' TaskManagers get the same "
            f"GPUs. Remove the per-cluster discovery.coordinationFile, so every cluster on a host uses "
            f"discovery.coordinationFile ({spec.discovery.coordination_file}); change it only with the hosts' "
            "TaskManagers stopped",
            COORDINATION_FILE_SPLIT,
        )
    crowded = _crowded_without_coordination(spec)
    for me, other_name, hosts in off.values():
        also = (
            f" (it also starts several TaskManagers on {_hosts(crowded[me.name])}, which would get the same first GPUs)"
            if me.name in crowded
            else ""
        )
        yield Problem(
            me.field_path("discovery", "coordination"),
            f"Flink cluster {me.name} has coordination off, but Flink cluster {other_name} may run TaskManagers on "
            f"the same hosts ({_hosts(hosts)}): its TaskManagers take the first GPUs without looking at the "
            f"coordination file, the ones the other cluster's TaskManagers hold{also}. Remove discovery.coordination: false",
            COORDINATION_OFF_ON_SHARED_HOSTS,
        )
    for name, crowded_hosts in crowded.items():  # one finding per cluster: the shared-host one says it too
        if name not in off:
            yield _several_without_coordination(next(c for c in spec.flink_clusters if c.name == name), crowded_hosts)
    yield from _overcommitted(spec)


def _crowded_without_coordination(spec: Spec) -> dict[str, list[str]]:
    """Standalone GPU clusters with coordination off and the hosts where they start several
    TaskManagers: without coordination every TaskManager gets the host's first GPUs (Flink's own
    behaviour), so a standalone host script that starts two of them gives both the same GPUs."""
    found: dict[str, list[str]] = {}
    for c in spec.flink_clusters:
        if c.platform != "standalone" or not c.uses_gpus or c.coordination:
            continue
        crowded = [h.host for h in standalone_hosts(spec, c) if h.taskmanagers > 1]
        if crowded:
            found[c.name] = crowded
    return found


def _several_without_coordination(c: FlinkCluster, crowded: list[str]) -> Problem:
    """The finding for a cluster that starts several TaskManagers on a host without coordination."""
    return Problem(
        c.field_path("discovery", "coordination"),
        f"Flink cluster {c.name} has coordination off but starts several TaskManagers on "
        f"{_hosts(crowded)}: without the coordination file each of them gets the same first "
        f"{c.gpus_per_task_manager} GPU(s). Remove discovery.coordination: false, or give each host one "
        "TaskManager (taskManager.replicas at most the number of hosts)",
        COORDINATION_OFF_SEVERAL_PER_HOST,
    )


def _overcommitted(spec: Spec) -> Iterator[Problem]:
    groups: dict[tuple[tuple[str, ...], str, int, int], list[str]] = {}
    for host, by_cluster in host_demand(spec).items():
        if len(by_cluster) < 2:
            continue  # one cluster alone: the node-fit checks judge it
        capacity = host_capacity(spec, host)
        demand: dict[str, int] = {}
        for per in by_cluster.values():
            for model, n in per.items():
                demand[model] = demand.get(model, 0) + n
        over = [(m, n, capacity.get(m, 0)) for m, n in sorted(demand.items()) if m and n > capacity.get(m, 0)]
        total, have = sum(demand.values()), sum(capacity.values())
        if not over and total > have:
            over = [("", total, have)]
        for model, n, cap in over:
            groups.setdefault((tuple(sorted(by_cluster)), model, n, cap), []).append(host)
    by_name = {c.name: c for c in spec.flink_clusters}
    written = {normalize_gpu_model(p.gpu.model): p.gpu.model for p in spec.node_pools if p.gpu and p.gpu.model}
    for (names, model, n, cap), hosts in sorted(groups.items()):
        last = by_name[names[-1]]
        what = f"GPUs of model {written.get(model, model)}" if model else "GPUs"
        yield Problem(
            last.field_path("taskManager", "replicas"),
            f"Flink clusters {', '.join(names)} together start TaskManagers that take {n} {what} on "
            f"{_hosts(sorted(hosts))}, which ha{'s' if len(hosts) == 1 else 've'} {cap}; the start scripts of "
            "whichever starts last would refuse. Lower taskManager.replicas or gpu.amount of one of them, or add hosts",
            SHARED_HOST_OVERCOMMITTED,
        )
