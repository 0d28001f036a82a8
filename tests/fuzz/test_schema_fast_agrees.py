"""The generated fast validator never accepts what jsonschema rejects (it only decides who reports).

`accelplane.schema.validate_document` trusts `_generated.schema_fast.is_valid` when it says "valid" and asks
jsonschema otherwise, so the one property that matters is: fast-valid implies jsonschema-valid.
The converse holds too except where Python's ``$`` (before a final newline) is wider than the fast
check's ``\\Z``; such a document goes the slow way and is still judged by jsonschema.
"""

from __future__ import annotations

from typing import Any

import pytest
from accelplane._generated.schema_fast import is_valid
from accelplane.schema import full_problems
from accelplane.schema_document import load_schema
from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.schema_strategy import spec_documents
from tests.fuzz.test_fuzz_specs import _corrupt

pytestmark = pytest.mark.slow  # hypothesis over generated specs

SCHEMA = load_schema()


@given(spec_documents(SCHEMA))
def test_fast_validator_accepts_schema_valid_documents(document: dict[str, Any]) -> None:
    assert full_problems(document) == []
    assert is_valid(document)


@given(spec_documents(SCHEMA), st.data())
def test_fast_validator_never_accepts_an_invalid_document(document: dict[str, Any], data: st.DataObject) -> None:
    corrupted = _corrupt(document, data)
    problems = full_problems(corrupted)
    if is_valid(corrupted):
        assert problems == [], problems
    else:
        assert problems or _dollar_newline(corrupted), "fast check refused a document jsonschema accepts"


def _dollar_newline(value: Any) -> bool:
    """True when some string ends in a newline (the one known, harmless disagreement)."""
    if isinstance(value, str):
        return value.endswith("\n")
    if isinstance(value, dict):
        return any(_dollar_newline(k) or _dollar_newline(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_dollar_newline(v) for v in value)
    return False
