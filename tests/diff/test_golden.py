"""Golden outputs of every format for realistic changes (regenerate with UPDATE_GOLDEN=1)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from accelplane.diff import compare_trees
from accelplane.diff.formats import render

from tests.diff.scenarios import SCENARIOS, base_tree, scenario_tree

GOLDEN = Path(__file__).resolve().parent / "golden"
SUFFIX = {"text": "txt", "markdown": "md", "json": "json"}


def _check(name: str, actual: str) -> None:
    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.write_text(actual, encoding="utf-8")
    assert path.is_file(), f"{path} missing: run with UPDATE_GOLDEN=1 to create it"
    assert actual == path.read_text(encoding="utf-8"), (
        f"{name} differs from the golden file (UPDATE_GOLDEN=1)"
    )


@pytest.mark.parametrize("fmt", sorted(SUFFIX))
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_golden(scenario: str, fmt: str) -> None:
    result = compare_trees(base_tree(), scenario_tree(scenario), "base", scenario)
    assert not result.equal
    _check(f"{scenario}.{SUFFIX[fmt]}", render(result, fmt))


def test_golden_files_are_all_used() -> None:
    expected = {f"{s}.{suffix}" for s in SCENARIOS for suffix in SUFFIX.values()}
    assert {p.name for p in GOLDEN.iterdir()} == expected


def test_base_tree_equals_itself_in_every_format() -> None:
    result = compare_trees(base_tree(), base_tree(), "base", "base")
    assert result.equal
    assert render(result, "text") == "accelplane diff: base → base\nNo differences.\n"
    assert json.loads(render(result, "json"))["equal"] is True
    assert "no differences" in render(result, "markdown")
