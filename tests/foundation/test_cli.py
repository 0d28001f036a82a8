"""The `accelplane` CLI: exit codes, atomic output, schema printing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from accelplane.cli import main

from tests.conftest import EXAMPLE_SPECS
from tests.support.paths import REPO_ROOT


def test_validate_examples_ok(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", *map(str, EXAMPLE_SPECS)]) == 0
    assert capsys.readouterr().out.count(": ok") == len(EXAMPLE_SPECS)


def test_schema_prints_the_json_schema(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema"]) == 0
    assert json.loads(capsys.readouterr().out)["title"] == "accelplane cluster spec"


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["render", "x.yaml"])  # --out missing
    assert exc.value.code == 2
    with pytest.raises(SystemExit) as exc:
        main(["frobnicate"])
    assert exc.value.code == 2


def test_render_refuses_to_replace_foreign_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "precious"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    assert main(["render", str(EXAMPLE_SPECS[0]), "--out", str(out)]) == 2
    assert "not written by accelplane" in capsys.readouterr().err
    assert (out / "notes.txt").read_text() == "mine"


def test_render_layout(tmp_path: Path) -> None:
    spec = next(p for p in EXAMPLE_SPECS if p.stem == "prod-eu")
    assert main(["render", str(spec), "--out", str(tmp_path / "out"), "-q"]) == 0
    names = {p.name for p in (tmp_path / "out" / "kubernetes").iterdir()}
    assert "queue__streaming.yaml" in names
    assert "priorityclass__flink-critical.yaml" in names
    assert "configmap_volcano-system_volcano-scheduler-configmap.yaml" in names
    assert (tmp_path / "out" / ".accelplane-render").is_file()


def test_console_entry_point_runs_without_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("cluster: [unterminated\n")
    proc = subprocess.run(
        [sys.executable, "-m", "accelplane.cli", "validate", str(bad)],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
    )
    assert proc.returncode == 1
    assert "invalid YAML" in proc.stderr and "Traceback" not in proc.stderr
    proc = subprocess.run(
        [sys.executable, "-m", "accelplane.cli", "validate", str(tmp_path / "missing.yaml")],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
    )
    assert proc.returncode == 1 and "missing.yaml: <root>: error AP1201: file not found" in proc.stderr
