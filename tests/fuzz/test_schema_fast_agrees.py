"""The generated fast validator never accepts what jsonschema rejects (it only decides who reports).

`accelplane.schema.validate_document` trusts `_generated.schema_fast.is_valid` when it says "valid" and asks
jsonschema otherwise, so the one property that matters is: fast-valid implies jsonschema-valid.
The converse holds too: both apply every schema pattern through `schema_document.python_pattern`
(ECMA-262 ``$``, the very end of the string), so they agree on every document.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from accelplane._generated.schema_fast import is_valid
from accelplane.schema import _validator, full_problems
from accelplane.schema_document import load_schema
from accelplane.spec_loader import load_spec
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import EXAMPLE_SPECS
from tests.fuzz.schema_strategy import spec_documents
from tests.fuzz.test_fuzz_specs import _corrupt
from tests.support.hostile import WHITESPACE_VARIANTS, string_sites, with_variant

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
        assert problems, "fast check refused a document jsonschema accepts"


LONG = os.environ.get("ACCELPLANE_FUZZ_PROFILE") == "long"


@pytest.mark.parametrize("stack", EXAMPLE_SPECS, ids=lambda p: p.name)
def test_both_validators_agree_on_the_hostile_corpus(stack: Path) -> None:
    """Every string leaf and map key of an example stack with a trailing "\\n", a trailing space or
    a leading space (one variant per site in CI, rotating; all three with the long profile): the
    generated validator and jsonschema give the same verdict, and a name never passes with a
    trailing newline (the ``$`` both once read differently)."""
    data = load_spec(stack).data
    variants = list(WHITESPACE_VARIANTS.items())
    for i, site in enumerate(string_sites(data)):
        for name, variant in variants if LONG else [variants[i % len(variants)]]:
            document = with_variant(data, site, variant)
            fast, authority = is_valid(document), _validator().is_valid(document)
            assert fast == authority, f"{site} {name}: fast {fast}, jsonschema {authority}"
