"""``REV:path`` sides in a temporary git repository created by the test."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from accelplane.cli import main

from tests.support.stack_copies import copy_stacks


def git(repo: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True)
    return proc.stdout


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repo with two commits: stacks as in this checkout, then streaming capability 24 → 32.
    The working tree additionally changes the *base* spec (PriorityClass value), uncommitted."""
    assert shutil.which("git"), "git is required for REV:path"
    for key, value in {
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }.items():
        monkeypatch.setenv(key, value)
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    stacks = copy_stacks(root)
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "initial")
    spec = stacks / "prod-eu.yaml"
    spec.write_text(spec.read_text().replace("nvidia.com/gpu: 24", "nvidia.com/gpu: 32"))
    git(root, "commit", "-q", "-am", "more GPUs for streaming")
    base = stacks / "base" / "gpu-platform.yaml"
    base.write_text(base.read_text().replace("value: 100000", "value: 200000"))
    monkeypatch.chdir(root)
    return root


def test_rev_against_rev(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", "HEAD~1:stacks/prod-eu.yaml", "HEAD:stacks/prod-eu.yaml"]) == 1
    out = capsys.readouterr().out
    # the Volcano Queue, and the queue's GPU capability in the monitoring rules (PrometheusRule and file)
    assert out.startswith(
        "accelplane diff: HEAD~1:stacks/prod-eu.yaml → HEAD:stacks/prod-eu.yaml\n3 changed (3 artifacts)"
    )
    assert "• queue streaming: nvidia.com/gpu capability 24 → 32" in out
    assert "vector(32) → vector(40)" in out
    assert main(["diff", "main:stacks/prod-eu.yaml", "HEAD:stacks/prod-eu.yaml"]) == 0


def test_bases_come_from_the_revision(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # HEAD's base still has value 100000; the working tree's base has 200000
    assert main(["diff", "HEAD:stacks/prod-eu.yaml", "stacks/prod-eu.yaml"]) == 1
    out = capsys.readouterr().out
    assert "~ value: 100000 → 200000" in out
    assert "Queue streaming" not in out


def test_paths_relative_to_the_current_directory(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(repo / "stacks")
    assert main(["diff", "HEAD:./prod-eu.yaml", "HEAD:stacks/prod-eu.yaml"]) == 0
    assert main(["diff", "HEAD~1:./prod-eu.yaml", "HEAD:./prod-eu.yaml"]) == 1


def test_rendered_directory_at_a_revision(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["render", "stacks/prod-eu.yaml", "--out", "build/prod-eu", "-q"]) == 0
    git(repo, "add", "-f", "build")
    git(repo, "commit", "-q", "-m", "rendered")
    capsys.readouterr()
    assert main(["diff", "HEAD:build/prod-eu", "stacks/prod-eu.yaml"]) == 0
    assert main(["diff", "HEAD~2:stacks/prod-eu.yaml", "HEAD:build/prod-eu"]) == 1


@pytest.mark.parametrize(
    ("old", "message"),
    [
        ("nope:stacks/prod-eu.yaml", "accelplane: nope:stacks/prod-eu.yaml: unknown revision 'nope'\n"),
        (
            "HEAD:stacks/missing.yaml",
            "accelplane: HEAD:stacks/missing.yaml: stacks/missing.yaml does not exist in revision HEAD\n",
        ),
        ("HEAD:../outside.yaml", "accelplane: HEAD:../outside.yaml: "),
        (
            "no-such-file.yaml",
            "accelplane: no-such-file.yaml: no such file or directory (and not of the form REV:path)\n",
        ),
    ],
)
def test_errors_exit_2(repo: Path, capsys: pytest.CaptureFixture[str], old: str, message: str) -> None:
    assert main(["diff", old, "stacks/prod-eu.yaml"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(message)


def test_invalid_spec_at_a_revision_names_rev_and_path(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = repo / "stacks" / "prod-eu.yaml"
    spec.write_text(spec.read_text().replace("priority: 100", "priority: -1"))
    git(repo, "commit", "-q", "-am", "broken")
    spec.write_text(spec.read_text().replace("priority: -1", "priority: 100"))
    assert main(["validate", "stacks/prod-eu.yaml"]) == 0
    capsys.readouterr()
    assert main(["diff", "HEAD:stacks/prod-eu.yaml", "stacks/prod-eu.yaml"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("HEAD:stacks/prod-eu.yaml: queues[1].priority: ")
    assert err[-1] == f"accelplane: {len(err) - 1} error{'s' if len(err) > 2 else ''}"


def test_outside_a_git_repository(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    copy_stacks(tmp_path)
    assert main(["diff", "HEAD:stacks/prod-eu.yaml", "stacks/prod-eu.yaml"]) == 2
    assert capsys.readouterr().err.startswith(
        "accelplane: HEAD:stacks/prod-eu.yaml: not inside a git repository"
    )
