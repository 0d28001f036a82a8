"""YARN daemon impacts: ``resource-types.xml``/``node-resources.xml``/GPU plugin settings, which
the ResourceManager/NodeManagers read only at start.
"""

from __future__ import annotations

from collections.abc import Iterator

from accelplane.diff.changes import ArtifactDiff, Change
from accelplane.diff.impact.common import Impact, brief

# -- YARN daemons ----------------------------------------------------------------------------------


def yarn_impacts(artifacts: list[ArtifactDiff]) -> Iterator[Impact]:
    for a in artifacts:
        if a.kind != "hadoop-xml":
            continue
        types = [c for c in a.changes if c.leaf.startswith("yarn.resource-types")]
        # every yarn.nodemanager.* key (types, plugins, the memory-mb/cpu-vcores offer, directories,
        # Docker runtime, partition): a NodeManager reads its yarn-site and node-resources only at start
        nodes = [c for c in a.changes if c.leaf.startswith("yarn.nodemanager.")]
        plugins: list[Change] = []
        if types:
            yield Impact(
                "yarn",
                a.ident,
                f"{a.ident}: {brief(types)}; the ResourceManager and every NodeManager must restart "
                "with the same resource types",
            )
        if nodes or plugins:
            yield Impact(
                "yarn", a.ident, f"{a.ident}: {brief(nodes + plugins)}; restarts the NodeManagers using it"
            )
        if a.status in ("added", "removed") and isinstance(a.new_data or a.old_data, dict):
            data = a.new_data if a.status == "added" else a.old_data
            if any(str(k).startswith("yarn.resource-types") for k in data):
                yield Impact(
                    "yarn", a.ident, f"{a.ident} {a.status}: restart the ResourceManager and NodeManagers"
                )
