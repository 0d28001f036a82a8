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
