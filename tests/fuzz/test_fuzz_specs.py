"""Fuzzing over the spec schema: never a traceback, every rejection path-named, every acceptance valid."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from accelplane.builders import build_all
from accelplane.derive.file_names import NAME_MAX
from accelplane.errors import SpecErrors
from accelplane.pipeline import load_validated
from accelplane.render import bundle_files
from accelplane.schema import validate_document
from accelplane.schema_document import load_schema
from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.schema_strategy import spec_documents
from tests.support.render import files_for
from tests.support.validators import validate_rendered_files

pytestmark = pytest.mark.slow  # hypothesis over generated specs

SCHEMA = load_schema()
WORKDIR = Path(tempfile.mkdtemp(prefix="accelplane-fuzz-"))


def _check(document: Any) -> str:
    """Run the whole pipeline on ``document``; return 'accepted' or 'rejected', fail on anything else."""
    path = WORKDIR / "spec.yaml"
    path.write_text(yaml.safe_dump(document, allow_unicode=True), encoding="utf-8")
    try:
        validated = load_validated(path)
    except SpecErrors as exc:
        assert exc.errors, "a rejection must carry at least one error"
        for error in exc.errors:
            assert error.file.endswith("spec.yaml"), error
            assert error.path and error.message, error
        return "rejected"
    files = bundle_files(build_all(validated.model))
    too_long = [p for p in files if any(len(part.encode("utf-8")) > NAME_MAX for part in p.split("/"))]
    assert not too_long, f"an accepted spec renders file names longer than {NAME_MAX} bytes: {too_long}"
    validate_rendered_files(files)
    assert files_for(path) == files, "rendering must be deterministic"
    return "accepted"


@given(spec_documents(SCHEMA))
def test_strategy_only_generates_schema_valid_documents(document: dict[str, Any]) -> None:
    assert validate_document(document) == []


@given(spec_documents(SCHEMA))
def test_schema_valid_documents_never_crash(document: dict[str, Any]) -> None:
    _check(document)


def _corrupt(document: Any, data: st.DataObject) -> Any:
    """Replace one randomly chosen node of ``document`` by a random JSON value."""
    if isinstance(document, dict) and document and data.draw(st.booleans()):
        key = data.draw(st.sampled_from(sorted(document)))
        return {**document, key: _corrupt(document[key], data)}
    if isinstance(document, list) and document and data.draw(st.booleans()):
        i = data.draw(st.integers(0, len(document) - 1))
        return [*document[:i], _corrupt(document[i], data), *document[i + 1 :]]
    junk = st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
        max_leaves=5,
    )
    return data.draw(junk)


@given(spec_documents(SCHEMA), st.data())
def test_corrupted_documents_are_rejected_cleanly(document: dict[str, Any], data: st.DataObject) -> None:
    _check(_corrupt(document, data))
