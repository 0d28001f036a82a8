"""How findings are printed: one line per finding for people, JSON for tools, GitHub annotations.

Text (the default), grouped per file (findings are sorted by file, then path), then a summary::

    stacks/prod.yaml: queues[1].weight: warning AP2101: Volcano's capacity plugin … never reads weight …
    stacks/prod.yaml: queues[2].parent: error AP2003: parent queue 'x' is not defined in queues
    accelplane: 1 error, 1 warning

A finding without a code (one the CLI makes up about its own input, such as a Pulumi stack file
without ``accelplane:spec``) shows its severity alone (``error:``). ``json`` is one document with
every finding's file, path, severity, code, message, summary and fix; ``github`` writes workflow
commands (``::warning file=…,line=…,title=AP2101::…``) that GitHub Actions shows as annotations.
Both give the line of the finding's path in its file (found from the YAML node marks of the text
the loader read, composed once per file: `Lines`).

Only ``github`` is meant to be read by GitHub Actions as commands. Text and JSON output can carry
spec keys, values and file names, so no line of them may read as a workflow command: the runner
takes a line that starts (after blanks) with ``::`` and, in its older syntax, any line holding
``##[`` (actions/runner ``ActionCommand.TryParseV2`` / ``TryParse``); text writes such a ``:`` as
``\\x3a`` and ``#`` as ``\\x23``, JSON writes ``##[`` as ``#\\u0023[`` (the same string once
decoded).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from accelplane.display import escape_controls, escape_controls_json, plain_line
from accelplane.errors import SpecError
from accelplane.findings import Severity
from accelplane.yaml_io import YamlLines

FORMATS = ("text", "json", "github")


def severity_of(error: SpecError) -> Severity:
    """The finding's severity; a finding without a declared one is an error."""
    return error.finding.severity if error.finding is not None else Severity.ERROR


def text_line(error: SpecError) -> str:
    """``file: path: severity code: message`` on one line, control characters escaped and no
    GitHub workflow command in it (`accelplane.display.plain_line`)."""
    code = f" {error.finding.code}" if error.finding is not None else ""
    return plain_line(f"{error.file}: {error.path}: {severity_of(error)}{code}: {error.message}")


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


class Lines:
    """Lines of findings in the spec texts the loader already read (`spec_loader.keeping_texts`):
    no file is opened again (a FIFO or a replaced file cannot hang or change the answer), and each
    file is composed once however many findings it has (`accelplane.yaml_io.YamlLines`)."""

    def __init__(self, texts: Mapping[str, str]) -> None:
        self._texts = texts
        self._files: dict[str, YamlLines] = {}

    def of(self, error: SpecError) -> int | None:
        """The line of ``error``'s path in its file; None when the file was not read (missing, a
        FIFO, not UTF-8) or the path is the whole file."""
        lines = self._files.get(error.file)
        if lines is None:
            text = self._texts.get(error.file)
            if text is None:
                return None
            lines = self._files[error.file] = YamlLines(text)
        return lines.line(error.path)


NO_LINES = Lines({})


def as_dict(error: SpecError, lines: Lines | None = None) -> dict[str, Any]:
    """One finding as the JSON output carries it (with ``lines``: its line in the file, when known)."""
    finding = error.finding
    return {
        "file": error.file,
        "path": error.path,
        **({"line": lines.of(error)} if lines is not None else {}),
        "severity": str(severity_of(error)),
        "code": finding.code if finding else None,
        "message": error.message,
        "summary": finding.summary if finding else None,
        "fix": finding.fix if finding else None,
    }


def json_report(specs: Sequence[tuple[str, Sequence[SpecError]]], lines: Lines = NO_LINES) -> str:
    """One JSON document: per spec its findings, plus the totals (``errors``, ``warnings``); every
    ``##[`` written ``#\\u0023[`` (same data), so no line of it is a GitHub workflow command."""
    import json

    n_errors = n_warnings = 0
    out = []
    for spec, errors in specs:
        e, w = counts(errors)
        n_errors, n_warnings = n_errors + e, n_warnings + w
        out.append({"spec": spec, "errors": e, "warnings": w, "findings": [as_dict(x, lines) for x in errors]})
    doc = {"specs": out, "errors": n_errors, "warnings": n_warnings}
    text = escape_controls_json(json.dumps(doc, indent=2, ensure_ascii=False))
    return text.replace("##[", "#\\u0023[") + "\n"


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_line(error: SpecError, lines: Lines = NO_LINES) -> str:
    """A GitHub Actions workflow command (``::error file=…,title=…::path: message``)."""
    level = "warning" if severity_of(error) is Severity.WARNING else "error"
    title = error.finding.code if error.finding else "accelplane"
    where = lines.of(error)
    at = f",line={where}" if where is not None else ""
    props = f"file={_escape_property(error.file)}{at},title={_escape_property(title)}"
    return escape_controls(f"::{level} {props}::{_escape_data(f'{error.path}: {error.message}')}", newlines=False)


def github_report(errors: Sequence[SpecError], lines: Lines = NO_LINES) -> str:
    """One workflow command per finding."""
    return "".join(github_line(e, lines) + "\n" for e in errors)
