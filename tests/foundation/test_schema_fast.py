"""The ahead-of-time schema validator (`accelplane.schema_fast`) is current and never imports jsonschema."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from accelplane.schema import full_problems, validate_document
from accelplane.schema_codegen import TARGET, generate
from accelplane.schema_fast import is_valid

from tests.support.paths import SOURCE_ROOT

REPO = SOURCE_ROOT.parent
STACKS = sorted(p for p in (REPO / "stacks").glob("*.yaml") if not p.name.startswith("Pulumi."))


def test_generated_module_is_up_to_date() -> None:
    assert TARGET.read_text(encoding="utf-8") == generate(), (
        "components/accelplane/schema_fast.py is stale: run `make schema-fast`"
    )


@pytest.mark.parametrize("spec", STACKS, ids=lambda p: p.name)
def test_example_stacks_take_the_fast_path(spec: Path) -> None:
    from accelplane.spec_loader import load_spec

    data = load_spec(spec).data
    assert is_valid(data)
    assert full_problems(data) == []


def test_invalid_document_falls_back_to_every_error_with_paths() -> None:
    doc = yaml.safe_load("cluster: {name: Bad_Name, platforms: [mainframe]}\nbogus: 1\n")
    assert not is_valid(doc)
    problems = validate_document(doc)
    assert [p.path for p in problems] == [(), ("cluster", "name"), ("cluster", "platforms", 0)]


def test_validate_of_a_valid_spec_never_imports_jsonschema() -> None:
    code = (
        "import sys; from accelplane.cli import main; rc = main(['validate', '-q', sys.argv[1]]);"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('jsonschema', 'referencing', 'jinja2', 'accelplane.builders'));"
        "print(rc, bad)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(STACKS[0])], capture_output=True, text=True, check=True,
        env={"PYTHONPATH": str(SOURCE_ROOT), "PATH": "/usr/bin:/bin"},
    ).stdout
    assert out.strip() == "0 []"
