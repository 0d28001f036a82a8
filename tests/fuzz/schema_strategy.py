"""Hypothesis strategies derived from `schemas/spec.schema.json` itself.

`hypothesis-jsonschema` does not work with current Hypothesis releases, so this module walks our
schema (the subset of Draft 2020-12 it uses: $ref, enum, const, anyOf, not, type, pattern, bounds,
items, uniqueItems, properties/required, propertyNames + additionalProperties maps) and builds a
strategy for documents that the schema accepts. A test checks that every generated document really
validates, so the strategy cannot silently drift from the schema.
"""

from __future__ import annotations

from typing import Any

from accelplane.schema_document import python_pattern
from hypothesis import strategies as st

MAX_ITEMS = 3


def _resolve(root: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        target: Any = root
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
    return node


def _string(node: dict[str, Any]) -> st.SearchStrategy[str]:
    lo, hi = node.get("minLength", 0), node.get("maxLength", 60)
    if "pattern" in node:
        # the pattern as both validators apply it (ECMA-262 `$`: the very end, never before a "\n")
        base = st.from_regex(python_pattern(node["pattern"]), fullmatch=True)
    else:
        base = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=min(hi, 40))
    strategy = base.filter(lambda s: lo <= len(s) <= hi)
    if "not" in node and "const" in node["not"]:
        forbidden = node["not"]["const"]
        strategy = strategy.filter(lambda s: s != forbidden)
    return strategy


def for_schema(
    root: dict[str, Any], node: dict[str, Any], *, skip: frozenset[str] = frozenset()
) -> st.SearchStrategy[Any]:
    """A strategy for values that ``node`` (inside ``root``) accepts.

    ``skip`` names properties never generated (e.g. ``$remove`` and ``extends``, which are
    consumed by the loader before validation).
    """
    node = _resolve(root, node)
    if "const" in node:
        return st.just(node["const"])
    if "enum" in node:
        return st.sampled_from(node["enum"])
    if "anyOf" in node:
        return st.one_of([for_schema(root, sub, skip=skip) for sub in node["anyOf"]])
    kind = node.get("type")
    if kind == "integer":
        low = node["exclusiveMinimum"] + 1 if "exclusiveMinimum" in node else node.get("minimum", -1000)
        high = node["exclusiveMaximum"] - 1 if "exclusiveMaximum" in node else node.get("maximum", 100000)
        return st.integers(low, high)
    if kind == "number":
        return st.floats(
            node.get("exclusiveMinimum", node.get("minimum", 0)),
            node.get("exclusiveMaximum", node.get("maximum", 1e6)),
            exclude_min="exclusiveMinimum" in node,
            exclude_max="exclusiveMaximum" in node,
            allow_nan=False,
            allow_infinity=False,
        )
    if kind == "boolean":
        return st.booleans()
    if kind == "string":
        return _string(node)
    if kind == "array":
        items = for_schema(root, node.get("items", {}), skip=skip)
        item_schema = _resolve(root, node.get("items", {}))
        named = "name" in item_schema.get("properties", {})
        unique_by = (lambda v: v["name"]) if named else None
        if node.get("uniqueItems") and not named:
            return st.lists(
                items, min_size=node.get("minItems", 0), max_size=MAX_ITEMS, unique_by=lambda v: repr(v)
            )
        return st.lists(items, min_size=node.get("minItems", 0), max_size=MAX_ITEMS, unique_by=unique_by)
    if kind == "object":
        props = node.get("properties")
        if props is None:  # a map
            keys = _string(_resolve(root, node.get("propertyNames", {"type": "string"})) | {"type": "string"})
            values = for_schema(root, node.get("additionalProperties", {}), skip=skip)
            return st.dictionaries(keys, values, max_size=MAX_ITEMS)
        required = [k for k in node.get("required", []) if k not in skip]
        optional = [k for k in props if k not in required and k not in skip]
        return st.fixed_dictionaries(
            {k: for_schema(root, props[k], skip=skip) for k in required},
            optional={k: for_schema(root, props[k], skip=skip) for k in optional},
        )
    return st.none()


def spec_documents(schema: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Merged spec documents (no ``extends``/``$remove``) that the spec schema accepts."""
    return for_schema(schema, schema, skip=frozenset({"$remove", "extends", "$schema"}))
