"""`validate` output that neither hangs, re-reads, re-composes nor speaks GitHub workflow commands
(issue 37, items 6-9). Work is counted (YAML composes, file opens, rule comparisons), never timed."""

from __future__ import annotations

import builtins
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from accelplane import lint
from accelplane.cli import main
from accelplane.errors import Problem, SpecError, format_path
from accelplane.findings import REGISTRY

WriteSpec = Callable[..., Path]

HEAD = "cluster: {name: c, platforms: [kubernetes]}\n"
POOL = (
    "nodePools:\n"
    "  - {name: gpus, nodes: 2, cpu: 32, memory: 128Gi, gpu: {vendor: nvidia, perNode: 4}, labels: {pool: gpus}}\n"
)


def _weights(n: int) -> str:
    """A spec with ``n`` AP2101 warnings (a queue weight the capacity plugin never reads)."""
    queues = "".join(f"  - {{name: q{i}, weight: 3, deserved: {{cpu: 1}}}}\n" for i in range(n))
    return HEAD + POOL + "queues:\n" + queues


@pytest.fixture
def composes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts `yaml.compose` calls (what finding lines cost per file)."""
    calls: list[int] = []
    real = yaml.compose

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(yaml, "compose", counting)
    return calls


@pytest.mark.parametrize("fmt", ["json", "github"])
def test_lines_compose_each_file_once(
    fmt: str, write_spec: WriteSpec, composes: list[int], capsys: pytest.CaptureFixture[str]
) -> None:
    """Item 6: 3 and 60 findings in one file cost the same number of composes (at most one)."""
    used = []
    for n in (3, 60):
        path = write_spec(_weights(n), f"w{n}.yaml")
        composes.clear()
        assert main(["validate", "--format", fmt, str(path)]) == 0
        out = capsys.readouterr().out
        assert out.count("AP2101") == n
        used.append(len(composes))
    assert used[0] == used[1] <= 1
    if fmt == "json":
        lines = [f["line"] for f in json.loads(out)["specs"][0]["findings"]]
        assert sorted(lines) == [5 + i for i in range(60)]


@pytest.fixture
def opens(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Records every path `open`/`os.open` is asked to open; opening a FIFO raises instead of
    blocking (what the unpatched call would do)."""
    seen: list[str] = []
    real_open, real_os_open = builtins.open, os.open

    def check(path: Any) -> None:
        if isinstance(path, str | os.PathLike):
            seen.append(os.fspath(path))
            if Path(path).is_fifo():
                raise AssertionError(f"opened FIFO {path}")

    def patched_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        check(file)
        return real_open(file, *args, **kwargs)

    def patched_os_open(path: Any, *args: Any, **kwargs: Any) -> Any:
        check(path)
        return real_os_open(path, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", patched_open)
    monkeypatch.setattr(os, "open", patched_os_open)
    yield seen


@pytest.mark.parametrize("fmt", ["text", "json", "github"])
def test_fifo_spec_is_never_opened(
    fmt: str, tmp_path: Path, opens: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """Item 7: a FIFO given as a spec is reported (AP1201) in every format and never opened (on
    main the JSON and GitHub formats opened it again for line numbers and blocked forever)."""
    fifo = tmp_path / "spec.yaml"
    os.mkfifo(fifo)
    assert main(["validate", "--format", fmt, str(fifo)]) == 1
    captured = capsys.readouterr()
    assert "AP1201" in captured.out + captured.err
    assert str(fifo) not in opens


@pytest.mark.parametrize("fmt", ["text", "json", "github"])
def test_spec_and_base_are_opened_once(
    fmt: str, write_spec: WriteSpec, opens: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """Item 7: a spec and its base, each with findings, are opened once each whatever the format."""
    base = write_spec(_weights(2), "base.yaml")
    path = write_spec("extends: [base.yaml]\nqueues:\n  - {name: z, weight: 2, deserved: {cpu: 1}}\n")
    assert main(["validate", "--format", fmt, str(path)]) == 0
    assert capsys.readouterr() is not None
    real = [os.path.realpath(p) for p in opens]
    assert real.count(os.path.realpath(path)) == 1
    assert real.count(os.path.realpath(base)) == 1


def is_workflow_command(line: str) -> bool:
    """A port of what actions/runner reads as a command: ``ActionCommand.TryParseV2`` (a line whose
    start after blanks is ``::``) and the older ``ActionCommand.TryParse`` (``##[`` anywhere)."""
    return line.lstrip().startswith("::") or "##[" in line


HOSTILE_NAME = "::warning file=README.md,line=1::owned.yaml"
HOSTILE_KEY = "##[error file=README.md]owned"


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_text_and_json_carry_no_workflow_command(
    fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Item 8: a spec file name and a spec key that are workflow commands reach text and JSON
    output without any line of it being a command; JSON decodes to the same strings."""
    monkeypatch.chdir(tmp_path)
    Path(HOSTILE_NAME).write_text(HEAD + f"'{HOSTILE_KEY}': 1\n" + _weights(1)[len(HEAD):], encoding="utf-8")
    assert main(["validate", "--format", fmt, HOSTILE_NAME]) == 1
    captured = capsys.readouterr()
    lines = (captured.out + captured.err).splitlines()
    assert lines and not [x for x in lines if is_workflow_command(x)]
    if fmt == "json":
        findings = json.loads(captured.out)["specs"][0]["findings"]
        assert {f["file"] for f in findings} == {HOSTILE_NAME}
        assert any(HOSTILE_KEY in f["message"] for f in findings)
    else:
        assert "\\x3a:warning file=README.md" in captured.err and "#\\x23[error" in captured.err


def test_only_github_format_writes_commands(write_spec: WriteSpec, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_spec(_weights(2))
    assert main(["validate", "--format", "github", str(path)]) == 0
    assert all(is_workflow_command(x) for x in capsys.readouterr().out.splitlines())


def test_lint_ignore_is_indexed_by_code_and_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Item 9: 2,000 path-scoped rules of one code against 2,000 warnings compare a rule with a
    warning only where the rule's path covers it (main compared every pair: 4,000,000)."""
    compared: list[int] = []
    real = lint._covers

    def counting(scope: str, path: str) -> bool:
        compared.append(1)
        return real(scope, path)

    monkeypatch.setattr(lint, "_covers", counting)
    n = 2000
    finding = REGISTRY["AP2101"]
    rules = [lint.Ignore(i, "AP2101", f"queues[{i}]") for i in range(n)]
    problems = [Problem(("queues", i, "weight"), "w", finding) for i in range(n)]

    def locate(path: Any, message: str, f: Any) -> SpecError:
        return SpecError("spec.yaml", format_path(path), message, f)

    kept, _ = lint.apply_ignores(rules, problems, [], locate)
    assert kept == []  # every warning silenced, every rule used
    assert len(compared) <= 2 * n


# --- item 12: control characters in paths the loader opens -----------------------------------------


@pytest.mark.parametrize("ref", ["base\x00.yaml", "base.yaml\n", "ba\tse.yaml", "\x1b[2Jbase.yaml"])
def test_extends_entry_with_a_control_character_is_a_finding(
    ref: str, write_spec: WriteSpec, capsys: pytest.CaptureFixture[str]
) -> None:
    """A NUL in an ``extends`` entry was a traceback (``os.path.realpath``: embedded null byte)."""
    write_spec(_weights(1), "base.yaml")
    path = write_spec({"extends": [ref], "cluster": {"name": "c", "platforms": ["kubernetes"]}})
    assert main(["validate", str(path)]) == 1
    err = capsys.readouterr().err
    assert "extends[0]: error AP1260:" in err and "Traceback" not in err


def test_stack_file_spec_with_a_nul_is_a_finding(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: x\nruntime: python\n")
    stack = tmp_path / "Pulumi.dev.yaml"
    stack.write_text('config:\n  accelplane:spec: "stacks/a\\0.yaml"\n')
    assert main(["validate", str(stack)]) == 1
    assert "config.accelplane:spec: error AP1261:" in capsys.readouterr().err
