"""Issue 15 §3: control characters from specs and rendered trees never reach a terminal raw, and a
rendered-directory side of `diff` never follows a symbolic link out of the tree."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from accelplane.cli import main
from accelplane.display import escape_controls, has_controls

from tests.support.paths import REPO_ROOT
from tests.support.stack_copies import copy_stacks, load

HOSTILE = [
    "\x1b]0;owned\x07",  # OSC: set the terminal title
    "\x1b[2J\x1b[H",  # clear screen, cursor home
    "\x1b[31mred\x1b[0m",
    "\x9b2J",  # 8-bit CSI
    "del\x7f nul\x00 bell\x07 bs\x08 cr\r",
    "bidi \u202eevil\u202c \u2066iso\u2069",
    "sep\u2028line\u2029para",
    "nonchar\ufffe\uffff bom\ufeff",
]
# Bytes a terminal acts on; our own colour codes are SGR sequences ESC [ <digits> m only.
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029\ufeff\ufffe\uffff]")
SGR = re.compile(r"\x1b\[[0-9;]*m")


def assert_safe(text: str, colour: bool = False) -> None:
    if colour:
        text = SGR.sub("", text)
    found = RAW.findall(text)
    assert not found, f"raw control characters reach the terminal: {found!r}"


def dump(path: Path, data: dict[str, Any]) -> None:
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")


@pytest.mark.parametrize("value", HOSTILE)
def test_escape_controls_leaves_nothing_raw(value: str) -> None:
    out = escape_controls(value)
    assert_safe(out)
    assert not has_controls(out) and has_controls(value)
    assert escape_controls("plain ü 中文 🚀\ttab\nline") == "plain ü 中文 🚀\ttab\nline"
    assert escape_controls("a\nb", newlines=False) == "a\\nb"
    assert escape_controls("\x1b[2J") == "\\x1b[2J"


@pytest.fixture
def hostile_specs(tmp_path: Path) -> tuple[Path, Path]:
    """prod-eu as is, and with every hostile string in free-text fields that reach artifacts."""
    stacks = copy_stacks(tmp_path / "new")
    old = copy_stacks(tmp_path / "old") / "prod-eu.yaml"
    base = load(stacks / "base/gpu-platform.yaml")
    base["priorityClasses"][0]["description"] = "".join(HOSTILE)
    dump(stacks / "base/gpu-platform.yaml", base)
    spec = load(stacks / "prod-eu.yaml")
    spec["cluster"]["description"] = "".join(HOSTILE)
    cluster = next(c for c in spec["flink"]["clusters"] if c["name"] == "fraud-scoring")
    cluster.setdefault("config", {})["pipeline.name"] = "".join(HOSTILE)
    dump(stacks / "prod-eu.yaml", spec)
    return old, stacks / "prod-eu.yaml"


@pytest.mark.parametrize("fmt", ["text", "text-colour", "markdown", "json"])
def test_diff_output_escapes_spec_values(
    hostile_specs: tuple[Path, Path], capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    old, new = hostile_specs
    args = ["diff", str(old), str(new), "--format", fmt.removesuffix("-colour")]
    if fmt == "text-colour":
        args += ["--color", "always"]
    assert main(args) == 1
    out = capsys.readouterr().out
    assert_safe(out, colour=fmt == "text-colour")
    assert "\\x1b]0;owned\\x07" in out or "\\u001b]0;owned\\u0007" in out  # shown, escaped


def test_validate_errors_escape_keys_and_values(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "spec\x1b[2J.yaml"
    text = "cluster: {name: c, platforms: [kubernetes]}\n"
    spec.write_text(text + '"\\e]0;owned\\a": 1\n"x\\u202e": {"\\e[2J": 2}\n', encoding="utf-8")
    assert main(["validate", str(spec)]) == 1
    err = capsys.readouterr().err
    assert_safe(err)
    assert "\\x1b]0;owned\\x07" in err and "spec\\x1b[2J.yaml" in err
    assert len(err.splitlines()) >= 2


@pytest.mark.parametrize("fmt", ["text", "markdown", "json"])
def test_report_escapes_descriptions(
    hostile_specs: tuple[Path, Path], capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    _, new = hostile_specs
    assert main(["report", str(new), "--format", fmt]) == 0
    assert_safe(capsys.readouterr().out)


def test_rendered_directory_side_never_follows_links_out_of_the_tree(tmp_path: Path) -> None:
    """A planted file link, directory link and FIFO in a rendered directory: the diff shows the
    links as links (never the target's content) and does not block on the FIFO."""
    secret_dir = tmp_path / "outside"
    secret_dir.mkdir()
    (secret_dir / "shadow").write_text("root:SECRET-HASH:19000:0:99999:7:::\n")
    old, new = tmp_path / "old", tmp_path / "new"
    for out in (old, new):
        assert main(["render", str(REPO_ROOT / "stacks/edge-standalone.yaml"), "--out", str(out), "-q"]) == 0
    (new / "flink" / "leak.yaml").symlink_to(secret_dir / "shadow")
    (new / "linked-dir").symlink_to(secret_dir)
    os.mkfifo(new / "flink" / "pipe")
    proc = subprocess.run(
        [sys.executable, "-m", "accelplane.cli", "diff", str(old), str(new)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert proc.returncode == 1, proc.stderr
    assert "SECRET-HASH" not in proc.stdout
    assert f"<symbolic link to {secret_dir / 'shadow'}>" in proc.stdout
    assert f"<symbolic link to {secret_dir}>" in proc.stdout
    assert "<not a regular file>" in proc.stdout
