"""Same spec → byte-identical files; permuting every unordered list changes nothing."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
import yaml
from accelplane.cli import main
from accelplane.schema_document import load_schema

from tests.conftest import EXAMPLE_SPECS
from tests.support.render import files_for


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("spec", EXAMPLE_SPECS, ids=lambda p: p.stem)
def test_render_twice_is_byte_identical(spec: Path, tmp_path: Path) -> None:
    assert main(["render", str(spec), "--out", str(tmp_path / "a"), "-q"]) == 0
    assert main(["render", str(spec), "--out", str(tmp_path / "b"), "-q"]) == 0
    a, b = _tree(tmp_path / "a"), _tree(tmp_path / "b")
    assert a == b
    assert all(not text or text.endswith(b"\n") for text in a.values())
    # re-rendering into the same directory replaces it cleanly
    assert main(["render", str(spec), "--out", str(tmp_path / "a"), "-q"]) == 0
    assert _tree(tmp_path / "a") == a


def _ordered_paths(schema: dict[str, Any]) -> set[str]:
    """Property names whose lists keep order (marked `x-ordered` in the schema)."""
    names: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.get("properties", {}).items():
                if isinstance(value, dict) and value.get("x-ordered"):
                    names.add(key)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    return names


def _permute(value: Any, rng: random.Random, ordered: set[str], key: str = "") -> Any:
    if isinstance(value, dict):
        return {k: _permute(v, rng, ordered, k) for k, v in value.items()}
    if isinstance(value, list):
        items = [_permute(v, rng, ordered, key) for v in value]
        if key not in ordered:
            items.reverse()
            rng.shuffle(items)
        return items
    return value


@pytest.mark.parametrize("spec", EXAMPLE_SPECS, ids=lambda p: p.stem)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_permuting_lists_changes_nothing(spec: Path, tmp_path: Path, seed: int) -> None:
    ordered = _ordered_paths(load_schema())
    assert {"extends", "args"} <= ordered
    rng = random.Random(seed)
    # copy the spec and its bases, permuting every unordered list in each file
    for src in [*spec.parent.glob("*.yaml"), *spec.parent.glob("base/*.yaml")]:
        dst = tmp_path / src.relative_to(spec.parent)
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_text(
            yaml.safe_dump(_permute(yaml.safe_load(src.read_text()), rng, ordered), sort_keys=False)
        )
    assert files_for(tmp_path / spec.name) == files_for(spec)
