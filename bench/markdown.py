"""How every benchmark prints its results: a Markdown table (docs/benchmarks.md quotes them)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def print_table(header: str, rule: str, rows: Iterable[Sequence[str]]) -> None:
    """Print ``header`` and ``rule`` (the table's first two lines, as written) and one ``| a | b |``
    line per row; returns nothing, the table is the benchmark's output."""
    print(header)
    print(rule)
    for row in rows:
        print("| " + " | ".join(row) + " |")
