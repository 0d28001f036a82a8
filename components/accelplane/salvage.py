"""Semantic checks on the parts of an invalid spec that passed the schema, without cascades.

A schema error would otherwise hide every semantic problem until it is fixed (two rounds of
validation for one spec). `salvage_problems` drops what the schema condemned — the failing field,
then whatever became invalid because of that (a mapping missing a required field, up to the named
entity: a node pool, queue, PriorityClass, Flink cluster …) — and runs the model and the semantic
checks on the rest. A number outside its schema range is checked as if it were at the bound, so a
PriorityClass with a too-high value still gets its name checked.

Dropping an entity must not make up errors: a problem that names a dropped entity (``queue 'batch'
is not defined``), or one a part was dropped from (``pool 'a' has None GPUs``), is a consequence
of the schema error already reported, so it is left out; so is a problem about the object a part
was dropped from (``sharing`` without its rejected ``strategy`` looks unused); so is
any finding declared ``whole_spec`` (it claims that nothing in the spec provides, uses or advertises
something, which the dropped part may have done). One root cause, one finding. Paths
are translated back to the complete document, so errors point where the user wrote the value.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from accelplane.errors import PathTuple, Problem
from accelplane.schema import schema_failures

MAX_ROUNDS = 12

IndexMap = dict[PathTuple, list[int]]


def _is_named_list(value: Any) -> bool:
    return isinstance(value, list) and any(
        isinstance(i, dict) and isinstance(i.get("name"), str) for i in value
    )


def _at(data: Any, path: PathTuple) -> Any:
    for part in path:
        data = data[part]
    return data


def _entity(data: Any, path: PathTuple) -> tuple[PathTuple, str] | None:
    """The outermost named-list entry on ``path`` (in the complete document) and its name."""
    node = data
    for i, part in enumerate(path):
        if isinstance(part, int) and _is_named_list(node) and 0 <= part < len(node):
            item = node[part]
            if isinstance(item, dict) and isinstance(item.get("name"), str):
                return path[: i + 1], item["name"]
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return None
    return None


def _names_in(value: Any) -> set[str]:
    """Names of every named-list entry inside ``value`` (entities that a removal takes away)."""
    out: set[str] = set()
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if isinstance(node.get("name"), str):
                out.add(node["name"])
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return out


def _rebuild(
    value: Any,
    orig: PathTuple,
    pruned: PathTuple,
    removed: set[PathTuple],
    clamped: dict[PathTuple, Any],
    index_map: IndexMap,
) -> Any:
    if orig in clamped:
        return clamped[orig]
    if isinstance(value, dict):
        return {
            k: _rebuild(v, (*orig, k), (*pruned, k), removed, clamped, index_map)
            for k, v in value.items()
            if (*orig, k) not in removed
        }
    if isinstance(value, list):
        kept = [i for i in range(len(value)) if (*orig, i) not in removed]
        if len(kept) != len(value):
            index_map[pruned] = kept
        return [
            _rebuild(value[i], (*orig, i), (*pruned, j), removed, clamped, index_map)
            for j, i in enumerate(kept)
        ]
    return value


def _to_original(path: PathTuple, index_map: IndexMap) -> PathTuple:
    out: list[str | int] = []
    prefix: PathTuple = ()
    for part in path:
        kept = index_map.get(prefix)
        out.append(kept[part] if isinstance(part, int) and kept is not None and part < len(kept) else part)
        prefix = (*prefix, part)
    return tuple(out)


def duplicate_entries(data: Any) -> list[PathTuple]:
    """Paths of named-list entries whose name an earlier entry of the same list already has.

    The loader reports them; the semantic pass leaves them out, so a duplicate is not counted twice
    (e.g. as one slot group too many).
    """
    out: list[PathTuple] = []
    stack: list[tuple[PathTuple, Any]] = [((), data)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, dict):
            stack.extend(((*path, k), v) for k, v in node.items())
        elif isinstance(node, list):
            seen: set[str] = set()
            for i, item in enumerate(node):
                name = item.get("name") if isinstance(item, dict) else None
                if isinstance(name, str) and _is_named_list(node):
                    if name in seen:
                        out.append((*path, i))
                        continue
                    seen.add(name)
                stack.append(((*path, i), item))
    return sorted(out, key=str)


def _consequence(problem: Problem, dropped_names: set[str], dropped: set[PathTuple]) -> bool:
    """True when ``problem`` may only follow from what was ``dropped`` (paths in the complete
    document): it names a dropped entity; it is about an object a part was dropped from (``sharing``
    checked without its rejected ``strategy`` looks unused); or its finding claims something of the
    whole spec ("no pool advertises …", "no object lives in namespace …"), which the dropped part
    may have made true."""
    if any(repr(name) in problem.message for name in dropped_names):
        return True
    if not dropped:
        return False
    if any(d[: len(problem.path)] == problem.path for d in dropped):
        return True
    return problem.finding is not None and problem.finding.whole_spec


def salvage_problems(
    data: dict[str, Any],
    invalid: list[tuple[PathTuple, int | float | None]],
    check: Callable[[dict[str, Any]], tuple[list[PathTuple], list[Problem]]],
    duplicates: list[PathTuple] | None = None,
) -> list[Problem]:
    """Semantic problems of ``data`` once the ``invalid`` parts are dropped (or clamped).

    ``invalid`` lists (path, bound) pairs: a path the schema or the model rejected, with the nearest
    valid number for a range error (else None). ``check`` builds the model of a document and runs
    the semantic checks; it returns the paths it could not convert (dropped in the next round) or
    the problems found. ``duplicates`` (`duplicate_entries`) are left out without hiding what names
    them (the first entry of that name stays). Returns [] when nothing sensible is left to check
    (e.g. ``cluster`` itself is invalid).
    """
    removed: set[PathTuple] = set(duplicates or ())
    clamped: dict[PathTuple, Any] = {}
    dropped_names: set[str] = set()

    def condemn(path: PathTuple, bound: int | float | None) -> bool:
        """Drop (or clamp) ``path``; False when the rest is not worth checking."""
        if bound is not None:
            clamped[path] = bound
            return True
        entity = _entity(data, path)
        try:
            value = _at(data, path)
        except (KeyError, IndexError, TypeError):
            value = None
        if isinstance(value, dict | list) and value:
            if entity is None:
                return False  # a whole section is unusable: its consequences are everywhere
            path = entity[0]  # never check half an entity
            value = _at(data, path)
        if not path or path == ("cluster",) or path[:2] in (("cluster", "name"), ("cluster", "platforms")):
            return False
        removed.add(path)
        dropped_names.update(_names_in(value))
        if entity is not None:  # what names an entity checked without a part is a consequence too
            dropped_names.add(entity[1])
        return True

    for path, bound in invalid:
        if not condemn(path, bound):
            return []
    for _ in range(MAX_ROUNDS):
        index_map: IndexMap = {}
        doc = _rebuild(data, (), (), removed, clamped, index_map)
        failures = schema_failures(doc)
        if failures:
            # consequences of what was dropped (a required field now missing …): drop further
            for failure in failures:
                for target in failure.targets:
                    original = _to_original(target, index_map)
                    entity = _entity(data, original)
                    if failure.bound is None and entity is not None:
                        original = entity[0]  # a consequence inside an entity: the entity goes
                    if not condemn(original, failure.bound):
                        return []
            continue
        unconvertible, problems = check(doc)
        if unconvertible:
            for path in unconvertible:
                if not condemn(_to_original(path, index_map), None):
                    return []
            continue
        dropped = removed - set(duplicates or ())
        located = [Problem(_to_original(p.path, index_map), p.message, p.finding) for p in problems]
        return [p for p in located if not _consequence(p, dropped_names, dropped)]
    return []
