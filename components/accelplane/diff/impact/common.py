"""What every impact category shares: the `Impact` record, category titles, path helpers.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from accelplane.diff.changes import EMBED_SEPARATOR, ArtifactDiff, Change
from accelplane.display import show_value
from accelplane.findings import Finding
from accelplane.lifecycle import group_of

CATEGORY_TITLES: dict[str, str] = {
    "queues": "Queues",
    "flink": "Flink clusters and GPU requests",
    "node-wide": "Node-wide restarts",
    "yarn": "YARN daemons",
    "pulumi": "Pulumi replacements and immutable fields",
    "day2": "Running work and transitions",
}
VOLCANO_GROUP = "scheduling.volcano.sh"
FLINK_KEY = re.compile(
    r"external-resources|external-resource\.[^.]+\.(amount|kubernetes\.config-key|yarn\.config-key)"
)
MAX_DETAILS = 6

@dataclass(frozen=True)
class Impact:
    """One line of the impact summary."""

    category: str
    subject: str
    message: str
    finding: Finding | None = None  # a day-2 finding the line reports (diff/impact/day2.py)

    def to_json(self) -> dict[str, str]:
        """Plain data for ``--format json``."""
        return {"category": self.category, "subject": self.subject, "message": self.message}


def starts(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith((prefix + ".", prefix + "[", prefix + EMBED_SEPARATOR))


def group_kind(a: ArtifactDiff) -> tuple[str, str]:
    api = a.api_version or ""
    manifest = a.new_data if a.new_data is not None else a.old_data
    kind = str(manifest.get("kind", "")) if isinstance(manifest, dict) else ""
    return (group_of(api), kind)


def k8s_artifacts(artifacts: Iterable[ArtifactDiff]) -> Iterator[ArtifactDiff]:
    return (a for a in artifacts if a.kind == "kubernetes")


def brief(changes: Iterable[Change], limit: int = MAX_DETAILS) -> str:
    parts = []
    items = list(changes)
    for c in items[:limit]:
        if c.text_diff:
            parts.append(f"{c.path} changed")
        elif c.op == "added":
            parts.append(f"{c.path} added ({show_value(c.new)})")
        elif c.op == "removed":
            parts.append(f"{c.path} removed (was {show_value(c.old)})")
        else:
            parts.append(f"{c.path} {show_value(c.old)} → {show_value(c.new)}")
    if len(items) > limit:
        parts.append(f"… {len(items) - limit} more")
    return "; ".join(parts)
