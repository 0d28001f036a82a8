"""Clusters on shared YARN/standalone hosts (issue 38.1): the checks that keep one coordination
file per host, coordination on and the hosts' GPUs enough for all of them, and a property test
that every set of clusters the validator accepts, started in any order and interleaving (with
TaskManagers dying and being started again), never gives one GPU to two live owners. The
allocations are the discovery script's own (`allocate` on real files, one per host and path);
only owners and their liveness are simulated."""

from __future__ import annotations

import copy
import itertools
from pathlib import Path
from typing import Any

import pytest
from accelplane.derive.slot_groups import standalone_hosts
from accelplane.discovery import gpu_discovery as gd
from accelplane.errors import SpecErrors
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.support.specs import model_of, write_spec

HOSTS = ["gpu-01.example.internal", "gpu-02.example.internal"]


def _cluster(name: str, replicas: int, amount: int, pool: str = "l4", **discovery: Any) -> dict[str, Any]:
    c: dict[str, Any] = {
        "name": name, "target": "standalone", "mode": "session", "version": "1.20",
        "jobManager": {"cpu": 1, "memory": "1Gi"},
        "taskManager": {"replicas": replicas, "slots": 1, "cpu": 1, "memory": "1Gi",
                        "gpu": {"amount": amount, "pool": pool}},
    }  # fmt: skip
    if discovery:
        c["discovery"] = discovery
    return c


def _spec(*clusters: dict[str, Any], per_node: int = 4, hosts: list[str] | None = None) -> dict[str, Any]:
    return {
        "cluster": {"name": "edge", "platforms": ["standalone"]},
        "nodePools": [
            {"name": "l4", "platform": "standalone", "nodes": len(hosts or HOSTS), "hosts": hosts or HOSTS,
             "gpu": {"vendor": "nvidia", "model": "NVIDIA L4", "perNode": per_node}},
        ],
        "flink": {"clusters": list(clusters)},
    }  # fmt: skip


def _codes(tmp_path: Path, data: dict[str, Any]) -> list[str]:
    try:
        model_of(write_spec(tmp_path, data))
    except SpecErrors as e:
        return sorted(x.finding.code for x in e.errors if x.finding is not None and not x.is_warning)
    return []


def test_a_per_cluster_coordination_file_on_shared_hosts_is_an_error(tmp_path: Path) -> None:
    """Issue 38.1a: both clusters' TaskManagers got GPUs 0,1 (one file each); validate was ok."""
    data = _spec(_cluster("alpha", 2, 1), _cluster("beta", 2, 1, coordinationFile="/var/lib/accelplane/beta"))
    assert _codes(tmp_path, data) == ["AP8065"]
    alone = _spec(_cluster("beta", 2, 1, coordinationFile="/var/lib/accelplane/beta"))
    assert _codes(tmp_path, alone) == []  # a cluster alone on its hosts may name its file


def test_coordination_off_on_shared_hosts_is_an_error(tmp_path: Path) -> None:
    """Issue 38.1b: a second cluster with coordination: false took GPUs 0,1 too, no finding."""
    data = _spec(_cluster("alpha", 2, 1), _cluster("beta", 2, 1, coordination=False))
    assert _codes(tmp_path, data) == ["AP8066"]


def test_coordination_off_with_several_taskmanagers_on_a_host_is_an_error(tmp_path: Path) -> None:
    """Found by the property below: one cluster, coordination off, 3 TaskManagers on 2 hosts: the
    host script starts two on one host, and both get the host's first GPUs."""
    assert _codes(tmp_path, _spec(_cluster("alpha", 3, 1, coordination=False))) == ["AP8068"]
    assert _codes(tmp_path, _spec(_cluster("alpha", 2, 1, coordination=False))) == []


def test_coordination_off_on_shared_and_crowded_hosts_is_one_finding(tmp_path: Path) -> None:
    """One fix (remove discovery.coordination: false), one finding (#39 item 4): the shared-host
    finding also names the hosts where the cluster starts several TaskManagers."""
    data = _spec(_cluster("alpha", 2, 1), _cluster("beta", 3, 1, coordination=False))
    assert _codes(tmp_path, data) == ["AP8066"]
    try:
        model_of(write_spec(tmp_path, data))
    except SpecErrors as e:
        [message] = [x.message for x in e.errors]
    assert "it also starts several TaskManagers on" in message
    data["flink"]["clusters"][1].pop("discovery")  # the fix
    assert _codes(tmp_path, data) == []


def test_total_gpu_demand_per_host_is_checked_across_clusters(tmp_path: Path) -> None:
    """Issue 38.1: two clusters asking 8 GPUs per host on 4-GPU hosts validated."""
    data = _spec(_cluster("alpha", 4, 2), _cluster("beta", 4, 2))
    assert _codes(tmp_path, data) == ["AP8067"]
    assert _codes(tmp_path, _spec(_cluster("alpha", 2, 2), _cluster("beta", 2, 2))) == []


def test_yarn_without_node_labels_shares_every_gpu_node(tmp_path: Path) -> None:
    """Without node partitions YARN may place any GPU container on any GPU node, so two YARN
    clusters naming different pools still share hosts (unless Docker isolates each container)."""
    data: dict[str, Any] = {
        "cluster": {"name": "y", "platforms": ["yarn"]},
        "nodePools": [
            {"name": "t4", "platform": "yarn", "nodes": 2, "gpu": {"vendor": "nvidia", "model": "Tesla T4", "perNode": 2}},
        ],
        "flink": {"clusters": [
            {"name": "a", "target": "yarn", "taskManager": {"gpu": {"amount": 1}}},
            {"name": "b", "target": "yarn", "taskManager": {"gpu": {"amount": 1}},
             "discovery": {"coordinationFile": "/var/lib/accelplane/b"}},
        ]},
    }  # fmt: skip
    assert "AP8065" in _codes(tmp_path, data)
    isolated = copy.deepcopy(data)
    isolated["yarn"] = {"docker": {"enabled": True}}
    assert "AP8065" not in _codes(tmp_path, isolated)


