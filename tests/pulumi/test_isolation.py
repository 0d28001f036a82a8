"""The validate/render path never imports pulumi (it keeps the CLI fast and usable without it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.support.paths import REPO_ROOT, SOURCE_ROOT

PROBE = """
import json, sys
import accelplane.cli, accelplane.builders, accelplane.pipeline, accelplane.render
import accelplane.pulumi, accelplane.pulumi.planning
from accelplane.cli import main
main(["validate", "-q", "stacks/prod-eu.yaml"])
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in ("pulumi", "pulumi_kubernetes", "grpc"))))
"""


def test_cli_builders_pipeline_do_not_import_pulumi() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=REPO_ROOT,
        env={"PYTHONPATH": str(SOURCE_ROOT), "PATH": os.defpath},
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == []


def test_program_imports_pulumi() -> None:
    """Sanity check of the probe: the Pulumi program does import pulumi."""
    proc = subprocess.run(
        [sys.executable, "-c", "import sys, accelplane.program; print('pulumi' in sys.modules)"],
        cwd=REPO_ROOT,
        env={"PYTHONPATH": str(SOURCE_ROOT), "PATH": os.defpath},
        capture_output=True,
        text=True,
        check=True,
    )
    assert proc.stdout.strip() == "True"
