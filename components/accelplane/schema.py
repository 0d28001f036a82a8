"""JSON Schema validation of a merged spec (Draft 2020-12), reporting every error at once.

Two validators, one schema. `accelplane._generated.schema_fast` (generated ahead of time from the schema by
`accelplane.schema_codegen`, imports only ``re``) answers first; a valid spec — the common case,
and every cold `accelplane validate`/`render` of a working stack — never imports jsonschema. Only
when it says "invalid" does jsonschema run, to report every error at once with its path; it is
the authority (a document the fast check refuses but jsonschema accepts is valid). Both apply the
schema's ECMA-262 patterns through `schema_document.python_pattern` (``$`` is the end of the string,
never before a final newline), so they agree on every document (tests/fuzz/test_schema_fast_agrees.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from accelplane.display import short_repr
from accelplane.errors import PathTuple, Problem
from accelplane.findings import ERROR, Finding, declare
from accelplane.schema_document import load_schema, python_pattern

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError


SCHEMA_ENUM = declare(
    "AP1001", ERROR, "a value is not one of the values the schema allows",
    fix="use one of the listed values (the did-you-mean suggestion, when given)",
)
SCHEMA_REQUIRED = declare("AP1002", ERROR, "a required field is missing", fix="add the field")
SCHEMA_UNKNOWN_KEY = declare(
    "AP1003", ERROR, "a key the schema does not know (often a misspelt field)",
    fix="use one of the allowed fields (the did-you-mean suggestion, when given)",
)
SCHEMA_PATTERN = declare(
    "AP1004", ERROR, "a string does not have the form the schema requires",
    fix="write the value in the form the message describes",
)
SCHEMA_TYPE = declare("AP1005", ERROR, "a value has the wrong type", fix="write a value of the type named")
SCHEMA_RANGE = declare(
    "AP1006", ERROR, "a number outside the range the schema allows", fix="use a number inside the range"
)
SCHEMA_LENGTH = declare(
    "AP1007", ERROR, "a string is too long or too short", fix="shorten or lengthen the value"
)
SCHEMA_KEY_NAME = declare(
    "AP1008", ERROR, "a map key does not have the form the schema requires",
    fix="rename the key as the message describes",
)
SCHEMA_SIZE = declare(
    "AP1009", ERROR, "a list or map has too many or too few entries, or repeats an entry",
    fix="add or remove entries as the message says",
)
SCHEMA_OTHER = declare(
    "AP1010", ERROR, "a value breaks another schema rule (a combination the schema refuses)",
    fix="change the value as the message describes",
)

_BY_KEYWORD: dict[str, Finding] = {
    "enum": SCHEMA_ENUM,
    "const": SCHEMA_ENUM,
    "required": SCHEMA_REQUIRED,
    "additionalProperties": SCHEMA_UNKNOWN_KEY,
    "unevaluatedProperties": SCHEMA_UNKNOWN_KEY,
    "pattern": SCHEMA_PATTERN,
    "format": SCHEMA_PATTERN,
    "type": SCHEMA_TYPE,
    "minimum": SCHEMA_RANGE,
    "maximum": SCHEMA_RANGE,
    "exclusiveMinimum": SCHEMA_RANGE,
    "exclusiveMaximum": SCHEMA_RANGE,
    "multipleOf": SCHEMA_RANGE,
    "minLength": SCHEMA_LENGTH,
    "maxLength": SCHEMA_LENGTH,
    "propertyNames": SCHEMA_KEY_NAME,
    "minItems": SCHEMA_SIZE,
    "maxItems": SCHEMA_SIZE,
    "uniqueItems": SCHEMA_SIZE,
    "minProperties": SCHEMA_SIZE,
    "maxProperties": SCHEMA_SIZE,
}


def schema_finding(keyword: str) -> Finding:
    """The finding a failed JSON Schema ``keyword`` reports (`SCHEMA_OTHER` for the rest)."""
    return _BY_KEYWORD.get(keyword, SCHEMA_OTHER)


@cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(python_pattern(pattern))


def _ecma_pattern(validator: Any, pattern: str, instance: Any, schema: dict[str, Any]) -> Iterator[ValidationError]:
    """jsonschema's ``pattern`` keyword with ECMA-262 semantics: ``$`` is the end of the string.

    jsonschema applies a pattern with Python's ``re.search``, whose ``$`` also matches before a final
    newline, so ``"flink\\n"`` would pass ``^[a-z]+$``. `python_pattern` is the translation the
    generated fast validator uses too, so both validators judge every string alike.
    """
    from jsonschema.exceptions import ValidationError

    if isinstance(instance, str) and not _compiled(pattern).search(instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


@cache
def _validator() -> Draft202012Validator:
    from jsonschema import Draft202012Validator
    from jsonschema.validators import extend

    schema = load_schema()
    Draft202012Validator.check_schema(schema)
    ecma = extend(Draft202012Validator, {"pattern": _ecma_pattern})  # type: ignore[no-untyped-call]
    return ecma(schema)  # type: ignore[no-any-return]


def _extra_keys(error: ValidationError) -> list[str]:
    """The keys an ``additionalProperties: false`` error is about, sorted."""
    schema = error.schema if isinstance(error.schema, dict) else {}
    allowed = set(schema.get("properties", {}))
    return (
        sorted(str(k) for k in error.instance if k not in allowed) if isinstance(error.instance, dict) else []
    )


def suggest(word: str, options: list[str]) -> str | None:
    """The option closest to ``word`` (a typo, a wrong case, a missing plural), or None.

    difflib is imported here, not at module level: only a spec with a mistake pays for it.
    """
    from difflib import get_close_matches

    by_lower = {o.lower(): o for o in options}
    if word.lower() in by_lower:
        return by_lower[word.lower()]
    match = get_close_matches(word.lower(), list(by_lower), n=1, cutoff=0.75)
    return by_lower[match[0]] if match else None


def _with_suggestion(word: str, options: list[str]) -> str:
    guess = suggest(word, options)
    return f"{word!r} (did you mean {guess!r}?)" if guess else repr(word)


def _respaced(instance: object, schema: dict[str, Any]) -> str:
    """`` (did you mean '...'?)`` when ``instance`` with its whitespace trimmed and every run of it
    made one space satisfies the ``pattern`` it failed (``NVIDIA  L4`` → ``NVIDIA L4``: the spacing
    is the whole mistake), else the empty string."""
    pattern = schema.get("pattern")
    if not isinstance(instance, str) or not isinstance(pattern, str):
        return ""
    fixed = " ".join(instance.split())
    if not fixed or fixed == instance or not re.search(python_pattern(pattern), fixed):
        return ""
    return f" (did you mean {fixed!r}?)"


def _message(error: ValidationError) -> str:
    """Turn a jsonschema error into a short message a spec author understands."""
    schema = error.schema if isinstance(error.schema, dict) else {}
    custom = schema.get("errorMessage")
    if error.validator == "maxLength" and not custom:
        return f"{short_repr(error.instance)} is longer than {error.validator_value} characters"
    if error.validator == "additionalProperties" and error.validator_value is False:
        allowed = sorted(schema.get("properties", {}))
        names = ", ".join(_with_suggestion(e, allowed) for e in _extra_keys(error))
        return f"unknown field(s) {names}; allowed: {', '.join(allowed)}"
    if error.validator == "required":
        return str(error.message).replace("is a required property", "is required")
    if error.validator in ("pattern", "not", "anyOf", "maxLength", "minLength") and custom:
        hint = _respaced(error.instance, schema) if error.validator == "pattern" else ""
        return f"{short_repr(error.instance)} {custom}{hint}"
    if error.validator == "propertyNames":
        sub = next(iter(error.context or []), None)
        inner = sub.schema.get("errorMessage") if sub is not None and isinstance(sub.schema, dict) else None
        return f"key {error.instance!r} {inner}" if inner else str(error.message)
    if error.validator == "enum":
        options = error.validator_value if isinstance(error.validator_value, list) else []
        text = f"{short_repr(error.instance)} is not one of {', '.join(repr(v) for v in options)}"
        words = [v for v in options if isinstance(v, str)]
        guess = suggest(error.instance, words) if isinstance(error.instance, str) and words else None
        return f"{text} (did you mean {guess!r}?)" if guess else text
    if error.validator == "type":
        return f"{short_repr(error.instance)} is not of type {error.validator_value}"
    return str(error.message)


def _propertynames_problems(error: ValidationError) -> list[Problem]:
    # propertyNames errors point at the map; name the offending key in the path.
    problems = []
    context: list[ValidationError] = list(error.context or [])
    for sub in context:
        key = sub.instance
        sub_schema = sub.schema if isinstance(sub.schema, dict) else {}
        inner = sub_schema.get("errorMessage")
        hint = _respaced(key, sub_schema) if sub.validator == "pattern" else ""
        problems.append(
            Problem((*error.absolute_path, str(key)), f"key {key!r} {inner or sub.message}{hint}", SCHEMA_KEY_NAME)
        )
    return problems or [Problem(tuple(error.absolute_path), _message(error), SCHEMA_KEY_NAME)]


def _targets(error: ValidationError) -> list[PathTuple]:
    """The smallest parts of the document an error condemns (what `validate_partially` drops)."""
    path = tuple(error.absolute_path)
    if error.validator == "additionalProperties" and error.validator_value is False:
        return [(*path, k) for k in _extra_keys(error)] or [path]
    if error.validator == "propertyNames":
        return [(*path, str(sub.instance)) for sub in error.context or []] or [path]
    if "propertyNames" in error.relative_schema_path:
        return [(*path, str(error.instance))]
    return [path]


@dataclass(frozen=True)
class Failure:
    """One schema error: the problem to report and the document parts it condemns."""

    problem: Problem
    targets: tuple[PathTuple, ...]
    bound: int | float | None = None  # for minimum/maximum errors: the nearest valid number


def _bound(error: ValidationError) -> int | float | None:
    numeric = isinstance(error.instance, int | float) and not isinstance(error.instance, bool)
    if (
        error.validator in ("minimum", "maximum")
        and isinstance(error.validator_value, int | float)
        and numeric
    ):
        return error.validator_value
    return None


def schema_failures(data: Any) -> list[Failure]:
    """Validate ``data`` against the spec schema; return every failure with what it condemns.

    The ahead-of-time validator answers first; jsonschema runs only for a document it rejects.
    """
    from accelplane._generated.schema_fast import is_valid

    if is_valid(data):
        return []
    return _jsonschema_failures(data)


def full_problems(data: Any) -> list[Problem]:
    """Every problem jsonschema finds in ``data`` (the slow, complete path; empty when valid)."""
    return sorted({f.problem for f in _jsonschema_failures(data)}, key=lambda p: ([str(x) for x in p.path], p.message))


def _jsonschema_failures(data: Any) -> list[Failure]:
    failures: list[Failure] = []
    for error in _validator().iter_errors(data):
        targets = tuple(_targets(error))
        if error.validator == "propertyNames":
            failures.extend(Failure(p, targets) for p in _propertynames_problems(error))
        elif "propertyNames" in error.relative_schema_path:
            # a map key failed its pattern: name the key in the path
            key_schema = error.schema if isinstance(error.schema, dict) else {}
            custom = key_schema.get("errorMessage")
            key = str(error.instance)
            hint = _respaced(key, key_schema) if error.validator == "pattern" else ""
            problem = Problem(
                (*error.absolute_path, key), f"key {key!r} {custom or error.message}{hint}", SCHEMA_KEY_NAME
            )
            failures.append(Failure(problem, targets))
        else:
            failures.append(
                Failure(
                    Problem(tuple(error.absolute_path), _message(error), schema_finding(str(error.validator))),
                    targets,
                    _bound(error),
                )
            )
    return failures


def validate_document(data: Any) -> list[Problem]:
    """Validate ``data`` against the spec schema; return every problem (empty list when valid)."""
    problems = {f.problem for f in schema_failures(data)}
    return sorted(problems, key=lambda p: ([str(x) for x in p.path], p.message))
