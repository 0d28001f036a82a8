"""Reading spec files defensively: regular files only (a FIFO never hangs, /dev/zero is never read),
bounded size, symlink loops as spec or base, bases only as .yaml files inside the spec's repository,
and a file that is not a spec reported by what is wrong with it, never by its content."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from accelplane.cli import main
from accelplane.errors import SpecErrors
from accelplane.pipeline import load_validated
from accelplane.spec_loader import MAX_SPEC_BYTES, load_spec

from tests.support.paths import REPO_ROOT

SPEC = "cluster: {name: c, platforms: [kubernetes]}\n"
SECRET = "hunter2-do-not-print"


def _errors(path: str | Path) -> list[str]:
    with pytest.raises(SpecErrors) as exc:
        load_validated(path)
    return [str(e) for e in exc.value.errors]


def test_fifo_does_not_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)
    # a subprocess with a timeout: if reading blocked, the test fails instead of hanging
    proc = subprocess.run(
        [sys.executable, "-m", "accelplane.cli", "validate", "fifo.yaml"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT / "components")},
    )
    assert proc.returncode == 1
    assert proc.stderr.startswith("fifo.yaml: <root>: error AP1201: not a regular file (a FIFO)")


def test_fifo_as_base(write_spec: Callable[..., Path], tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "base.yaml")
    spec = write_spec("extends: [base.yaml]\n" + SPEC)
    assert any("base.yaml: <root>: not a regular file (a FIFO)" in e for e in _errors(spec))


def test_devices_and_directories_are_not_read() -> None:
    assert _errors("/dev/zero") == ["/dev/zero: <root>: not a regular file (a device)"]
    assert _errors("/") == ["/: <root>: not a regular file (a directory)"]


def test_oversized_file(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    with big.open("wb") as fh:
        fh.truncate(MAX_SPEC_BYTES + 1)  # sparse: costs no disk
    assert _errors(big) == [f"{big}: <root>: file is larger than 8 MiB; not a cluster spec"]


def test_symlink_loops_as_spec_and_as_base(write_spec: Callable[..., Path], tmp_path: Path) -> None:
    (tmp_path / "a.yaml").symlink_to("b.yaml")
    (tmp_path / "b.yaml").symlink_to("a.yaml")
    assert _errors(tmp_path / "a.yaml") == [f"{tmp_path / 'a.yaml'}: <root>: cannot read file: symlink loop"]
    spec = write_spec("extends: [a.yaml]\n" + SPEC)
    assert _errors(spec) == [f"{tmp_path / 'a.yaml'}: <root>: cannot read file: symlink loop"]


def test_base_that_is_not_a_spec_is_never_echoed(write_spec: Callable[..., Path], tmp_path: Path) -> None:
    write_spec(f"root:{SECRET}:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n", "shadow.yaml")
    write_spec(f"password: {SECRET}\nuser: admin\n", "creds.yaml")
    write_spec(f"- {SECRET}\n", "list.yaml")
    for base in ("shadow.yaml", "creds.yaml", "list.yaml"):
        errors = _errors(write_spec(f"extends: [{base}]\n" + SPEC))
        assert SECRET not in "\n".join(errors)
        assert len(errors) == 1 and errors[0].startswith(f"{tmp_path / base}: <root>: "), errors
    assert "not an accelplane spec" in _errors(write_spec("extends: [creds.yaml]\n" + SPEC))[0]


def test_bases_must_be_yaml_files(write_spec: Callable[..., Path], tmp_path: Path) -> None:
    write_spec(SPEC, "base.txt")
    errors = _errors(write_spec("extends: [base.txt]\n" + SPEC))
    assert errors == [
        f"{tmp_path / 'spec.yaml'}: extends[0]: base spec 'base.txt' must be a .yaml or .yml file"
    ]


def test_bases_must_live_in_the_spec_repository(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "common").mkdir()
    (repo / "common" / "base.yaml").write_text("queues: [{name: q}]\n")
    (repo / "stacks").mkdir()
    (tmp_path / "outside.yaml").write_text(f"cluster: {{description: {SECRET}}}\n")
    inside = repo / "stacks" / "in.yaml"
    inside.write_text("extends: [../common/base.yaml]\n" + SPEC)
    assert [q["name"] for q in load_spec(inside).data["queues"]] == ["q"]
    outside = repo / "stacks" / "out.yaml"
    outside.write_text("extends: [../../outside.yaml]\n" + SPEC)
    errors = _errors(outside)
    assert len(errors) == 1 and "is outside the spec's repository" in errors[0]
    assert SECRET not in errors[0]
    # a symlink inside the repository pointing out of it is outside too
    (repo / "stacks" / "link.yaml").symlink_to(tmp_path / "outside.yaml")
    (repo / "stacks" / "via-link.yaml").write_text("extends: [link.yaml]\n" + SPEC)
    assert "is outside the spec's repository" in _errors(repo / "stacks" / "via-link.yaml")[0]
    (repo / "stacks" / "abs.yaml").write_text("extends: [/etc/passwd.yaml]\n" + SPEC)
    assert "is outside the spec's repository" in _errors(repo / "stacks" / "abs.yaml")[0]


def test_outside_any_repository_bases_live_below_the_spec(tmp_path: Path) -> None:
    (tmp_path / "dir").mkdir()
    (tmp_path / "base.yaml").write_text("queues: [{name: q}]\n")
    (tmp_path / "dir" / "spec.yaml").write_text("extends: [../base.yaml]\n" + SPEC)
    assert "is outside the spec's repository" in _errors(tmp_path / "dir" / "spec.yaml")[0]


def test_paths_are_printed_as_typed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = tmp_path / "project"
    (project / "stacks" / "base").mkdir(parents=True)
    (project / "stacks" / "base" / "b.yaml").write_text("queues: [{name: q, weight: 0}]\n")
    spec = project / "stacks" / "s.yaml"
    spec.write_text("extends: [base/b.yaml]\n" + SPEC)
    elsewhere = tmp_path / "a" / "b" / "c"
    elsewhere.mkdir(parents=True)
    monkeypatch.chdir(elsewhere)
    assert main(["validate", str(spec)]) == 1
    assert capsys.readouterr().err.startswith(f"{project}/stacks/base/b.yaml: queues[0].weight: ")
    monkeypatch.chdir("/")
    typed = str(spec).lstrip("/")
    assert main(["validate", typed]) == 1
    assert capsys.readouterr().err.startswith(f"{typed.rsplit('/', 1)[0]}/base/b.yaml: queues[0].weight: ")
    monkeypatch.chdir(project)
    assert main(["validate", "./stacks/../stacks/s.yaml"]) == 1
    assert capsys.readouterr().err.startswith("stacks/base/b.yaml: queues[0].weight: ")
