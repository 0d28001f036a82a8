"""Helpers for diff tests: copies of the example stacks that tests may edit."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import yaml

from tests.support.paths import REPO_ROOT

STACKS = REPO_ROOT / "stacks"
EXAMPLE_STACKS = sorted(p.name for p in STACKS.glob("*.yaml") if not p.name.startswith("Pulumi."))


def copy_stacks(dest: Path) -> Path:
    """Copy ``stacks/`` (specs and bases) to ``dest/stacks`` and return that directory."""
    target = dest / "stacks"
    shutil.copytree(STACKS, target)
    return target


def load(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


UNORDERED_SCALAR_LISTS = {"platforms", "hosts", "allowedDevices"}


def reordered(value: Any, key: str = "") -> Any:
    """The same spec with every list whose order is not semantic reversed and every map's keys
    reversed (named lists, taints, platforms/hosts/allowedDevices; never args or extends)."""
    if isinstance(value, dict):
        return {k: reordered(value[k], str(k)) for k in reversed(list(value))}
    if isinstance(value, list):
        items = [reordered(v) for v in value]
        named = items and all(isinstance(i, dict) and "name" in i for i in items)
        if named or key in UNORDERED_SCALAR_LISTS or key == "taints":
            return list(reversed(items))
        return items
    return value
