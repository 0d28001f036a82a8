"""Flink's own configuration keys per release, and the name a cluster's Flink reads for a key.

The tables beside this file (``<major>.<minor>.tsv``, one per Flink minor release the schema
accepts and PyPI ships, the newest patch of each) list every ``ConfigOption`` key of that
release's ``flink-dist`` jar with its fallback and deprecated keys, as Flink declares them. They
are written by ``tools/flink_options/extract.py`` (provenance in each file's header) and checked
against the local flink-dist jar by ``tests/flink/test_option_tables.py``.

A key a user writes in ``config`` meets one of these fates for a cluster's Flink version
(`key_fate`):

* ``readable`` — the version reads it (an option key, or a fallback/deprecated key Flink still reads);
* ``renamed`` — the version does not read it, but one of its options is the same option under
  another name (its key or fallback keys meet the key's in another release): the file gets that
  name (``execution.checkpointing.dir`` → ``state.checkpoints.dir`` on 1.18);
* ``absent`` — some release knows the key but this one has no such option: the value would be lost;
* ``unknown`` — no release's flink-dist declares it (connectors, the Table API, user options): left alone;
* ``unchecked`` — there is no table for the version (1.11, 1.12, releases newer than the tables).

Keys with a ``<placeholder>`` (``metrics.reporter.<name>.factory.class``) are templates and never
match a user key.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Literal, TypeVar

TABLE_DIR = Path(__file__).resolve().parent
Version = tuple[int, int]
V = TypeVar("V")
Fate = Literal["readable", "renamed", "absent", "unknown", "unchecked"]


@dataclass(frozen=True)
class OptionKeys:
    """One ``ConfigOption``: its key, then the other names Flink reads it under."""

    key: str
    fallback: tuple[str, ...]
    deprecated: tuple[str, ...]

    @property
    def names(self) -> tuple[str, ...]:
        """Every name Flink reads the option under, its key first."""
        return (self.key, *self.fallback, *self.deprecated)


@dataclass(frozen=True)
class OptionTable:
    """The options of one Flink release."""

    version: str
    """The release the table was extracted from (``1.18.1``)."""
    options: tuple[OptionKeys, ...]
    owner: dict[str, str]
    """Every name the release reads → the key of the option it belongs to."""
    names_of: dict[str, tuple[str, ...]]
    """An option's key → every name the release reads it under (`OptionKeys.names`)."""


@dataclass(frozen=True)
class KeyFate:
    """What a cluster's Flink does with one user key."""

    fate: Fate
    name: str
    """The name to write: the version's name for ``renamed``, else the key as written."""
    table: str | None = None
    """The release whose table decided (``1.18.1``), None for ``unchecked``."""
    known_in: tuple[str, ...] = ()
    """``absent``: the releases whose flink-dist has the key."""


def table_versions() -> tuple[Version, ...]:
    """(major, minor) of every table, oldest first."""
    found = []
    for path in TABLE_DIR.glob("*.tsv"):
        major, minor = path.stem.split(".")
        found.append((int(major), int(minor)))
    return tuple(sorted(found))


def _parse(text: str) -> OptionTable:
    version = ""
    options = []
    for line in text.splitlines():
        if line.startswith("#"):
            if line.startswith("# Flink "):
                version = line.removeprefix("# Flink ").split(":")[0]
            continue
        key, fallback, deprecated = line.split("\t")
        if "<" in key:
            continue
        options.append(
            OptionKeys(
                key,
                tuple(k for k in fallback.split(",") if k and "<" not in k),
                tuple(k for k in deprecated.split(",") if k and "<" not in k),
            )
        )
    owner: dict[str, str] = {}
    for o in options:
        for name in o.names:
            owner.setdefault(name, o.key)
    return OptionTable(version, tuple(options), owner, {o.key: o.names for o in options})


@cache
def option_table(version: Version) -> OptionTable | None:
    """The option table of a Flink minor release, None when there is none."""
    path = TABLE_DIR / f"{version[0]}.{version[1]}.tsv"
    if not path.is_file():
        return None
    return _parse(path.read_text(encoding="utf-8"))


@cache
def _aliases() -> dict[str, frozenset[str]]:
    """Name → every name of every option (in any release) that reads it: the same option's
    names across releases."""
    out: dict[str, set[str]] = {}
    for v in table_versions():
        table = option_table(v)
        assert table is not None
        for o in table.options:
            for name in o.names:
                out.setdefault(name, set()).update(o.names)
    return {k: frozenset(v) for k, v in out.items()}


