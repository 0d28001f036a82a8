"""Error types for user mistakes: every message names the file and the path inside the spec."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from accelplane.display import escape_controls
from accelplane.findings import Finding, Severity

PathTuple = tuple[str | int, ...]


def format_path(path: Sequence[str | int]) -> str:
    """Return a spec path as users write it, e.g. ``queues[2].capability.nvidia.com/gpu``.

    Map keys are joined with dots verbatim (resource names keep their dots and slashes, which is how
    people read them); list indexes are bracketed. The empty path is ``<root>``.
    """
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "<root>"


@dataclass(frozen=True, order=True)
class SpecError:
    """One problem in a spec, located by file and path inside that file."""

    file: str
    path: str
    message: str
    finding: Finding | None = field(default=None, compare=False)

    @property
    def is_warning(self) -> bool:
        """True for a finding declared a warning (printed, never fatal without ``--strict``)."""
        return self.finding is not None and self.finding.severity is Severity.WARNING

    def __str__(self) -> str:
        """``file: path: message`` on one line, control characters escaped (`accelplane.display`)."""
        return escape_controls(f"{self.file}: {self.path}: {self.message}", newlines=False)


@dataclass(frozen=True)
class Problem:
    """A problem found on the merged spec, located by the path in the merged document.

    The loader's provenance map turns it into a `SpecError` that names the file (a base or the
    cluster spec) and the path inside that file.
    """

    path: PathTuple
    message: str
    finding: Finding | None = field(default=None, compare=False)  # its code and severity (`accelplane.findings`)

    @property
    def is_warning(self) -> bool:
        """True for a finding declared a warning."""
        return self.finding is not None and self.finding.severity is Severity.WARNING


class SpecErrors(Exception):
    """Raised with every problem found at once; the CLI prints them and exits 1."""

    def __init__(self, errors: Iterable[SpecError]):
        self.errors: list[SpecError] = sorted(set(errors))
        super().__init__("\n".join(str(e) for e in self.errors))


class UsageError(Exception):
    """A mistake in how the tool was called (not in a spec): the CLI exits 2."""
