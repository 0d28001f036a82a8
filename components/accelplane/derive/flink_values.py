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

_PLAIN_YAML_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]*$")
_YAML_SPECIAL_WORDS = frozenset(
    {"null", "Null", "NULL", "true", "True", "TRUE", "false", "False", "FALSE", "y", "Y", "n", "N"}
    | {"yes", "Yes", "YES", "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF"}
)


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
    return None


def yaml_value_problem(value: ConfigValue) -> str | None:
    """Why ``value`` cannot be written to ``config.yaml``, or None."""
    if value == "":
        return "an empty value is not a Flink setting; remove the key"
    return None


def yaml_key(key: str) -> str:
    """A key for ``config.yaml``: plain when YAML 1.2 reads it back as the same string, else quoted."""
    if _PLAIN_YAML_KEY.match(key) and key not in _YAML_SPECIAL_WORDS:
        return key
    return json.dumps(key)


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
        return "[" + ", ".join(json.dumps(v, ensure_ascii=False) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


def operator_value(value: ConfigValue) -> str:
    """A value for the operator's ``flinkConfiguration`` (a string map; lists ``;``-separated)."""
    return legacy_value(value)


