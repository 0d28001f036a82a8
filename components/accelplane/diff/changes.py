"""What a diff is made of: artifact kinds, field changes (`Change`) and per-artifact diffs
(`ArtifactDiff`), and which kind a rendered path is.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

Op = Literal["added", "removed", "changed"]
Status = Literal["added", "removed", "changed", "renamed"]
FileEntry = tuple[str | bytes, int]
Tree = dict[str, FileEntry]

KIND_TITLES: dict[str, str] = {
    "kubernetes": "Kubernetes objects",
    "hadoop-xml": "Hadoop XML properties",
    "flink-config": "Flink / YAML config keys",
    "ini": "INI-style config",
    "yaml": "YAML documents",
    "text": "Text files",
    "binary": "Binary files",
}
KIND_ORDER = tuple(KIND_TITLES)
EMBED_SEPARATOR = " :: "
T = TypeVar("T")
NAME_SIMILARITY = 0.6
CONTENT_SIMILARITY = 0.5


class DiffInputError(Exception):
    """A side cannot be compared (e.g. two objects with the same identity): exit 2."""


@dataclass(frozen=True)
class Change:
    """One field/key-level change inside an artifact."""

    op: Op
    path: str
    leaf: str
    old: Any = None
    new: Any = None
    text_diff: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """Plain data for ``--format json``."""
        out: dict[str, Any] = {"op": self.op, "path": self.path, "key": self.leaf}
        if self.text_diff:
            out["text_diff"] = list(self.text_diff)
        else:
            if self.op != "added":
                out["old"] = _jsonable(self.old)
            if self.op != "removed":
                out["new"] = _jsonable(self.new)
        return out


@dataclass(frozen=True)
class ArtifactDiff:
    """Differences of one artifact: a Kubernetes object or a file."""

    kind: str
    ident: str
    status: Status
    old_path: str | None
    new_path: str | None
    old_ident: str | None = None
    api_version: str | None = None
    changes: tuple[Change, ...] = ()
    text_diff: tuple[str, ...] = ()
    note: str = ""
    old_data: Any = field(default=None, compare=False, repr=False)
    new_data: Any = field(default=None, compare=False, repr=False)
    sort_key: tuple[Any, ...] = field(default=(), compare=False, repr=False)

    @property
    def title(self) -> str:
        """One-line name: ``Queue streaming`` or ``old → new`` for renames."""
        if self.status == "renamed" and self.old_ident and self.old_ident != self.ident:
            return f"{self.old_ident} → {self.ident}"
        return self.ident

    def to_json(self) -> dict[str, Any]:
        """Plain data for ``--format json``."""
        out: dict[str, Any] = {
            "kind": self.kind,
            "id": self.ident,
            "status": self.status,
            "old_path": self.old_path,
            "new_path": self.new_path,
        }
        if self.old_ident is not None:
            out["old_id"] = self.old_ident
        if self.api_version is not None:
            out["api_version"] = self.api_version
        if self.note:
            out["note"] = self.note
        out["changes"] = [c.to_json() for c in self.changes]
        if self.text_diff:
            out["text_diff"] = list(self.text_diff)
        return out


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


# -- classification ---------------------------------------------------------------------------


def classify(path: str) -> str:
    """Artifact kind of a rendered file (or of a ConfigMap data key) from its path alone."""
    base = posixpath.basename(path)
    lower = base.lower()
    if path.startswith("kubernetes/") and lower.endswith((".yaml", ".yml")):
        return "kubernetes"
    if lower in ("config.yaml", "flink-conf.yaml"):
        return "flink-config"
    if lower.endswith(".xml"):
        return "hadoop-xml"
    if lower.endswith(".cfg"):
        return "ini"
    if lower.endswith((".yaml", ".yml")):
        return "yaml"
    return "text"
