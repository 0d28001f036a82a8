"""`accelplane diff` on the command line: exit codes, formats, colour."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from accelplane.cli import main
from accelplane.diff.changes import Tree
from accelplane.render import write_tree

from tests.diff.scenarios import base_tree, scenario_tree
from tests.support.paths import REPO_ROOT


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[str, str]:
    """The base tree and the add-queue scenario as rendered directories on disk."""
    old, new = tmp_path / "old", tmp_path / "new"

    def write(tree: Tree, out: Path) -> None:
        write_tree({p: (c, m) for p, (c, m) in tree.items() if isinstance(c, str)}, out)

    write(base_tree(), old)
    write(scenario_tree("add-queue"), new)
    return str(old), str(new)


def test_exit_codes(dirs: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    old, new = dirs
    assert main(["diff", old, old]) == 0
    assert main(["diff", old, new]) == 1
    assert main(["diff", old, str(Path(old) / "missing")]) == 2
    assert "missing: no such file or directory" in capsys.readouterr().err


def test_formats(dirs: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    old, new = dirs
    assert main(["diff", old, new, "--format", "json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["equal"] is False and data["old"] == old and data["new"] == new
    assert data["summary"] == {"kubernetes": {"added": 1, "removed": 0, "changed": 1, "renamed": 0}}
    assert [a["id"] for a in data["artifacts"]] == ["Queue batch", "Queue research"]
    assert main(["diff", old, new, "-f", "markdown"]) == 1
    assert capsys.readouterr().out.startswith("## accelplane diff\n")


def test_colour_only_when_asked_or_on_a_terminal(
    dirs: tuple[str, str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    old, new = dirs
    monkeypatch.delenv("NO_COLOR", raising=False)
    main(["diff", old, new])  # captured stdout is not a TTY
    assert "\x1b[" not in capsys.readouterr().out
    main(["diff", old, new, "--color", "always"])
    coloured = capsys.readouterr().out
    assert "\x1b[32m+ Queue research\x1b[0m" in coloured and "\x1b[33m~ Queue batch\x1b[0m" in coloured
    main(["diff", old, new, "--color", "always", "--format", "json"])
    assert "\x1b[" not in capsys.readouterr().out
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    main(["diff", old, new])
    assert "\x1b[" in capsys.readouterr().out
    main(["diff", old, new, "--color", "never"])
    assert "\x1b[" not in capsys.readouterr().out
    monkeypatch.setenv("NO_COLOR", "1")
    main(["diff", old, new])
    assert "\x1b[" not in capsys.readouterr().out


def test_duplicate_objects_in_a_directory_exit_2(
    dirs: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    old, _ = dirs
    src = Path(old) / "kubernetes" / "queue__batch.yaml"
    (Path(old) / "kubernetes" / "copy.yaml").write_text(src.read_text())
    assert main(["diff", old, old]) == 2
    assert "Queue batch (scheduling.volcano.sh) is defined twice" in capsys.readouterr().err


def test_console_script_entry_point(dirs: tuple[str, str]) -> None:
    old, new = dirs
    proc = subprocess.run(
        [sys.executable, "-m", "accelplane.cli", "diff", old, new, "--format", "markdown"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 1, proc.stderr
    assert "| Kubernetes objects | 1 | 0 | 1 | 0 |" in proc.stdout
    assert "\x1b[" not in proc.stdout
