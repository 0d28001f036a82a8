"""How findings are printed: one line per finding for people, JSON for tools, GitHub annotations.

Text (the default), grouped per file (findings are sorted by file, then path), then a summary::

    stacks/prod.yaml: queues[1].weight: warning AP2101: Volcano's capacity plugin … never reads weight …
    stacks/prod.yaml: queues[2].parent: error AP2003: parent queue 'x' is not defined in queues
    accelplane: 1 error, 1 warning

A finding without a code (one the CLI makes up about its own input, such as a Pulumi stack file
without ``accelplane:spec``) shows its severity alone (``error:``). ``json`` is one document with
every finding's file, path, severity, code, message, summary and fix; ``github`` writes workflow
commands (``::warning file=…,line=…,title=AP2101::…``) that GitHub Actions shows as annotations.
Both give the line of the finding's path in its file (found from the YAML node marks, read only
when these formats are asked for).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

from accelplane.display import escape_controls, escape_controls_json
from accelplane.errors import SpecError
from accelplane.findings import Severity

FORMATS = ("text", "json", "github")


def severity_of(error: SpecError) -> Severity:
    """The finding's severity; a finding without a declared one is an error."""
    return error.finding.severity if error.finding is not None else Severity.ERROR


def text_line(error: SpecError) -> str:
    """``file: path: severity code: message`` on one line, control characters escaped."""
    code = f" {error.finding.code}" if error.finding is not None else ""
    return escape_controls(
        f"{error.file}: {error.path}: {severity_of(error)}{code}: {error.message}", newlines=False
    )


def counts(errors: Sequence[SpecError]) -> tuple[int, int]:
    """``(errors, warnings)`` among ``errors``."""
    warnings = sum(1 for e in errors if severity_of(e) is Severity.WARNING)
    return len(errors) - warnings, warnings


def summary(errors: Sequence[SpecError]) -> str:
    """``2 errors, 3 warnings`` (the warnings part left out when there are none, the errors part
    when there are only warnings)."""
    n_errors, n_warnings = counts(errors)
    parts = []
    if n_errors or not n_warnings:
        parts.append(f"{n_errors} error{'s' if n_errors != 1 else ''}")
    if n_warnings:
        parts.append(f"{n_warnings} warning{'s' if n_warnings != 1 else ''}")
    return ", ".join(parts)


def text_report(errors: Sequence[SpecError]) -> str:
    """Every finding on its own line, then ``accelplane: <summary>``."""
    lines = [text_line(e) for e in errors]
    return "\n".join([*lines, f"accelplane: {summary(errors)}"]) + "\n"


def line_of(error: SpecError) -> int | None:
    """The line of ``error``'s path in its file (`accelplane.yaml_io.line_of`), None when the file
    cannot be read or the path is the whole file. Read only for the tool formats (JSON, GitHub)."""
    from accelplane.yaml_io import line_of as find

    text = _text(error.file)
    return find(text, error.path) if text is not None else None


@cache
def _text(file: str) -> str | None:
    try:
        with open(file, encoding="utf-8") as fh:
            return fh.read(8 * 1024 * 1024)
    except (OSError, UnicodeDecodeError):
        return None


def as_dict(error: SpecError, *, line: bool = True) -> dict[str, Any]:
    """One finding as the JSON output carries it (``line``: its line in the file, when known)."""
    finding = error.finding
    return {
        "file": error.file,
        "path": error.path,
        **({"line": line_of(error)} if line else {}),
        "severity": str(severity_of(error)),
        "code": finding.code if finding else None,
        "message": error.message,
        "summary": finding.summary if finding else None,
        "fix": finding.fix if finding else None,
    }


def json_report(specs: Sequence[tuple[str, Sequence[SpecError]]]) -> str:
    """One JSON document: per spec its findings, plus the totals (``errors``, ``warnings``)."""
    import json

    n_errors = n_warnings = 0
    out = []
    for spec, errors in specs:
        e, w = counts(errors)
        n_errors, n_warnings = n_errors + e, n_warnings + w
        out.append({"spec": spec, "errors": e, "warnings": w, "findings": [as_dict(x) for x in errors]})
    doc = {"specs": out, "errors": n_errors, "warnings": n_warnings}
    return escape_controls_json(json.dumps(doc, indent=2, ensure_ascii=False)) + "\n"


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_line(error: SpecError) -> str:
    """A GitHub Actions workflow command (``::error file=…,title=…::path: message``)."""
    level = "warning" if severity_of(error) is Severity.WARNING else "error"
    title = error.finding.code if error.finding else "accelplane"
    where = line_of(error)
    at = f",line={where}" if where is not None else ""
    props = f"file={_escape_property(error.file)}{at},title={_escape_property(title)}"
    return escape_controls(f"::{level} {props}::{_escape_data(f'{error.path}: {error.message}')}", newlines=False)


def github_report(errors: Sequence[SpecError]) -> str:
    """One workflow command per finding."""
    return "".join(github_line(e) + "\n" for e in errors)
