"""Rename pairing: a removed and an added artifact are one renamed artifact when their names match
but for a content hash, or are close in name and in content.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Sequence
from typing import Any

from accelplane.diff.changes import CONTENT_SIMILARITY, NAME_SIMILARITY, T

_HASH_SUFFIX = re.compile(r"[-_.]?[0-9a-f]{6,}(?=(\.[A-Za-z0-9]+)?$)")


def hash_stem(name: str) -> str:
    """``name`` without a trailing content hash (``cm-3f9a2c41d0`` → ``cm``)."""
    return _HASH_SUFFIX.sub("", name)


def _rename_score(old_name: str, new_name: str, old_text: str, new_text: str) -> float | None:
    stem_o, stem_n = hash_stem(old_name), hash_stem(new_name)
    if stem_o == stem_n and stem_o and stem_o != old_name:
        return 3.0
    name_ratio = difflib.SequenceMatcher(None, old_name, new_name, autojunk=False).ratio()
    if name_ratio < NAME_SIMILARITY:
        return None
    content_ratio = difflib.SequenceMatcher(
        None, old_text.splitlines(), new_text.splitlines(), autojunk=False
    ).ratio()
    return name_ratio + content_ratio if content_ratio >= CONTENT_SIMILARITY else None


def pair_renames(
    removed: Sequence[T],
    added: Sequence[T],
    group: Callable[[T], Any],
    name: Callable[[T], str],
    text: Callable[[T], str],
) -> list[tuple[T, T]]:
    """Greedy best-first pairing of removed and added artifacts that look like renames."""
    scored: list[tuple[float, int, int]] = []
    for i, r in enumerate(removed):
        for j, a in enumerate(added):
            if group(r) != group(a):
                continue
            score = _rename_score(name(r), name(a), text(r), text(a))
            if score is not None:
                scored.append((-score, i, j))
    used_r: set[int] = set()
    used_a: set[int] = set()
    pairs: list[tuple[T, T]] = []
    for _, i, j in sorted(scored):
        if i in used_r or j in used_a:
            continue
        used_r.add(i)
        used_a.add(j)
        pairs.append((removed[i], added[j]))
    return pairs
