"""Shared fixtures: paths, spec writing and rendering helpers."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.paths import REFERENCE_DIR, REPO_ROOT
from tests.support.specs import SpecSource, WriteSpec
from tests.support.specs import write_spec as write_spec_file

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
def write_spec(tmp_path: Path) -> WriteSpec:
    """`tests.support.specs.write_spec` into ``tmp_path``: ``write_spec(spec, name="spec.yaml")``."""

    def _write(spec: SpecSource, name: str = "spec.yaml") -> Path:
        return write_spec_file(tmp_path, spec, name)

    return _write
