"""The validate/render path never imports pulumi (it keeps the CLI fast and usable without it)."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.validators import REPO_ROOT

PROBE = """
import json, sys
import components.cli, components.builders, components.pipeline, components.render
import components.configmap_rollout, components.pulumi_components, components.pulumi_components.graph
from components.cli import main
main(["validate", "-q", "stacks/prod-eu.yaml"])
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in ("pulumi", "pulumi_kubernetes", "grpc"))))
"""


def test_cli_builders_pipeline_do_not_import_pulumi() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=REPO_ROOT,
        env={"PYTHONPATH": str(REPO_ROOT), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == []


def test_program_imports_pulumi() -> None:
    """Sanity check of the probe: the Pulumi program does import pulumi."""
    proc = subprocess.run(
        [sys.executable, "-c", "import sys, components.program; print('pulumi' in sys.modules)"],
        cwd=REPO_ROOT,
        env={"PYTHONPATH": str(REPO_ROOT), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert proc.stdout.strip() == "True"
