"""The schema is a contract editors can use: strict objects, descriptions, modelines, spec reference sync."""

from __future__ import annotations

import json
from typing import Any

from accelplane.package_data import schema_path
from accelplane.schema_docs import END, START, markdown_reference
from jsonschema import Draft202012Validator

from tests.conftest import EXAMPLE_SPECS, STACKS_DIR
from tests.support.paths import REPO_ROOT


def _objects(node: Any, path: str = "#") -> list[tuple[str, dict[str, Any]]]:
    found = []
    if isinstance(node, dict):
        if node.get("type") == "object":
            found.append((path, node))
        for k, v in node.items():
            found.extend(_objects(v, f"{path}/{k}"))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            found.extend(_objects(v, f"{path}/{i}"))
    return found


def test_schema_is_valid_draft_2020_12() -> None:
    schema = json.loads(schema_path().read_text())
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)


def test_every_object_is_closed_and_every_property_described() -> None:
    schema = json.loads(schema_path().read_text())
    defs = schema["$defs"]
    for path, obj in _objects(schema):
        if "properties" in obj:
            assert obj.get("additionalProperties") is False, f"{path}: additionalProperties must be false"
            for name, prop in obj["properties"].items():
                target = prop
                while "$ref" in target and "description" not in target:
                    ref = target["$ref"]
                    target = schema
                    for part in ref.removeprefix("#/").split("/"):
                        target = target[part]
                assert target.get("description"), f"{path}/properties/{name}: missing description"
        else:  # a map: keys and values must be constrained
            assert "additionalProperties" in obj and obj["additionalProperties"] is not True, path
    assert defs  # sanity


def test_example_specs_carry_the_modeline() -> None:
    for spec in [*EXAMPLE_SPECS, *sorted((STACKS_DIR / "base").glob("*.yaml"))]:
        first = spec.read_text().splitlines()[0]
        assert first.startswith("# yaml-language-server: $schema="), spec
        target = (spec.parent / first.split("=", 1)[1]).resolve()
        assert target == schema_path().resolve(), f"{spec}: modeline points at {target}"


def test_spec_reference_matches_schema() -> None:
    readme = (REPO_ROOT / "docs" / "spec-reference.md").read_text()
    assert START in readme and END in readme
    section = readme.split(START, 1)[1].split(END, 1)[0].strip("\n") + "\n"
    assert section == markdown_reference(), (
        "docs/spec-reference.md is stale: run `make readme`"
    )
