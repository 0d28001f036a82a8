"""Readers of the key/value file kinds: Hadoop XML properties, Flink's legacy and YAML config
files, INI-style files, and YAML documents.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

import yaml

_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


# -- key/value kinds ------------------------------------------------------------------------------


def parse_hadoop_xml(text: str) -> dict[str, dict[str, str]] | None:
    """Hadoop ``<configuration>`` → ``{name: {"value": …, ["final", "description"]}}``; None otherwise."""
    try:
        root = ET.fromstring(text)
    except (ET.ParseError, ValueError):
        return None
    if root.tag != "configuration":
        return None
    props: dict[str, dict[str, str]] = {}
    for prop in root.iter("property"):
        name = (prop.findtext("name") or "").strip()
        if not name:
            continue
        entry = {"value": prop.findtext("value") or ""}
        for extra in ("final", "description"):
            t = prop.findtext(extra)
            if t is not None:
                entry[extra] = " ".join(t.split())
        props[name] = entry
    return props


def parse_flink_legacy(text: str) -> dict[str, str]:
    """Legacy ``flink-conf.yaml`` exactly as Flink reads it: ``key: value`` per line, everything
    after the first ``#`` is a comment, lines without ``": "`` or with an empty key/value are skipped."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        conf = line.split("#", 1)[0].strip()
        if not conf:
            continue
        kv = conf.split(": ", 1)
        if len(kv) != 2:
            continue
        key, value = kv[0].strip(), kv[1].strip()
        if key and value:
            out[key] = value
    return out


def flatten_yaml_config(text: str) -> dict[str, Any] | None:
    """Standard-YAML Flink ``config.yaml`` (flat or nested) → dotted keys; None if not a mapping."""
    docs = yaml_docs(text)
    if docs is None or len(docs) > 1:
        return None
    data = docs[0] if docs else None
    if data is None:
        return {}
    if not isinstance(data, dict):
        return None
    out: dict[str, Any] = {}

    def walk(d: dict[Any, Any], prefix: str) -> None:
        for k, v in d.items():
            key = f"{prefix}{k}"
            if isinstance(v, dict) and v:
                walk(v, f"{key}.")
            else:
                out[key] = v

    walk(data, "")
    return out


def parse_ini(text: str) -> dict[str, dict[str, str | None]]:
    """``container-executor.cfg`` style: ``[section]`` headers, ``key=value`` lines, ``#``/``;``
    comments; keys before any section belong to the global section ``""``."""
    sections: dict[str, dict[str, str | None]] = {"": {}}
    current = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = line[1:-1].strip()
            sections.setdefault(current, {})
            continue
        if "=" in line:
            k, v = line.split("=", 1)
            sections[current][k.strip()] = v.strip()
        else:
            sections[current][line] = None
    if not sections[""]:
        del sections[""]
    return sections


def yaml_docs_cached(text: str) -> tuple[Any, ...] | None:
    try:
        return tuple(d for d in yaml.load_all(text, Loader=_LOADER) if d is not None)
    except yaml.YAMLError:
        return None


def yaml_docs(text: str) -> list[Any] | None:
    """Non-empty YAML documents of a text (shared parsed objects: never mutate them)."""
    docs = yaml_docs_cached(text)
    return list(docs) if docs is not None else None
