"""JSON Schema validation of a merged spec (Draft 2020-12), reporting every error at once.

Two validators, one schema. `accelplane.schema_fast` (generated ahead of time from the schema by
`accelplane.schema_codegen`, imports only ``re``) answers first; a valid spec — the common case,
and every cold `accelplane validate`/`render` of a working stack — never imports jsonschema. Only
when it says "invalid" does jsonschema run, to report every error at once with its path; it is
the authority (a document the fast check refuses but jsonschema accepts is valid).
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from accelplane.display import short_repr
from accelplane.errors import Problem
from accelplane.schema_document import load_schema

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError


@cache
def _validator() -> Draft202012Validator:
    from jsonschema import Draft202012Validator

    schema = load_schema()
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def _message(error: ValidationError) -> str:
    """Turn a jsonschema error into a short message a spec author understands."""
    schema = error.schema if isinstance(error.schema, dict) else {}
    custom = schema.get("errorMessage")
    if error.validator == "maxLength" and not custom:
        return f"{short_repr(error.instance)} is longer than {error.validator_value} characters"
    if error.validator == "additionalProperties" and error.validator_value is False:
        allowed = sorted(schema.get("properties", {}))
        extra = sorted(set(error.instance) - set(allowed)) if isinstance(error.instance, dict) else []
        names = ", ".join(repr(e) for e in extra)
        return f"unknown field(s) {names}; allowed: {', '.join(allowed)}"
    if error.validator == "required":
        return str(error.message).replace("is a required property", "is required")
    if error.validator in ("pattern", "not", "anyOf", "maxLength", "minLength") and custom:
        return f"{short_repr(error.instance)} {custom}"
    if error.validator == "propertyNames":
        sub = next(iter(error.context or []), None)
        inner = sub.schema.get("errorMessage") if sub is not None and isinstance(sub.schema, dict) else None
        return f"key {error.instance!r} {inner}" if inner else str(error.message)
    if error.validator == "enum":
        options = error.validator_value if isinstance(error.validator_value, list) else []
        return f"{short_repr(error.instance)} is not one of {', '.join(repr(v) for v in options)}"
    if error.validator == "type":
        return f"{short_repr(error.instance)} is not of type {error.validator_value}"
    return str(error.message)


def _propertynames_problems(error: ValidationError) -> list[Problem]:
    # propertyNames errors point at the map; name the offending key in the path.
    problems = []
    context: list[ValidationError] = list(error.context or [])
    for sub in context:
        key = sub.instance
        inner = sub.schema.get("errorMessage") if isinstance(sub.schema, dict) else None
        problems.append(Problem((*error.absolute_path, str(key)), f"key {key!r} {inner or sub.message}"))
    return problems or [Problem(tuple(error.absolute_path), _message(error))]


def validate_document(data: Any) -> list[Problem]:
    """Validate ``data`` against the spec schema; return every problem (empty list when valid)."""
    from accelplane.schema_fast import is_valid

    if is_valid(data):
        return []
    return full_problems(data)


def full_problems(data: Any) -> list[Problem]:
    """Every problem jsonschema finds in ``data`` (the slow, complete path; empty when valid)."""
    problems: list[Problem] = []
    for error in _validator().iter_errors(data):
        if error.validator == "propertyNames":
            problems.extend(_propertynames_problems(error))
        elif "propertyNames" in error.relative_schema_path:
            # a map key failed its pattern: name the key in the path
            custom = error.schema.get("errorMessage") if isinstance(error.schema, dict) else None
            key = str(error.instance)
            problems.append(Problem((*error.absolute_path, key), f"key {key!r} {custom or error.message}"))
        else:
            problems.append(Problem(tuple(error.absolute_path), _message(error)))
    return sorted(set(problems), key=lambda p: ([str(x) for x in p.path], p.message))
