"""Silencing warnings from the spec: the top-level ``lint.ignore`` list.

A spec may silence a *warning* by code, optionally only at one path (and below it)::

    lint:
      ignore:
        - code: AP2101                 # queue weight has no effect under the capacity plugin
          path: queues[1].weight       # optional: only here (and below); omitted = everywhere
          reason: YARN reads the weights once this cluster gets its YARN pools   # optional

Paths are written as messages print them (`accelplane.errors.format_path`), either in the merged
document (what `accelplane merged` shows) or in the file that holds the value. Errors cannot be
silenced: an entry naming an error code is itself an error (`LINT_IGNORES_ERROR`), and an entry that
silences nothing is a warning (`LINT_IGNORE_UNUSED`), so stale entries do not pile up.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from accelplane.errors import PathTuple, Problem, SpecError, format_path
from accelplane.findings import ERROR, REGISTRY, WARNING, Finding, declare

_CODE = re.compile(r"AP[1-9][0-9]{3}")  # the schema's pattern: others are reported by the schema

LINT_IGNORE_UNUSED = declare(
    "AP1301", WARNING, "a lint.ignore entry silences no finding",
    fix="remove the entry (or fix its code or path)",
)
LINT_IGNORES_ERROR = declare(
    "AP1302", ERROR, "a lint.ignore entry names an error; only warnings can be silenced",
    fix="fix what the error reports and remove the entry",
)
LINT_UNKNOWN_CODE = declare(
    "AP1303", WARNING, "a lint.ignore entry names a code accelplane does not know",
    fix="use a code from docs/findings.md or remove the entry",
)


@dataclass(frozen=True)
class Ignore:
    """One ``lint.ignore`` entry: a warning code, optionally scoped to a path and what is below it."""

    index: int
    code: str
    path: str | None


def ignores(data: dict[str, Any]) -> list[Ignore]:
    """The well-formed ``lint.ignore`` entries of a merged document (the schema reports the rest)."""
    lint = data.get("lint")
    entries = lint.get("ignore") if isinstance(lint, dict) else None
    out: list[Ignore] = []
    for i, entry in enumerate(entries if isinstance(entries, list) else []):
        if isinstance(entry, dict) and isinstance(entry.get("code"), str) and _CODE.fullmatch(entry["code"]):
            path = entry.get("path")
            out.append(Ignore(i, entry["code"], path if isinstance(path, str) and path else None))
    return out


def _covers(scope: str, path: str) -> bool:
    """True when ``path`` is ``scope`` or lies below it (``queues[1]`` covers ``queues[1].weight``)."""
    return path == scope or (path.startswith(scope) and path[len(scope)] in ".[")


def _scopes(path: str) -> Iterator[str]:
    """Every scope that covers ``path`` (`_covers`): the path itself and each prefix ending before a
    ``.`` or ``[`` (``queues``, ``queues[1]``, ``queues[1].weight``)."""
    for i, char in enumerate(path):
        if char in ".[" and i:
            yield path[:i]
    yield path


class _RuleIndex:
    """``lint.ignore`` rules indexed by code, then by path: finding the rules that silence one
    warning costs a dictionary look-up per scope of its paths, not a comparison with every rule
    (16,000 rules x 16,000 warnings took 138 s when every pair was compared; issue 37).
    ``used`` collects the indexes of every rule that silenced something."""

    def __init__(self, rules: list[Ignore]) -> None:
        self.everywhere: dict[str, list[int]] = {}
        self.at: dict[tuple[str, str], list[int]] = {}
        self.used: set[int] = set()
        self._marked: set[tuple[str, str | None]] = set()
        for rule in rules:
            if rule.path is None:
                self.everywhere.setdefault(rule.code, []).append(rule.index)
            else:
                self.at.setdefault((rule.code, rule.path), []).append(rule.index)

    def _mark(self, key: tuple[str, str | None], indexes: list[int]) -> None:
        if key not in self._marked:
            self._marked.add(key)
            self.used.update(indexes)

    def silences(self, code: str | None, paths: list[str]) -> bool:
        """True when a rule silences a warning of ``code`` at any of ``paths`` (every such rule is
        marked used)."""
        if code is None:
            return False
        hit = False
        everywhere = self.everywhere.get(code)
        if everywhere:
            self._mark((code, None), everywhere)
            hit = True
        if self.at:
            for path in paths:
                for scope in _scopes(path):
                    indexes = self.at.get((code, scope))
                    if indexes and _covers(scope, path):
                        self._mark((code, scope), indexes)
                        hit = True
        return hit


def apply_ignores(
    rules: list[Ignore],
    problems: list[Problem],
    errors: list[SpecError],
    locate: Callable[[PathTuple, str, Finding | None], SpecError],
    *,
    complete: bool = True,
) -> tuple[list[Problem], list[SpecError]]:
    """``problems`` (merged paths) and ``errors`` (located) without the warnings ``rules`` silence,
    plus the findings about the rules themselves (an error code named, an entry silencing nothing).

    ``locate`` turns a problem into its `SpecError` (`LoadedSpec.locate`), so a rule's path may be
    written as in the merged document or as in the file that holds the value. ``complete`` is False
    when the spec was only checked in part (after schema errors): an entry silencing nothing is then
    not reported, since the part left out may hold what it silences.
    """
    index = _RuleIndex(rules)
    used = index.used

    def silenced(code: str | None, paths: list[str], warning: bool) -> bool:
        return warning and bool(rules) and index.silences(code, paths)

    kept_problems = []
    for p in problems:
        code = p.finding.code if p.finding else None
        located = locate(p.path, p.message, p.finding)
        if not silenced(code, [format_path(p.path), located.path], p.is_warning):
            kept_problems.append(p)
    kept_errors = [
        e for e in errors if not silenced(e.finding.code if e.finding else None, [e.path], e.is_warning)
    ]
    for rule in rules:
        where: PathTuple = ("lint", "ignore", rule.index, "code")
        known = REGISTRY.get(rule.code)
        if known is None:
            kept_problems.append(
                Problem(where, f"{rule.code} is not a finding code of accelplane (docs/findings.md)",
                        LINT_UNKNOWN_CODE)
            )
        elif not known.is_warning:
            kept_problems.append(
                Problem(
                    where,
                    f"{rule.code} is an error ({known.summary}); errors cannot be silenced: "
                    f"{known.fix}, then remove this entry",
                    LINT_IGNORES_ERROR,
                )
            )
        elif complete and rule.index not in used:
            scope = f" at {rule.path}" if rule.path else ""
            kept_problems.append(
                Problem(
                    (*where[:3],),
                    f"nothing reports {rule.code}{scope}; remove this entry",
                    LINT_IGNORE_UNUSED,
                )
            )
    return kept_problems, kept_errors
