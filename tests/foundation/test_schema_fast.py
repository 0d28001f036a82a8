"""The ahead-of-time schema validator (`accelplane._generated.schema_fast`) is what the pinned generator
makes from today's schema, and a valid spec never imports jsonschema."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from accelplane._generated.schema_fast import is_valid
from accelplane.schema import full_problems, validate_document
from accelplane.schema_codegen import GENERATOR_VERSION, TARGET, generate

from tests.support.paths import SOURCE_ROOT

REPO = SOURCE_ROOT.parent
STACKS = sorted(p for p in (REPO / "stacks").glob("*.yaml") if not p.name.startswith("Pulumi."))


def test_generated_module_is_what_the_pinned_generator_makes() -> None:
    """The installed fastjsonschema is the pinned one (pyproject and the file's header say which), and
    the committed module is byte for byte its output for today's schema."""
    import fastjsonschema

    assert fastjsonschema.VERSION == GENERATOR_VERSION
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert f'"fastjsonschema=={GENERATOR_VERSION}"' in pyproject
    committed = TARGET.read_text(encoding="utf-8")
    assert f"Generator: fastjsonschema=={GENERATOR_VERSION} " in committed.splitlines()[2]
    assert committed == generate(), (
        "components/accelplane/_generated/schema_fast.py is stale: run `make schema-fast`"
    )


def test_the_generator_refuses_another_fastjsonschema(monkeypatch: pytest.MonkeyPatch) -> None:
    import fastjsonschema

    monkeypatch.setattr(fastjsonschema, "VERSION", "0.0.1")
    with pytest.raises(RuntimeError, match=f"fastjsonschema=={GENERATOR_VERSION}"):
        generate()


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