# -- the property -----------------------------------------------------------------------------------


class Host:
    """One host: its GPUs, a directory standing for its file system, simulated owners."""

    def __init__(self, root: Path, name: str, gpus: int) -> None:
        self.root = root / name
        self.root.mkdir(parents=True)
        self.gpus = [gd.Gpu(i, f"GPU-{name}-{i}") for i in range(gpus)]
        self.free_taken: dict[int, list[str]] = {}  # owner -> GPUs of a TaskManager without coordination


class Owners:
    """Simulated TaskManager processes: a pid each, alive until killed."""

    def __init__(self) -> None:
        self.next = itertools.count(1000)
        self.alive: set[int] = set()

    def spawn(self) -> int:
        pid = next(self.next)
        self.alive.add(pid)
        return pid


def _live_holders(host: Host, files: set[str], owners: Owners) -> dict[str, list[int]]:
    held: dict[str, list[int]] = {}
    for f in files:
        path = host.root / f.lstrip("/")
        if path.exists():
            for r in gd.parse_records(path.read_bytes(), str(path)):
                if r.pid in owners.alive:
                    held.setdefault(r.key, []).append(r.pid)
    for pid, keys in host.free_taken.items():
        if pid in owners.alive:
            for k in keys:
                held.setdefault(k, []).append(pid)
    return held


clusters_strategy = st.lists(
    st.fixed_dictionaries(
        {"replicas": st.integers(1, 3), "amount": st.integers(1, 2),
         "coordination": st.sampled_from([True, True, True, False]),
         "override": st.sampled_from([False, False, False, True])}
    ),
    min_size=1,
    max_size=3,
)  # fmt: skip


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(spec_clusters=clusters_strategy, per_node=st.integers(2, 8), data=st.data())
def test_accepted_clusters_never_share_a_gpu(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch,
    spec_clusters: list[dict[str, Any]], per_node: int, data: st.DataObject,
) -> None:  # fmt: skip
    tmp = tmp_path_factory.mktemp("shared")
    clusters = []
    for i, c in enumerate(spec_clusters):
        discovery: dict[str, Any] = {}
        if not c["coordination"]:
            discovery["coordination"] = False
        if c["override"]:
            discovery["coordinationFile"] = f"/var/lib/accelplane/c{i}"
        clusters.append(_cluster(f"c{i}", c["replicas"], c["amount"], **discovery))
    try:
        spec = model_of(write_spec(tmp, _spec(*clusters, per_node=per_node)))
    except SpecErrors:
        event("refused")
        return  # refused: nothing may start
    event(f"accepted with {len(clusters)} cluster(s)")
    owners = Owners()
    owner_box: dict[str, int] = {}
    boot, pidns = gd.boot_id(), gd.pid_namespace()
    monkeypatch.setattr(gd, "current_owner", lambda opts, log, allocating=True: gd.Owner(owner_box["pid"], 1, boot, pidns))
    monkeypatch.setattr(gd, "owner_alive", lambda rec, b, p: rec.pid in owners.alive)
    hosts = {h: Host(tmp, h, per_node) for h in HOSTS}
    files = {c.coordination_file for c in spec.flink_clusters}
    # every TaskManager slot of every cluster on every host; a step starts (or restarts) one, or kills one
    slots = [(c, h.host) for c in spec.flink_clusters for h in standalone_hosts(spec, c) for _ in range(h.taskmanagers)]
    running: dict[int, int] = {}  # slot index -> pid
    for _ in range(data.draw(st.integers(1, 3 * len(slots) + 2), label="steps")):
        i = data.draw(st.integers(0, len(slots) - 1), label="slot")
        cluster, name = slots[i]
        host = hosts[name]
        if i in running and data.draw(st.booleans(), label="kill"):
            owners.alive.discard(running.pop(i))  # kill -9
        elif i not in running:
            pid = owners.spawn()
            if cluster.coordination:
                opts = gd.Options()
                opts.coordination = True
                opts.coordination_file = str(host.root / cluster.coordination_file.lstrip("/"))
                Path(opts.coordination_file).parent.mkdir(parents=True, exist_ok=True)
                owner_box["pid"] = pid
                try:
                    gd.allocate(host.gpus, cluster.gpus_per_task_manager, opts, gd.Log(), gd.Deadline(5))
                except gd.DiscoveryError:
                    owners.alive.discard(pid)  # the start script refuses: nothing runs
                    continue
            else:
                host.free_taken[pid] = [g.key for g in host.gpus[: cluster.gpus_per_task_manager]]
            running[i] = pid
        for h in hosts.values():
            shared = {k: pids for k, pids in _live_holders(h, files, owners).items() if len(pids) > 1}
            assert not shared, f"{h.root.name}: GPUs held twice {shared}"
    # Moving one of several clusters to a file of its own while the others run there is refused by
    # the checks (and `diff` says to stop its TaskManagers first), so no spec the validator accepts
    # ever runs two files on these hosts.
    if len(clusters) > 1:
        moved = copy.deepcopy(clusters)
        moved[0]["discovery"] = {"coordinationFile": "/var/lib/accelplane/moved"}
        assert "AP8065" in _codes(tmp, _spec(*moved, per_node=per_node))
