"""The spec's JSON Schema document, and the defaults it declares.

Every default of the spec lives once, as a ``default`` keyword in ``schemas/spec.schema.json``: the
model reads it from there (`schema_default`), docs/spec-reference.md prints it, and
``tests/foundation/test_defaults.py`` checks that every declared default is what a spec that omits
the field gets. Only JSON is parsed here (no jsonschema), so building a model stays cheap.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from accelplane.package_data import schema_path


@cache
def load_schema() -> dict[str, Any]:
    """Return the spec schema (parsed once per process)."""
    with schema_path().open(encoding="utf-8") as fh:
        schema: dict[str, Any] = json.load(fh)
    return schema


def property_schema(path: str) -> dict[str, Any]:
    """The schema of the property at a dotted ``path``: ``discovery.installDir`` starts at the top
    level, ``$defs.queue.weight`` at a shared definition; ``$ref``s on the way are followed."""
    schema = load_schema()
    parts = path.split(".")
    node: dict[str, Any]
    if parts[0] == "$defs":
        node, parts = schema["$defs"][parts[1]], parts[2:]
    else:
        node = schema
    for name in parts:
        while "properties" not in node and "$ref" in node:
            node = schema["$defs"][node["$ref"].rsplit("/", 1)[-1]]
        node = node["properties"][name]
    return node


@cache
def schema_default(path: str) -> Any:
    """The ``default`` the schema declares for the property at ``path`` (see `property_schema`);
    a KeyError when it declares none, so a typo can never silently become ``None``."""
    return property_schema(path)["default"]


def python_pattern(pattern: str) -> str:
    """The Python regex that means what the ECMA-262 ``pattern`` of the schema means.

    JSON Schema patterns are ECMA-262 regexes, where ``$`` (no multiline flag) matches only at the
    very end of the input. Python's ``$`` also matches before a final ``"\\n"``, so ``"flink\\n"``
    would satisfy ``^[a-z]+$`` under ``re.search``. Every ``$`` outside a character class becomes
    ``\\Z`` (end of string); a ``$`` inside a class is a literal dollar and is escaped, which keeps
    its meaning in both syntaxes. Both validators (jsonschema as the authority, and the generated
    `accelplane._generated.schema_fast`) apply the schema's patterns through this one translation, so they
    agree on every string by construction.
    """
    out: list[str] = []
    i, in_class = 0, False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
            out.append("\\$" if ch == "$" else ch)
        elif ch == "[":
            in_class = True
            out.append(ch)
        else:
            out.append("\\Z" if ch == "$" else ch)
        i += 1
    return "".join(out)
