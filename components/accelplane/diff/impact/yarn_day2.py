"""YARN day-2 steps a diff of rendered files implies (docs/yarn.md "Day 2"), from Hadoop 3.4.1's
ResourceManager and NodeManager code:

* (a NodeManager ``yarn.nodemanager.*`` key, its memory/vcores offer included: `yarn.yarn_impacts`)
* a new partition (``cluster-node-labels.txt``) must be added with ``yarn rmadmin
  -addToClusterNodeLabels`` before a NodeManager reports it: with distributed node labels the
  ResourceManager rejects labels it does not know (ResourceTrackerService.java:571-583, 958-979) and
  the NodeManager then runs in the default partition;
* a CapacityScheduler queue that disappears (deleted, renamed or moved to another parent: its path
  is gone) must be STOPPED and drained first, and a leaf that becomes a parent too
  (CapacitySchedulerConfigValidator.java:133-164, 203-215); everything else in
  ``capacity-scheduler.xml`` is applied by ``yarn rmadmin -refreshQueues``
  (CapacityScheduler.reinitialize, CapacityScheduler.java:458-480) except the resource calculator,
  which the ResourceManager reads only at start (CapacityScheduler.java:315-325);
* ``container-executor.cfg`` is read by container-executor at every container launch: reinstall it
  (root-owned, closed to group/other writes up to /, configuration.c:137-159); no restart.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from accelplane.diff.changes import ArtifactDiff
from accelplane.diff.impact.common import Impact, brief

CS = "yarn.scheduler.capacity."
CALCULATOR = f"{CS}resource-calculator"
QUEUES_KEY = re.compile(r"yarn\.scheduler\.capacity\.(root(?:\.[^.]+)*)\.queues")
LABELS_FILE = "cluster-node-labels.txt"


def _queue_paths(data: Any) -> tuple[set[str], set[str]]:
    """(every queue path, the parent queue paths) of a capacity-scheduler.xml's properties."""
    if not isinstance(data, dict):
        return set(), set()
    paths, parents = {"root"}, set()
    for key, value in data.items():
        m = QUEUES_KEY.fullmatch(str(key))
        if m is None:
            continue
        parents.add(m.group(1))
        paths.update(f"{m.group(1)}.{q.strip()}" for q in str(value).split(",") if q.strip())
    return paths, parents


def _capacity_impacts(a: ArtifactDiff) -> Iterator[Impact]:
    old_paths, old_parents = _queue_paths(a.old_data)
    new_paths, new_parents = _queue_paths(a.new_data)
    for path in sorted(old_paths - new_paths):
        leaf = path.rsplit(".", 1)[-1]
        moved = sorted(p for p in new_paths - old_paths if p.rsplit(".", 1)[-1] == leaf)
        how = f"moved to {', '.join(moved)}" if moved else "removed (or renamed)"
        yield Impact(
            "yarn",
            a.ident,
            f"queue {path} {how}: first set {CS}{path}.state=STOPPED, run yarn rmadmin -refreshQueues and wait "
            "until its applications finish; the ResourceManager refuses to delete a queue that is not "
            "STOPPED (CapacitySchedulerConfigValidator.java:145-156, Hadoop 3.4.1)",
        )
    for path in sorted((new_parents - old_parents) & (old_paths - old_parents)):
        yield Impact(
            "yarn",
            a.ident,
            f"queue {path} becomes a parent queue: it must be STOPPED first (set {CS}{path}.state=STOPPED, "
            "yarn rmadmin -refreshQueues, wait for its applications; CapacitySchedulerConfigValidator.java:203-215)",
        )
    calculator = [c for c in a.changes if c.leaf == CALCULATOR]
    if calculator:
        yield Impact(
            "yarn",
            a.ident,
            f"{a.ident}: {brief(calculator)}; the ResourceManager reads the resource calculator only at start "
            "(CapacityScheduler.java:315-325): restart it",
        )
    if [c for c in a.changes if c.leaf != CALCULATOR]:
        yield Impact(
            "yarn",
            a.ident,
            f"{a.ident}: apply with yarn rmadmin -refreshQueues (no restart; CapacityScheduler.reinitialize)",
        )


def _labels(lines: tuple[str, ...], sign: str) -> set[str]:
    out: set[str] = set()
    for line in lines:
        if line.startswith(sign) and not line.startswith(sign * 3):
            out.update(part.split("(", 1)[0].strip() for part in line[1:].split(",") if part.strip())
    return out


def _label_impacts(a: ArtifactDiff) -> Iterator[Impact]:
    added = sorted(_labels(a.text_diff, "+") - _labels(a.text_diff, "-"))
    removed = sorted(_labels(a.text_diff, "-") - _labels(a.text_diff, "+"))
    if added:
        yield Impact(
            "yarn",
            a.ident,
            f"new node partition {', '.join(added)}: run yarn rmadmin -addToClusterNodeLabels with the new "
            f"{LABELS_FILE} BEFORE restarting the NodeManagers that report it; the ResourceManager rejects a "
            "label it does not know and the NodeManager then serves the default partition "
            "(ResourceTrackerService.java:571-583)",
        )
    if removed:
        yield Impact(
            "yarn",
            a.ident,
            f"node partition {', '.join(removed)} no longer used: after no NodeManager reports it and no queue "
            "names it, yarn rmadmin -removeFromClusterNodeLabels",
        )


def yarn_day2_impacts(artifacts: list[ArtifactDiff]) -> Iterator[Impact]:
    """The YARN day-2 steps of a diff (module docstring)."""
    for a in artifacts:
        path = a.new_path or a.old_path or ""
        if a.kind == "hadoop-xml" and path.endswith("capacity-scheduler.xml") and a.status == "changed":
            yield from _capacity_impacts(a)
        elif path.endswith(LABELS_FILE):
            yield from _label_impacts(a)
        elif a.kind == "ini" and "/container-executor/" in path and a.status != "removed":
            yield Impact(
                "yarn",
                a.ident,
                f"{a.ident} {a.status}: merge it into container-executor.cfg on the pool's NodeManagers (after the "
                "site's top-level keys; root-owned, no group/other write up to /); read at each container "
                "launch, no restart",
            )
