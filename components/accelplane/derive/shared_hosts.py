"""Which GPU clusters may run TaskManagers on the same YARN/standalone host, and what they ask of it.

On Kubernetes the device plugin (or DRA) gives each GPU to one container; on YARN and standalone
hosts the discovery script's coordination file and the standalone start lock are the only thing
that keeps two TaskManagers off one GPU, and they work per FILE. So every cluster that may run on
a host must use that host's one file (and lock), in coordination mode, and the host must have the
GPUs all of them ask for. The host identities here are the facts the checks
(`accelplane.checks.shared_hosts`) and the property test are built on.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from accelplane.derive.discovery_paths import NODE_PLATFORMS
from accelplane.derive.gpu_resources import candidate_pools
from accelplane.derive.slot_groups import spans_models, standalone_hosts
from accelplane.model import FlinkCluster, Spec
from accelplane.names import normalize_gpu_model


def cluster_hosts(spec: Spec, cluster: FlinkCluster) -> frozenset[str]:
    """Hosts a GPU cluster on YARN/standalone may run TaskManagers on: every host its candidate
    pools list, and ``pool <name>`` for a pool that lists none (its nodes are then known only as
    the pool's). Empty for other clusters. Computed once per cluster (`Spec.memo`)."""

    def make() -> frozenset[str]:
        if not cluster.uses_gpus or cluster.platform not in NODE_PLATFORMS:
            return frozenset()
        out: set[str] = set()
        pools = candidate_pools(spec, cluster)
        if cluster.platform == "yarn" and spec.yarn is not None and not spec.yarn.node_labels:
            # without node partitions YARN places a GPU container on any node that offers yarn.io/gpu
            pools = [p for p in spec.node_pools if p.gpu is not None and p.platform == "yarn"]
        for pool in pools:
            if pool.platform != cluster.platform:
                continue
            out.update(pool.hosts or (f"pool {pool.name}",))
        return frozenset(out)

    return spec.memo.get_or_make("cluster_hosts", cluster, make)


def node_clusters(spec: Spec) -> list[FlinkCluster]:
    """GPU clusters whose TaskManagers run on YARN/standalone hosts, in spec order."""
    return [c for c in spec.flink_clusters if cluster_hosts(spec, c)]


@dataclass(frozen=True)
class Sharing:
    """Two clusters that may run TaskManagers on the same hosts."""

    first: FlinkCluster
    second: FlinkCluster
    hosts: tuple[str, ...]


def sharings(spec: Spec) -> Iterator[Sharing]:
    """Every pair of node clusters with hosts in common (spec order), with those hosts sorted."""
    clusters = node_clusters(spec)
    for i, a in enumerate(clusters):
        for b in clusters[i + 1 :]:
            common = cluster_hosts(spec, a) & cluster_hosts(spec, b)
            if common:
                yield Sharing(a, b, tuple(sorted(common)))


def host_capacity(spec: Spec, host: str) -> dict[str, int]:
    """GPUs of a listed standalone host by normalised model (``""``: pools that name none)."""
    out: dict[str, int] = {}
    for pool in spec.node_pools:
        if pool.gpu is not None and host in pool.hosts and pool.platform == "standalone":
            key = normalize_gpu_model(pool.gpu.model or "")
            out[key] = out.get(key, 0) + pool.gpu.per_node
    return out


def host_demand(spec: Spec) -> dict[str, dict[str, dict[str, int]]]:
    """GPUs each standalone cluster's start scripts take on each listed host, by model:
    ``{host: {cluster: {normalised model: GPUs}}}`` (a cluster whose pools name no single model
    counts under ``""``)."""
    out: dict[str, dict[str, dict[str, int]]] = {}
    for cluster in spec.flink_clusters:
        if cluster.platform != "standalone" or not cluster.uses_gpus:
            continue
        multimodel = spans_models(spec, cluster)
        models = {
            normalize_gpu_model(p.gpu.model or "") for p in candidate_pools(spec, cluster) if p.gpu is not None
        }
        single = next(iter(models)) if len(models) == 1 else ""
        for h in standalone_hosts(spec, cluster):
            if not h.taskmanagers:
                continue
            per = out.setdefault(h.host, {}).setdefault(cluster.name, {})
            for name, _ in h.resources:
                key = name.removeprefix("gpu-") if multimodel else single
                per[key] = per.get(key, 0) + h.taskmanagers * cluster.gpus_per_task_manager
    return out
