"""The generated fast validator never accepts what jsonschema rejects (it only decides who reports).

`accelplane.schema.validate_document` trusts `schema_fast.is_valid` when it says "valid" and asks
jsonschema otherwise, so the one property that matters is: fast-valid implies jsonschema-valid.
The converse holds too: both apply every schema pattern through `schema_document.python_pattern`
(ECMA-262 ``$``, the very end of the string), so they agree on every document.
"""

from __future__ import annotations

from typing import Any

from accelplane.schema import full_problems
from accelplane.schema_document import load_schema
from accelplane.schema_fast import is_valid
from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.schema_strategy import spec_documents
from tests.fuzz.test_fuzz_specs import _corrupt

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
        assert problems, "fast check refused a document jsonschema accepts"
