"""A per-spec memo for derived values that several checks and builders need.

`Spec.memo` is one `DerivationMemo`: what a cluster's pod templates or generated Flink keys are is
computed once per spec and shared by every caller until `accelplane.builders.build_all` clears it at
the end of a build. It lives here, apart from the ``derive`` package (which holds *what* is derived),
because it only remembers values; it knows nothing about a spec.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, TypeVar

_T = TypeVar("_T")


class DerivationMemo:
    """``(name, owner) → value``, each value made once by the first caller that asks for it."""

    __slots__ = ("_values",)

    def __init__(self) -> None:
        self._values: dict[Hashable, tuple[object, Any]] = {}

    def get_or_make(self, name: Hashable, owner: object, make: Callable[[], _T]) -> _T:
        """``make()``, computed once per ``name`` and ``owner`` (an object of the spec, such as a
        Flink cluster, kept with the value so its id stays its own while remembered) and returned
        to every later caller as the same object, so callers must not modify it."""
        key = (name, id(owner))
        found = self._values.get(key)
        if found is None:
            found = self._values[key] = (owner, make())
        value: _T = found[1]
        return value

    def clear(self) -> None:
        """Forget every value (a finished build's pod templates and keys are not needed again)."""
        self._values.clear()

    def __len__(self) -> int:
        """How many values are remembered."""
        return len(self._values)
