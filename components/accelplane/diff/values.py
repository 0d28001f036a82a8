"""Structural diff of values: canonical values and paths, a deep field diff in which lists of
named dicts are matched by identity, key diffs of parsed config files, the unified text diff,
and `diff_content`, which picks the structured differ for a file or an embedded string by its
name and falls back to the text diff whenever a structured one finds nothing.
"""

from __future__ import annotations

import difflib
import functools
import json
import posixpath
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from accelplane.diff.changes import EMBED_SEPARATOR, Change, Op, classify
from accelplane.diff.parsers import (
    flatten_yaml_config,
    parse_flink_legacy,
    parse_hadoop_xml,
    parse_ini,
    yaml_docs,
)

# -- canonical values and paths -----------------------------------------------------------------


def _canon(value: Any) -> Any:
    """Hashable, type-strict canonical form (``1`` ≠ ``True`` ≠ ``"1"``; dict order ignored)."""
    if isinstance(value, dict):
        return ("d", tuple(sorted((str(k), _canon(v)) for k, v in value.items())))
    if isinstance(value, list | tuple):
        return ("l", tuple(_canon(v) for v in value))
    return (
        type(value).__name__,
        value if isinstance(value, str | int | float | bool) or value is None else str(value),
    )


def same(a: Any, b: Any) -> bool:
    """Strict structural equality."""
    return bool(_canon(a) == _canon(b))


@dataclass(frozen=True)
class Sel:
    """A list element selector in a field path: ``[name=x]`` or ``[3]``."""

    label: str


Seg = str | Sel
_IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$-]*")


def format_path(segs: Sequence[Seg]) -> str:
    """``spec.template.spec.containers[name=plugin].image``, ``spec.capability["nvidia.com/gpu"]``."""
    out = ""
    for s in segs:
        if isinstance(s, Sel):
            out += s.label
        elif _IDENT.fullmatch(s):
            out += f".{s}" if out else s
        else:
            out += f"[{json.dumps(s, ensure_ascii=False)}]"
    return out or "<root>"


def _leaf(segs: Sequence[Seg]) -> str:
    for s in reversed(segs):
        if isinstance(s, str):
            return s
    return ""


# -- deep structural diff -----------------------------------------------------------------------

_LIST_KEYS: tuple[tuple[str, ...], ...] = (
    ("name",),
    ("key",),
    ("key", "effect"),
    ("key", "operator", "value", "effect"),
    ("mountPath",),
    ("devicePath",),
    ("containerPort", "protocol"),
    ("containerPort",),
)


def _list_identity(old: list[Any], new: list[Any]) -> tuple[str, ...] | None:
    items = old + new
    if not items or not all(isinstance(i, dict) for i in items):
        return None
    for fields in _LIST_KEYS:
        if not all(all(isinstance(i.get(f), str | int) for f in fields) for i in items):
            continue
        if all(len({tuple(i[f] for f in fields) for i in side}) == len(side) for side in (old, new)):
            return fields
    return None


def _sel(fields: tuple[str, ...], values: tuple[Any, ...]) -> Sel:
    return Sel("[" + ",".join(f"{f}={v}" for f, v in zip(fields, values, strict=True)) + "]")


def diff_values(old: Any, new: Any, segs: Sequence[Seg] = ()) -> list[Change]:
    """Every change from ``old`` to ``new`` as field-level changes (deterministic order)."""
    out: list[Change] = []
    _diff(old, new, list(segs), out)
    return out


def _diff(old: Any, new: Any, segs: list[Seg], out: list[Change]) -> None:
    if same(old, new):
        return
    if isinstance(old, dict) and isinstance(new, dict):
        for k in list(old) + [k for k in new if k not in old]:
            key = k if isinstance(k, str) else str(k)
            if k not in new:
                out.append(Change("removed", format_path([*segs, key]), key, old=old[k]))
            elif k not in old:
                out.append(Change("added", format_path([*segs, key]), key, new=new[k]))
            else:
                _diff(old[k], new[k], [*segs, key], out)
        return
    if isinstance(old, list) and isinstance(new, list):
        _diff_list(old, new, segs, out)
        return
    if isinstance(old, str) and isinstance(new, str) and ("\n" in old or "\n" in new):
        _diff_embedded(old, new, segs, out)
        return
    out.append(Change("changed", format_path(segs), _leaf(segs), old=old, new=new))


def _diff_list(old: list[Any], new: list[Any], segs: list[Seg], out: list[Change]) -> None:
    fields = _list_identity(old, new)
    if fields is not None:
        om = {tuple(i[f] for f in fields): i for i in old}
        nm = {tuple(i[f] for f in fields): i for i in new}
        for k in list(om) + [k for k in nm if k not in om]:
            sel = _sel(fields, k)
            path = format_path([*segs, sel])
            if k not in nm:
                out.append(Change("removed", path, _leaf(segs), old=om[k]))
            elif k not in om:
                out.append(Change("added", path, _leaf(segs), new=nm[k]))
            else:
                _diff(om[k], nm[k], [*segs, sel], out)
        order_old = [_sel(fields, k).label for k in om if k in nm]
        order_new = [_sel(fields, k).label for k in nm if k in om]
        if order_old != order_new:
            out.append(
                Change("changed", format_path(segs) + " (order)", _leaf(segs), old=order_old, new=order_new)
            )
        return
    a = [_canon(x) for x in old]
    b = [_canon(x) for x in new]
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        paired = min(i2 - i1, j2 - j1) if tag == "replace" else 0
        for n in range(paired):
            _diff(old[i1 + n], new[j1 + n], [*segs, Sel(f"[{j1 + n}]")], out)
        for i in range(i1 + paired, i2):
            out.append(Change("removed", format_path([*segs, Sel(f"[{i}]")]), _leaf(segs), old=old[i]))
        for j in range(j1 + paired, j2):
            out.append(Change("added", format_path([*segs, Sel(f"[{j}]")]), _leaf(segs), new=new[j]))


