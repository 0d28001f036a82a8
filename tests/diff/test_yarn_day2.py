"""YARN day-2 steps in the diff's impact summary (issue #38 item 5), each citing the Hadoop 3.4.1
code that makes it necessary (components/accelplane/diff/impact/yarn_day2.py)."""

from __future__ import annotations

from accelplane.diff import compare_trees
from accelplane.diff.changes import Tree


def _xml(**props: str) -> tuple[str, int]:
    body = "".join(f"<property><name>{k}</name><value>{v}</value></property>" for k, v in props.items())
    return f"<configuration>{body}</configuration>\n", 0o644


def _yarn(old: Tree, new: Tree) -> list[str]:
    return [i.message for i in compare_trees(old, new).impacts if i.category == "yarn"]


def test_nodemanager_offer_needs_a_nodemanager_restart() -> None:
    for key in ("yarn.nodemanager.resource.memory-mb", "yarn.nodemanager.resource.cpu-vcores"):
        old: Tree = {"yarn/yarn-site/v100.xml": _xml(**{key: "100"})}
        new: Tree = {"yarn/yarn-site/v100.xml": _xml(**{key: "200"})}
        assert _yarn(old, new) == [f"yarn/yarn-site/v100.xml: {key} 100 → 200; restarts the NodeManagers using it"]


def test_a_new_partition_is_added_to_the_cluster_before_nodemanagers_report_it() -> None:
    name = "yarn/resourcemanager/cluster-node-labels.txt"
    old: Tree = {name: ("gpu-a(exclusive=true)\n", 0o644)}
    new: Tree = {name: ("gpu-a(exclusive=true),gpu-b(exclusive=true)\n", 0o644)}
    (message,) = _yarn(old, new)
    assert message.startswith("new node partition gpu-b: run yarn rmadmin -addToClusterNodeLabels")
    assert "BEFORE restarting the NodeManagers" in message and "ResourceTrackerService.java" in message
    (gone,) = _yarn(new, old)
    assert gone.startswith("node partition gpu-b no longer used") and "-removeFromClusterNodeLabels" in gone


def test_deleting_renaming_or_moving_a_queue_needs_it_stopped_first() -> None:
    cs = "yarn/capacity-scheduler.xml"
    q = "yarn.scheduler.capacity.root"
    old: Tree = {cs: _xml(**{f"{q}.queues": "a,b,c", f"{q}.b.capacity": "50"})}
    deleted: Tree = {cs: _xml(**{f"{q}.queues": "a,c"})}
    messages = _yarn(old, deleted)
    assert messages[0].startswith(f"queue root.b removed (or renamed): first set {q}.b.state=STOPPED, run yarn rmadmin -refreshQueues")
    assert "CapacitySchedulerConfigValidator.java:145-156" in messages[0]
    assert messages[-1] == f"{cs}: apply with yarn rmadmin -refreshQueues (no restart; CapacityScheduler.reinitialize)"
    moved: Tree = {cs: _xml(**{f"{q}.queues": "a,c", f"{q}.c.queues": "b", f"{q}.c.b.capacity": "50"})}
    messages = _yarn(old, moved)
    assert messages[0].startswith("queue root.b moved to root.c.b: first set")
    assert messages[1].startswith("queue root.c becomes a parent queue: it must be STOPPED first")


def test_capacity_changes_refresh_but_the_calculator_needs_a_restart() -> None:
    cs = "yarn/capacity-scheduler.xml"
    old: Tree = {cs: _xml(**{"yarn.scheduler.capacity.root.queues": "a", "yarn.scheduler.capacity.root.a.capacity": "50"})}
    new: Tree = {cs: _xml(**{"yarn.scheduler.capacity.root.queues": "a", "yarn.scheduler.capacity.root.a.capacity": "60"})}
    assert _yarn(old, new) == [f"{cs}: apply with yarn rmadmin -refreshQueues (no restart; CapacityScheduler.reinitialize)"]
    calc = "yarn.scheduler.capacity.resource-calculator"
    old = {cs: _xml(**{calc: "org.apache.hadoop.yarn.util.resource.DefaultResourceCalculator"})}
    new = {cs: _xml(**{calc: "org.apache.hadoop.yarn.util.resource.DominantResourceCalculator"})}
    (message,) = _yarn(old, new)
    assert "reads the resource calculator only at start" in message and "restart it" in message


def test_container_executor_cfg_is_reinstalled_not_restarted() -> None:
    name = "yarn/container-executor/v100.cfg"
    old: Tree = {name: ("[docker]\nmodule.enabled=true\n", 0o644)}
    new: Tree = {name: ("[docker]\nmodule.enabled=true\ndocker.allowed.networks=host\n", 0o644)}
    (message,) = _yarn(old, new)
    assert "root-owned" in message and "no restart" in message
