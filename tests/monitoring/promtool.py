"""Running Prometheus' own ``promtool`` (Debian package ``prometheus``) on rendered rules."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml


def promtool() -> str:
    """The promtool executable (fails under CI when missing, skips elsewhere)."""
    found = shutil.which("promtool")
    if found:
        return found
    message = "promtool is not installed: apt-get install prometheus (see .ci/run)"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def check_rules(path: Path) -> str:
    """``promtool check rules`` (syntax, PromQL, lint: duplicate rules); returns its output."""
    proc = subprocess.run([promtool(), "check", "rules", str(path)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def run_rule_tests(directory: Path, rules: dict[str, Any], tests: list[dict[str, Any]]) -> str:
    """``promtool test rules`` of ``tests`` (promtool's unit-test cases) against ``rules``."""
    (directory / "rules.yaml").write_text(yaml.safe_dump(rules, sort_keys=False))
    (directory / "test.yaml").write_text(
        yaml.safe_dump({"rule_files": ["rules.yaml"], "evaluation_interval": "1m", "tests": tests}, sort_keys=False)
    )
    proc = subprocess.run(
        [promtool(), "test", "rules", "test.yaml"], cwd=directory, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout
