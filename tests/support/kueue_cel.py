"""Kubernetes' CRD validation rules (``x-kubernetes-validations``) evaluated by a CEL implementation
(cel-python), as the API server evaluates them on create: OpenAPI ``default`` values applied first
(structural defaulting), each rule evaluated with ``self`` bound to the value of the node that
carries it, wherever that node is present; transition rules (those that read ``oldSelf``) are not
evaluated on create and are skipped."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import celpy


def apply_defaults(schema: dict[str, Any], value: Any) -> Any:
    """``value`` with the schema's ``default`` values filled in where a property is absent (a copy)."""
    value = copy.deepcopy(value)
    _default(schema, value)
    return value


def _default(schema: dict[str, Any], value: Any) -> None:
    if isinstance(value, dict):
        for name, sub in schema.get("properties", {}).items():
            if name not in value and "default" in sub:
                value[name] = copy.deepcopy(sub["default"])
            if name in value:
                _default(sub, value[name])
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            for name in value:
                if name not in schema.get("properties", {}):
                    _default(extra, value[name])
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for item in value:
            _default(schema["items"], item)


def rules(schema: dict[str, Any], value: Any, path: str = "") -> Iterator[tuple[str, str, str, Any]]:
    """(path, rule, message, value) of every validation rule that applies to a present node."""
    for rule in schema.get("x-kubernetes-validations", []):
        yield path, rule["rule"], rule.get("message", ""), value
    if isinstance(value, dict):
        for name, sub in schema.get("properties", {}).items():
            if name in value:
                yield from rules(sub, value[name], f"{path}.{name}")
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            yield from rules(schema["items"], item, f"{path}[{i}]")


def evaluate(rule: str, value: Any) -> bool:
    """The rule's verdict with ``self`` bound to ``value``."""
    env = celpy.Environment()
    program = env.program(env.compile(rule))
    return bool(program.evaluate({"self": celpy.json_to_cel(value)}))


def violations(schema: dict[str, Any], obj: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(messages of the rules ``obj`` breaks, rules evaluated) after defaulting."""
    defaulted = apply_defaults(schema, obj)
    broken: list[str] = []
    evaluated: list[str] = []
    for path, rule, message, value in rules(schema, defaulted):
        if "oldSelf" in rule:
            continue
        evaluated.append(rule)
        if not evaluate(rule, value):
            broken.append(f"{path}: {message} ({rule})")
    return broken, evaluated
