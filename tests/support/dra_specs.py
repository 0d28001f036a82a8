"""Specs with DRA pools for the tests of tests/dra (built from the example stack ``dra-gpus``)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from accelplane.pipeline import ValidatedSpec, load_validated

from tests.conftest import STACKS_DIR
from tests.support import specs
from tests.support.specs import findings_of, write_spec

DRA_STACK = STACKS_DIR / "dra-gpus.yaml"


def stack_document() -> dict[str, Any]:
    """The example stack as one document: its bases merged in by accelplane's own loader (a spec
    written elsewhere may not extend the repository's bases)."""
    return specs.stack_document(DRA_STACK.stem)


def validated(doc: dict[str, Any], tmp_path: Path) -> ValidatedSpec:
    """Load and check a spec document (raises `SpecErrors`)."""
    return load_validated(write_spec(tmp_path, doc))


def errors(doc: dict[str, Any], tmp_path: Path) -> list[str]:
    """Every ``file: path: message`` line a spec document produces, errors and warnings (empty when
    it is valid without warnings)."""
    return [str(e) for e in findings_of(write_spec(tmp_path, doc))]


def with_version(doc: dict[str, Any], version: str) -> dict[str, Any]:
    """The document targeting another Kubernetes release."""
    out = copy.deepcopy(doc)
    out["kubernetes"] = {"version": version}
    return out
