"""Generate the spec reference (docs/spec-reference.md) from the JSON Schema (so docs can never drift).

`accelplane schema --markdown` prints it; `make readme` writes it (`update_readme`); a test checks
that docs/spec-reference.md contains exactly this text between the ``<!-- spec-reference:start -->``
and ``<!-- spec-reference:end -->`` markers.
"""

from __future__ import annotations

import json
from typing import Any

from accelplane.schema_document import load_schema

START = "<!-- spec-reference:start -->"
END = "<!-- spec-reference:end -->"


def _resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """Follow a local ``$ref`` (merging sibling keywords over the target, as 2020-12 does)."""
    ref = node.get("$ref")
    if not isinstance(ref, str):
        return node
    target: Any = schema
    for part in ref.removeprefix("#/").split("/"):
        target = target[part]
    resolved = dict(_resolve(schema, target))
    resolved.update({k: v for k, v in node.items() if k != "$ref"})
    return resolved


def _type_of(schema: dict[str, Any], node: dict[str, Any]) -> str:
    node = _resolve(schema, node)
    if "enum" in node:
        return " \\| ".join(f"`{v}`" if v != "" else '`""`' for v in node["enum"])
    if "const" in node:
        return f"`{node['const']}`"
    if "anyOf" in node:
        return "quantity" if any(s.get("pattern") for s in node["anyOf"]) else "scalar"
    t = node.get("type", "any")
    if t == "array":
        return f"list of {_type_of(schema, node.get('items', {}))}"
    if t == "object" and "properties" not in node:
        return "map"
    return str(t)


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _rows(schema: dict[str, Any], node: dict[str, Any], prefix: str, out: list[str]) -> None:
    node = _resolve(schema, node)
    required = set(node.get("required", []))
    for name, prop in node.get("properties", {}).items():
        if name in ("$schema", "$remove"):
            continue
        prop = _resolve(schema, prop)
        path = f"{prefix}.{name}" if prefix else name
        req = "yes" if name in required else ""
        text = prop.get("description", "")
        if "default" in prop:
            text = f"{text} Default: `{json.dumps(prop['default'])}`."
        out.append(f"| `{path}` | {_type_of(schema, prop)} | {req} | {_cell(text)} |")
        if prop.get("type") == "object" and "properties" in prop:
            _rows(schema, prop, path, out)
        elif prop.get("type") == "array":
            items = _resolve(schema, prop.get("items", {}))
            if items.get("type") == "object" and "properties" in items:
                _rows(schema, items, f"{path}[]", out)


def markdown_reference() -> str:
    """The spec reference as a Markdown table (one row per field, dotted paths)."""
    schema = load_schema()
    lines = [
        "| Field | Type | Required | Description |",
        "|---|---|---|---|",
    ]
    _rows(schema, schema, "", lines)
    return "\n".join(lines) + "\n"


def update_readme(path: str) -> bool:
    """Rewrite the spec reference between the markers in ``path``; return True when it changed."""
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    pre, rest = text.split(START, 1)
    _, post = rest.split(END, 1)
    new = f"{pre}{START}\n{markdown_reference()}{END}{post}"
    if new != text:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(new)
    return new != text
