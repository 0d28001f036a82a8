"""Facts about one Flink cluster that need the whole spec, asked one way by checks, builders and
the other derivations (facts of the cluster alone are properties of `accelplane.model.FlinkCluster`:
`platform`, `on_kubernetes`, `uses_gpus`, `gpus_per_task_manager`, `TaskManager.cpu_amount`).

It imports no other Flink derivation, so `flink_keys` and `slot_groups` can both use it.
"""

from __future__ import annotations

from accelplane.derive.gpu_resources import candidate_pools
from accelplane.model import FlinkCluster, FlinkTarget, Spec

GPU_RESOURCE = "gpu"
"""Flink's external resource name for a cluster's GPUs (``external-resource.gpu.*``)."""


def standalone_workers(spec: Spec, cluster: FlinkCluster) -> list[tuple[str, int, int]]:
    """Hosts of a standalone GPU cluster's ``workers`` file: ``(host, TaskManagers, GPUs per node)``.

    The TaskManagers are spread round-robin over the hosts of the pools that can host them (in
    pool, then host order, each host once; a host in several pools counts its smallest GPU count); empty when the target is not standalone, there are no GPUs or the
    pools list no hosts.
    """
    if cluster.target != FlinkTarget.STANDALONE or not cluster.uses_gpus:
        return []
    per_host: dict[str, int] = {}
    for p in candidate_pools(spec, cluster):
        for h in p.hosts:
            # A host in two pools (two GPU models) must give every TaskManager its GPUs of each.
            n = p.gpu.per_node if p.gpu else 0
            per_host[h] = min(per_host.get(h, n), n)
    hosts = list(per_host.items())
    if not hosts:
        return []
    replicas = cluster.task_manager.replicas
    base, extra = divmod(replicas, len(hosts))
    return [(h, base + (1 if i < extra else 0), per_node) for i, (h, per_node) in enumerate(hosts)]
