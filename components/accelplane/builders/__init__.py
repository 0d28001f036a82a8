"""Pure builders: typed model → plain artifacts. No builder imports pulumi.

Each family module exposes ``build(spec) -> Bundle``; `build_all` composes them in a fixed order
and returns one canonically ordered bundle that the renderer writes and the Pulumi program applies.
"""

from __future__ import annotations

from collections.abc import Callable

from accelplane.artifacts import Bundle
from accelplane.builders import (
    device_plugins,
    discovery_configmap,
    flink,
    node_image,
    priority,
    volcano,
    yarn,
)
from accelplane.model import Spec

Builder = Callable[[Spec], Bundle]

FAMILIES: tuple[tuple[str, Builder], ...] = (
    ("priority", priority.build),
    ("volcano", volcano.build),
    ("device-plugins", device_plugins.build),
    ("discovery", discovery_configmap.build),
    ("node-image", node_image.build),
    ("yarn", yarn.build),
    ("flink", flink.build),
)


class DuplicateArtifactError(RuntimeError):
    """Two builders produced the same object or file (a bug, not a user mistake)."""


def build_all(spec: Spec) -> Bundle:
    """Run every family's builder and return one bundle in canonical order."""
    total = Bundle()
    for _, build in FAMILIES:
        total.extend(build(spec))
    keys = [o.key for o in total.objects]
    paths = [f.path for f in total.files]
    dupes = {k for k in keys if keys.count(k) > 1} | {p for p in paths if paths.count(p) > 1}
    if dupes:
        raise DuplicateArtifactError(f"artifacts produced twice: {sorted(map(str, dupes))}")
    return total.sorted()