def _diff_embedded(old: str, new: str, segs: list[Seg], out: list[Change]) -> None:
    """A multi-line string (a file inside a ConfigMap): structured by its key name when possible."""
    leaf = _leaf(segs)
    path = format_path(segs)
    changes, text = diff_content(classify(leaf), leaf, old, new, f"a/{leaf}", f"b/{leaf}")
    if changes:
        for c in changes:
            out.append(Change(c.op, f"{path}{EMBED_SEPARATOR}{c.path}", c.leaf, c.old, c.new, c.text_diff))
    else:
        out.append(Change("changed", path, leaf, text_diff=tuple(text)))


# -- text -----------------------------------------------------------------------------------------


def unified(old: str, new: str, old_name: str, new_name: str, context: int = 3) -> list[str]:
    """``diff -u`` lines (no trailing newlines), marking a missing final newline like git."""
    a = old.splitlines(keepends=True)
    b = new.splitlines(keepends=True)
    out: list[str] = []
    for i, line in enumerate(difflib.unified_diff(a, b, old_name, new_name, n=context, lineterm="")):
        if i < 2 or line.startswith("@@"):
            out.append(line.rstrip("\n"))
        elif line.endswith("\n"):
            out.append(line[:-1])
        else:
            out.append(line)
            out.append("\\ No newline at end of file")
    return out


def _structured(value: Any) -> bool:
    return isinstance(value, dict) or (isinstance(value, list) and any(isinstance(v, dict) for v in value))


def _diff_keys(old: dict[str, Any], new: dict[str, Any], path_of: Callable[[str], str]) -> list[Change]:
    out: list[Change] = []
    for k in sorted(set(old) | set(new)):
        if k not in new:
            out.append(Change("removed", path_of(k), k, old=old[k]))
        elif k not in old:
            out.append(Change("added", path_of(k), k, new=new[k]))
        elif same(old[k], new[k]):
            continue
        elif _structured(old[k]) and _structured(new[k]):
            # e.g. sharing.timeSlicing.resources[name=nvidia.com/gpu].replicas
            for c in diff_values(old[k], new[k], [Sel(path_of(k))]):
                out.append(Change(c.op, c.path, c.leaf or k, c.old, c.new, c.text_diff))
        else:
            out.append(Change("changed", path_of(k), k, old=old[k], new=new[k]))
    return out


def _diff_hadoop(old: dict[str, dict[str, str]], new: dict[str, dict[str, str]]) -> list[Change]:
    out: list[Change] = []
    for name in sorted(set(old) | set(new)):
        o, n = old.get(name), new.get(name)
        if n is None:
            out.append(Change("removed", name, name, old=o["value"] if o else None))
        elif o is None:
            out.append(Change("added", name, name, new=n["value"]))
        else:
            if o["value"] != n["value"]:
                out.append(Change("changed", name, name, old=o["value"], new=n["value"]))
            for extra in ("final", "description"):
                if o.get(extra) != n.get(extra):
                    op: Op = "added" if extra not in o else "removed" if extra not in n else "changed"
                    out.append(Change(op, f"{name} ({extra})", name, old=o.get(extra), new=n.get(extra)))
    return out


def _prefixer(prefix: str) -> Callable[[str], str]:
    return lambda k: f"{prefix}{k}"


def _diff_ini(old: dict[str, dict[str, str | None]], new: dict[str, dict[str, str | None]]) -> list[Change]:
    out: list[Change] = []
    for section in sorted(set(old) | set(new)):
        o, n = old.get(section, {}), new.get(section, {})
        prefix = f"[{section}] " if section else ""
        if section not in new and not o:
            out.append(Change("removed", f"[{section}]", section, old={}))
        elif section not in old and not n:
            out.append(Change("added", f"[{section}]", section, new={}))
        out.extend(_diff_keys(o, n, _prefixer(prefix)))
    return out


_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@functools.lru_cache(maxsize=4096)
def diff_content(
    kind: str, name: str, old: str, new: str, old_label: str, new_label: str
) -> tuple[list[Change], list[str]]:
    """Structured changes of one text artifact, or (when it has none but differs, or cannot be
    parsed as its kind) a unified text diff."""
    if old == new:
        return [], []
    changes: list[Change] | None = None
    base = posixpath.basename(name).lower()
    if kind == "hadoop-xml":
        po, pn = parse_hadoop_xml(old), parse_hadoop_xml(new)
        if po is not None and pn is not None:
            changes = _diff_hadoop(po, pn)
    elif kind == "flink-config" and base == "flink-conf.yaml":
        changes = _diff_keys(parse_flink_legacy(old), parse_flink_legacy(new), lambda k: k)
    elif kind == "flink-config":
        fo, fn = flatten_yaml_config(old), flatten_yaml_config(new)
        if fo is not None and fn is not None:
            changes = _diff_keys(fo, fn, lambda k: k)
    elif kind == "ini":
        changes = _diff_ini(parse_ini(old), parse_ini(new))
    elif kind in ("yaml", "kubernetes"):
        do, dn = yaml_docs(old), yaml_docs(new)
        if do is not None and dn is not None:
            if len(do) == 1 and len(dn) == 1:
                changes = diff_values(do[0], dn[0])
            else:
                changes = diff_values(do, dn, ["documents"])
    if changes:
        return changes, []
    return [], unified(old, new, old_label, new_label)
