"""Writing spec files and validating them the way a user does: the one place tests do either.

* `write_spec` puts a spec (dedented YAML text or a document) into a directory;
* `model_of` is the validated model of a spec file (raises `SpecErrors` when it is invalid);
* `run_validate` runs ``accelplane validate`` from the spec's directory and returns the exit code
  and every stderr line, each finding as ``file: path: message`` (its ``severity code:`` tag taken
  off; `run_validate_tagged` keeps it); `expect_errors` asserts the exact error lines (warnings
  printed with them are not compared), the ``accelplane: N errors`` summary and exit code 1;
  `expect_warnings` asserts that the spec is valid and prints exactly these warnings;
* `findings_of`, `findings_by_code` and `error_lines` are a spec file's findings as the pipeline
  returns them (no CLI);
* `stack_document` is an example stack as one editable document, `node_pool` one of its pools.
"""

from __future__ import annotations

import copy
import textwrap
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml
from accelplane.cli import main
from accelplane.errors import SpecError, SpecErrors
from accelplane.model import Spec
from accelplane.pipeline import load_validated
from accelplane.spec_loader import load_spec

from tests.support.findings_text import FINDING_LINE, without_tags
from tests.support.paths import REPO_ROOT

SpecSource = str | Mapping[str, Any]
"""YAML text (dedented before writing) or a spec document (dumped in its own key order)."""

WriteSpec = Callable[..., Path]
"""Type of the ``write_spec`` fixture (tests/conftest.py): ``(spec, name="spec.yaml") -> Path``."""


def spec_text(spec: SpecSource) -> str:
    """The file text for ``spec``: dedented YAML text as given, or the document dumped with its keys
    in the order written (as a user would), non-ASCII characters kept as they are."""
    if isinstance(spec, str):
        return textwrap.dedent(spec)
    return yaml.safe_dump(spec, sort_keys=False, allow_unicode=True)


def write_spec(directory: Path, spec: SpecSource, name: str = "spec.yaml") -> Path:
    """Write ``spec`` to ``directory/name`` (creating parent directories) and return that path."""
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(spec_text(spec), encoding="utf-8")
    return path


def model_of(path: Path) -> Spec:
    """The validated model of a spec file (raises `SpecErrors` when the spec is invalid)."""
    return load_validated(path).model


def error_summary(count: int) -> str:
    """The last stderr line of a failed ``accelplane validate``: ``accelplane: N error(s)``."""
    return f"accelplane: {count} error{'s' if count != 1 else ''}"


def run_validate(
    path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> tuple[int, list[str]]:
    """``accelplane validate <file name>`` run in-process from the spec's directory, so errors name
    the file as a user in that directory sees it (``spec.yaml: …``). Returns the exit code and every
    stderr line (error lines, then the summary line when there are errors)."""
    code, lines = run_validate_tagged(path, capsys, monkeypatch)
    return code, [without_tags(line) for line in lines]


def run_validate_tagged(
    path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> tuple[int, list[str]]:
    """As `run_validate`, with each finding line as printed: ``file: path: severity code: message``."""
    monkeypatch.chdir(path.parent)
    capsys.readouterr()
    code = main(["validate", path.name])
    return code, capsys.readouterr().err.splitlines()


def _of_severity(lines: list[str], severity: str) -> list[str]:
    return [
        without_tags(line) for line in lines if (m := FINDING_LINE.match(line)) and m.group("severity") == severity
    ]


def expect_errors(
    path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, lines: list[str]
) -> None:
    """Assert that validating ``path`` fails with exactly ``lines`` (in order), the error summary
    and exit code 1."""
    code, err = run_validate_tagged(path, capsys, monkeypatch)
    assert _of_severity(err, "error") == lines, "\n".join(err)
    assert err[-1].startswith(error_summary(len(lines))), err[-1]
    assert all(FINDING_LINE.match(line) for line in err[:-1]), "\n".join(err)
    assert code == 1


def expect_findings(
    path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, lines: list[str]
) -> None:
    """Assert that validating ``path`` prints exactly these findings (errors and warnings, as
    ``file: path: message``, in order) and exits 1 when one is an error, else 0."""
    code, err = run_validate_tagged(path, capsys, monkeypatch)
    findings = [line for line in err if FINDING_LINE.match(line)]
    assert [without_tags(line) for line in findings] == lines, "\n".join(err)
    assert code == (1 if _of_severity(err, "error") else 0), "\n".join(err)


def expect_warnings(
    path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, lines: list[str]
) -> None:
    """Assert that ``path`` is valid (exit 0) and that validating it prints exactly these warning
    lines (``file: path: message``), in order."""
    code, err = run_validate_tagged(path, capsys, monkeypatch)
    assert code == 0, "\n".join(err)
    assert _of_severity(err, "error") == []
    assert _of_severity(err, "warning") == lines, "\n".join(err)


def findings_of(path: Path) -> list[SpecError]:
    """Every finding of a spec file: the ones `load_validated` raises when there is an error (warnings
    among them), else the warnings it keeps."""
    try:
        return list(load_validated(path).warnings)
    except SpecErrors as exc:
        return exc.errors


def findings_by_code(path: Path) -> dict[str, tuple[str, str, str]]:
    """code → (severity, path, message) of every finding of a spec file that has a code."""
    return {e.finding.code: (e.finding.severity, e.path, e.message) for e in findings_of(path) if e.finding}


def error_lines(path: Path) -> list[str]:
    """``file: path: message`` of every finding `load_validated` raises for a spec file; empty when it
    loads (its warnings are not returned)."""
    try:
        load_validated(path)
    except SpecErrors as exc:
        return [str(e) for e in exc.errors]
    return []


def stack_document(name: str) -> dict[str, Any]:
    """The example stack ``stacks/<name>.yaml`` as one document (a deep copy the caller may edit): its
    bases merged in by accelplane's own loader, since a spec written elsewhere may not extend the
    repository's bases."""
    doc: dict[str, Any] = copy.deepcopy(load_spec(REPO_ROOT / "stacks" / f"{name}.yaml").data)
    doc.pop("extends", None)
    return doc


def node_pool(doc: dict[str, Any], name: str) -> dict[str, Any]:
    """The node pool called ``name`` in a spec document (the object itself, to edit)."""
    return next(p for p in doc["nodePools"] if p["name"] == name)
