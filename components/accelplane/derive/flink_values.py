"""How a Flink configuration value is written in each config format, and which values cannot be.

Format rules (verified with Flink 1.20.5's ``GlobalConfiguration``, see tests/support/flink/config_probe.py):

* ``config.yaml`` (standard YAML 1.2): we write flat dotted keys only (never nested, so a key can
  never appear both flat and nested), every string value double-quoted (YAML 1.2 would otherwise
  retype ``1e3``, ``0o17`` … and Flink re-stringifies the typed value), lists in flow style.
* ``flink-conf.yaml`` (legacy line parser): ``key: value`` verbatim, no quoting (quotes are kept
  literally), everything after ``#`` is a comment, lists are ``;``-separated. Values that cannot
  be written in it are rejected by `accelplane.checks.flink`.
"""

from __future__ import annotations

import json
import re

ConfigScalar = str | int | float | bool
ConfigValue = ConfigScalar | tuple[str, ...]
"""A Flink configuration value as the spec gives it (lists are written per format)."""

_PLAIN_YAML_KEY = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*")
_YAML_SPECIAL_WORDS = frozenset(
    {"null", "Null", "NULL", "true", "True", "TRUE", "false", "False", "FALSE", "y", "Y", "n", "N"}
    | {"yes", "Yes", "YES", "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF"}
)


# Characters a YAML 1.2 stream may not contain (YAML 1.2 §5.1: printable is tab, LF, CR, 0x20-0x7E,
# 0x85, 0xA0-0xD7FF, 0xE000-0xFFFD, 0x10000-0x10FFFF), plus C1 (0x85 included) and DEL, which
# readers and terminals treat inconsistently. In a double-quoted scalar they are written as escapes.
_YAML_UNPRINTABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


def _number_text(value: int | float) -> str:
    return str(value) if isinstance(value, int) else repr(value)


def legacy_value(value: ConfigValue) -> str:
    """A value as the legacy ``flink-conf.yaml`` line parser reads it (lists ``;``-separated)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return _number_text(value)
    if isinstance(value, tuple):
        return ";".join(value)
    return value


def legacy_value_problem(value: ConfigValue) -> str | None:
    """Why ``value`` cannot be written to a legacy ``flink-conf.yaml`` line, or None."""
    text = legacy_value(value)
    if text == "":
        return "an empty value is not a Flink setting; remove the key"
    if "\n" in text or "\r" in text:
        return "flink-conf.yaml holds one line per key; remove the line break"
    if "#" in text:
        return "flink-conf.yaml treats everything after '#' as a comment, so the value would be cut; remove the '#' (or use Flink >= 1.19 with config.yaml)"
    if text != text.strip():
        return "flink-conf.yaml trims leading and trailing spaces; remove them"
    if text[0] in "\"'":
        return "flink-conf.yaml keeps quotes as part of the value; write the value without quotes"
    bad = _YAML_UNPRINTABLE.search(text)
    if bad is not None:
        return (
            f"flink-conf.yaml has no escapes, so it cannot carry the control character U+{ord(bad.group()):04X}; "
            "remove it (config.yaml, Flink >= 1.19, can carry it)"
        )
    return None


def yaml_value_problem(value: ConfigValue) -> str | None:
    """Why ``value`` cannot be written to ``config.yaml``, or None."""
    if value == "":
        return "an empty value is not a Flink setting; remove the key"
    return None


def yaml_quoted(text: str) -> str:
    """``text`` as a YAML 1.2 double-quoted scalar that any YAML 1.2 reader loads back unchanged.

    JSON string syntax is a subset of YAML's double-quoted style; characters a YAML stream may not
    contain raw (DEL, C1 controls, U+FFFE, lone surrogates …) are written as ``\\uNNNN`` escapes, so
    Flink's loader (SnakeYAML Engine) never sees an "unacceptable code point".
    """
    return _YAML_UNPRINTABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(text, ensure_ascii=False))


def yaml_key(key: str) -> str:
    """A key for ``config.yaml``: plain when YAML 1.2 reads it back as the same string, else quoted."""
    if _PLAIN_YAML_KEY.fullmatch(key) and key not in _YAML_SPECIAL_WORDS:
        return key
    return yaml_quoted(key)


def yaml_value(value: ConfigValue) -> str:
    """A value for ``config.yaml`` in YAML 1.2 flow syntax: integers and booleans plain, strings and
    floats double-quoted (so Flink sees exactly the text we mean), lists in flow style."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        # quoted: Flink would print a YAML float the Java way (1e+20 -> 1.0E20)
        return json.dumps(_number_text(value))
    if isinstance(value, tuple):
        return "[" + ", ".join(yaml_quoted(v) for v in value) + "]"
    return yaml_quoted(value)


def operator_value(value: ConfigValue) -> str:
    """A value for the operator's ``flinkConfiguration`` (a string map; lists ``;``-separated)."""
    return legacy_value(value)


