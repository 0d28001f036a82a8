"""Upstream data lives beside the checkout (../shared/reference), never in it; a test that needs it
fails, not skips, when it is missing; and no fetched upstream code is committed (docs/testing.md,
'Reference data and upstream code')."""

from __future__ import annotations

import subprocess

import pytest

from tests.support import paths
from tests.support.paths import REFERENCE_DIR, REPO_ROOT, reference


def test_reference_data_is_beside_the_checkout() -> None:
    assert REPO_ROOT.parent / "shared" / "reference" == REFERENCE_DIR
    assert reference("volcano/scheduling.volcano.sh_queues.yaml").is_file()


def test_a_missing_reference_file_fails_the_test_clearly() -> None:
    with pytest.raises(AssertionError, match=r"reference file .* missing"):
        reference("volcano/no-such-file.yaml")


def test_a_missing_reference_folder_fails_the_test_clearly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(paths, "REFERENCE_DIR", REPO_ROOT / "no-such-dir" / "reference")
    with pytest.raises(AssertionError, match=r"needs? \.\./shared/reference beside the checkout"):
        paths.reference("volcano/scheduling.volcano.sh_queues.yaml")


def test_no_fetched_upstream_file_is_committed() -> None:
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    fetched = [
        f
        for f in tracked
        if f.endswith((".go", ".c", ".h"))
        or f.rsplit("/", 1)[-1] == "PROVENANCE.txt"
        or f.startswith("tests/upstream/")
    ]
    assert fetched == []