def key_fate(version: Version, key: str) -> KeyFate:
    """What a Flink ``version`` does with ``key`` in its configuration (see the module doc)."""
    table = option_table(version)
    if table is None:
        return KeyFate("unchecked", key)
    if key in table.owner:
        return KeyFate("readable", key, table.version)
    aliases = _aliases().get(key)
    if aliases is None:
        return KeyFate("unknown", key, table.version)
    counterparts = sorted({table.owner[a] for a in aliases if a in table.owner})
    if len(counterparts) == 1:
        return KeyFate("renamed", counterparts[0], table.version)
    known = []
    for v in table_versions():
        other = option_table(v)
        assert other is not None
        if key in other.owner:
            known.append(other.version)
    return KeyFate("absent", key, table.version, tuple(known))


@cache
def nearest_table(version: Version) -> OptionTable:
    """The option table of ``version``, else of the nearest release that has one (the newest older
    release, or the oldest table for a release older than every table): Flink renames options
    between minor releases, so a neighbour's names are the best guess for an unchecked version."""
    versions = table_versions()
    older = [v for v in versions if v <= version]
    table = option_table(older[-1] if older else versions[0])
    assert table is not None
    return table


@cache
def option_names(version: Version, name: str) -> tuple[str, ...]:
    """Every name a Flink ``version`` reads the option under that ``name`` is a name of (in this
    or any other release), in Flink's order: the key, its fallback keys, its deprecated keys.
    ``("state.checkpoints.dir", "state.backend.fs.checkpointdir")`` for
    ``execution.checkpointing.dir`` on 1.18. Empty when the version has no such option."""
    table = nearest_table(version)
    if name in table.owner:  # no need to read every release's table (`_aliases`)
        return table.names_of[table.owner[name]]
    owners = sorted({table.owner[a] for a in _aliases().get(name, frozenset({name})) if a in table.owner})
    if len(owners) != 1:
        return ()
    return table.names_of[owners[0]]


def resolve_config(version: Version, config: Mapping[str, V]) -> tuple[list[tuple[str, V]], list[tuple[str, str]]]:
    """``config`` with every renamed key under the name ``version`` reads, sorted by key, and the
    renames made as ``(new name, key as written)``. A key is not renamed when the spec sets the new
    name too (`accelplane.checks.flink_versions` reports that clash)."""
    out: dict[str, V] = {}
    renamed: list[tuple[str, str]] = []
    for key, value in config.items():
        fate = key_fate(version, key)
        if fate.fate == "renamed" and fate.name not in config and fate.name not in out:
            out[fate.name] = value
            renamed.append((fate.name, key))
        else:
            out[key] = value
    return sorted(out.items()), sorted(renamed)


USER_DEFINED_FAMILIES = ("metrics.reporter.", "kubernetes.operator.", "fs.", "external-resource.")
"""Key prefixes whose later parts the user names (a reporter, an operator option, a file system
scheme's options, an external resource), never reported as typos (`near_miss`)."""


def _user_defined(key: str) -> bool:
    """True for a key of a family with user-defined parts: `USER_DEFINED_FAMILIES` and
    ``containerized.<role>.env.<NAME>`` (a container environment variable)."""
    return key.startswith(USER_DEFINED_FAMILIES) or (key.startswith("containerized.") and ".env." in key)


def _distance(a: str, b: str, limit: int) -> int:
    """Levenshtein distance of ``a`` and ``b``, or ``limit + 1`` once it must exceed ``limit``."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        if min(current) > limit:
            return limit + 1
        previous = current
    return previous[-1]


@cache
def _names_by_length(version: Version) -> dict[int, tuple[str, ...]]:
    """The names the version reads, grouped by length (a near miss differs by at most 2)."""
    table = option_table(version)
    out: dict[int, list[str]] = {}
    for name in sorted(table.owner if table is not None else ()):
        out.setdefault(len(name), []).append(name)
    return {n: tuple(v) for n, v in out.items()}


@cache
def near_miss(version: Version, key: str) -> str | None:
    """The one name ``version`` reads that ``key`` is a near miss of (Levenshtein distance 1, or 2
    for keys of 12 characters or more), for a key no release declares (`key_fate` ``unknown``) and
    outside the families with user-defined parts; None when there is none or more than one at the
    smallest distance (no guess), or the version has no table."""
    if key_fate(version, key).fate != "unknown" or _user_defined(key):
        return None
    limit = 2 if len(key) >= 12 else 1
    by_length = _names_by_length(version)
    best: list[str] = []
    best_distance = limit + 1
    for n in range(len(key) - limit, len(key) + limit + 1):
        for name in by_length.get(n, ()):
            d = _distance(key, name, limit)
            if d < best_distance:
                best, best_distance = [name], d
            elif d == best_distance and d <= limit:
                best.append(name)
    return best[0] if len(best) == 1 else None
