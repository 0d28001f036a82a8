"""Every string of a spec document, and copies of it with one string changed: the hostile-string corpus.

A *site* is one place a spec author types a string: a string leaf (``("flink", "clusters", 0,
"name")``) or a map key (the last part of its path, marked by `Site.is_key`). `string_sites` lists
every site of a document; `with_variant` returns a copy in which that one string is replaced.
`WHITESPACE_VARIANTS` are the edits the hardening tests apply to each site: a trailing newline
(Python's ``$`` matches before it), a trailing space and a leading space.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

Variant = Callable[[str], str]

WHITESPACE_VARIANTS: dict[str, Variant] = {
    "trailing-newline": lambda s: s + "\n",
    "trailing-space": lambda s: s + " ",
    "leading-space": lambda s: " " + s,
}


@dataclass(frozen=True)
class Site:
    """One string of a document: a leaf value, or (``is_key``) the map key at the end of ``path``."""

    path: tuple[str | int, ...]
    is_key: bool

    def __str__(self) -> str:
        return ("key " if self.is_key else "") + ".".join(str(p) for p in self.path)


def string_sites(doc: Any, path: tuple[str | int, ...] = ()) -> Iterator[Site]:
    """Every string leaf and map key of ``doc``, in document order."""
    if isinstance(doc, dict):
        for key, value in doc.items():
            if isinstance(key, str):
                yield Site((*path, key), True)
            yield from string_sites(value, (*path, key))
    elif isinstance(doc, list):
        for i, value in enumerate(doc):
            yield from string_sites(value, (*path, i))
    elif isinstance(doc, str):
        yield Site(path, False)


def with_variant(doc: Any, site: Site, variant: Variant) -> Any:
    """A deep copy of ``doc`` with the string at ``site`` replaced by ``variant(string)``.

    A renamed key keeps its place in the map (key order is what a user wrote)."""
    out = copy.deepcopy(doc)
    parent = out
    for part in site.path[:-1]:
        parent = parent[part]
    last = site.path[-1]
    if site.is_key:
        assert isinstance(last, str)
        items = list(parent.items())
        parent.clear()
        parent.update((variant(k) if k == last else k, v) for k, v in items)
    else:
        parent[last] = variant(parent[last])
    return out
