"""`accelplane diff`: compare two rendered trees (from specs, directories or git revisions).

Public entry points: `load_side` (``accelplane.diff.trees``), `compare` (two sides → `DiffResult`)
and the formatters in ``accelplane.diff.formats``. See docs/diff.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from accelplane.diff.artifacts import diff_trees, k8s_manifests
from accelplane.diff.changes import KIND_ORDER, ArtifactDiff, Tree
from accelplane.diff.impact import impacts
from accelplane.diff.impact.common import Impact
from accelplane.diff.trees import Side, load_side
from accelplane.model import Spec

__all__ = ["DiffResult", "Side", "compare", "compare_trees", "load_side"]


@dataclass(frozen=True)
class DiffResult:
    """Everything the formatters print."""

    old_label: str
    new_label: str
    artifacts: tuple[ArtifactDiff, ...]
    impacts: tuple[Impact, ...]

    @property
    def equal(self) -> bool:
        """True when the two sides render identically (modulo list order where it is not semantic)."""
        return not self.artifacts

    @property
    def refused(self) -> bool:
        """True when an impact line reports an error-level day-2 finding (AP16xx): the change would
        lose running work or stop `pulumi up` half-way, so `accelplane diff` exits 3."""
        return any(i.finding is not None and not i.finding.is_warning for i in self.impacts)

    def counts(self) -> dict[str, dict[str, int]]:
        """``{kind: {added, removed, changed, renamed}}`` for kinds that have differences."""
        out: dict[str, dict[str, int]] = {}
        for kind in KIND_ORDER:
            mine = [a for a in self.artifacts if a.kind == kind]
            if mine:
                out[kind] = {
                    status: sum(1 for a in mine if a.status == status)
                    for status in ("added", "removed", "changed", "renamed")
                }
        return out

    def to_json(self) -> dict[str, Any]:
        """Plain data for ``--format json`` (schema version 1)."""
        return {
            "version": 1,
            "old": self.old_label,
            "new": self.new_label,
            "equal": self.equal,
            "summary": self.counts(),
            "impact": [i.to_json() for i in self.impacts],
            "artifacts": [a.to_json() for a in self.artifacts],
        }


def compare_trees(
    old: Tree,
    new: Tree,
    old_label: str = "OLD",
    new_label: str = "NEW",
    old_model: Spec | None = None,
    new_model: Spec | None = None,
) -> DiffResult:
    """Diff two rendered trees and derive the impact summary."""
    artifacts = diff_trees(old, new, old_label, new_label)
    manifests = [*k8s_manifests(old), *k8s_manifests(new)]
    return DiffResult(
        old_label, new_label, tuple(artifacts), tuple(impacts(artifacts, manifests, old_model, new_model))
    )


def compare(old: Side, new: Side) -> DiffResult:
    """Diff two loaded sides."""
    return compare_trees(old.files, new.files, old.label, new.label, old.model, new.model)
