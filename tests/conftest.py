"""Shared fixtures: paths, spec writing and rendering helpers."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.validators import REFERENCE_DIR, REPO_ROOT

STACKS_DIR = REPO_ROOT / "stacks"
EXAMPLE_SPECS = sorted(p for p in STACKS_DIR.glob("*.yaml") if not p.name.startswith("Pulumi."))


@pytest.fixture
def repo_root() -> Path:
    """The repository root."""
    return REPO_ROOT


@pytest.fixture
def reference_dir() -> Path:
    """tests/upstream (upstream files byte for byte, with provenance)."""
    assert REFERENCE_DIR.is_dir(), f"{REFERENCE_DIR} missing"
    return REFERENCE_DIR


@pytest.fixture
def write_spec(tmp_path: Path) -> Callable[..., Path]:
    """Write a spec (dedented YAML text) to ``tmp_path/<name>`` and return its path."""

    def _write(text: str, name: str = "spec.yaml") -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return path

    return _write
