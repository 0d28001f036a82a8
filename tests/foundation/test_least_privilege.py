"""Least privilege, checked by a scanner people use (issue 15): checkov on every rendered
Kubernetes tree (DaemonSets, pod templates, RBAC …) and node-image Dockerfile of the example
stacks. Every finding is either fixed in the builders or skipped with its reason by a
``checkov.io/skip<N>`` annotation (``# checkov:skip=`` in the Dockerfile) where the privilege is
granted; the test fails on any unexplained finding.

checkov conflicts with the project's venv (it pins an older ``packaging``), so it lives in its own
venv: ``make checkov`` creates ``.venv-checkov``; ``ACCELPLANE_CHECKOV`` may name another binary.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from accelplane.render import write_tree

from tests.conftest import EXAMPLE_SPECS
from tests.support.paths import REPO_ROOT
from tests.support.render import files_for
from tests.support.specs import findings_by_code

pytestmark = pytest.mark.slow  # checkov over every rendered tree


def checkov_binary() -> str:
    """The checkov executable (fails under CI when missing, skips elsewhere)."""
    candidates = [os.environ.get("ACCELPLANE_CHECKOV"), str(REPO_ROOT / ".venv-checkov" / "bin" / "checkov")]
    for candidate in candidates:
        if candidate and Path(candidate).is_file():
            return candidate
    found = shutil.which("checkov")
    if found:
        return found
    message = (
        "checkov is not installed: run `make checkov` (own venv .venv-checkov) or set ACCELPLANE_CHECKOV"
    )
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="module")
def scan(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """One checkov run over every example stack's rendered tree."""
    root = tmp_path_factory.mktemp("rendered")
    for spec in EXAMPLE_SPECS:
        write_tree(files_for(spec), root / spec.stem)
    proc = subprocess.run(
        [
            checkov_binary(),
            "--directory",
            str(root),
            "--framework",
            "kubernetes",
            "dockerfile",
            "--output",
            "json",
            "--compact",
            "--skip-download",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "BC_SKIP_MAPPING": "TRUE", "CHECKOV_RUN_SCA_PACKAGE_SCAN_V2": "false"},
    )
    assert proc.stdout.strip(), proc.stderr[-3000:]
    reports = json.loads(proc.stdout)
    return reports if isinstance(reports, list) else [reports]


def test_both_frameworks_scanned_something(scan: list[dict[str, Any]]) -> None:
    by_type = {r["check_type"]: r["summary"] for r in scan}
    assert set(by_type) == {"kubernetes", "dockerfile"}
    assert by_type["kubernetes"]["resource_count"] >= 40 and by_type["dockerfile"]["resource_count"] >= 1
    assert all(s["parsing_errors"] == 0 for s in by_type.values())


def test_no_unexplained_findings(scan: list[dict[str, Any]]) -> None:
    failed = [
        f"{f['check_id']} {f['resource']} ({f['file_path']}): {f['check_name']}"
        for r in scan
        for f in r["results"].get("failed_checks", [])
    ]
    assert failed == [], "unexplained checkov findings:\n" + "\n".join(failed)


def test_every_skip_has_a_reason(scan: list[dict[str, Any]]) -> None:
    skipped = [f for r in scan for f in r["results"].get("skipped_checks", [])]
    assert skipped, "expected the privileges we keep to be listed as skipped with their reasons"
    for f in skipped:
        reason = (f.get("check_result") or {}).get("suppress_comment") or f.get("suppress_comment") or ""
        assert len(reason.strip()) > 20, f"{f['check_id']} {f['resource']}: skipped without a reason"


# --- Issue 26: least privilege a spec can break (findings, not scanner results) ---------------------


def _prod_eu(tmp_path: Path, mutate: Any) -> Path:
    from accelplane.spec_loader import load_spec

    from tests.support.specs import write_spec

    doc = load_spec(REPO_ROOT / "stacks" / "prod-eu.yaml").data
    mutate(doc)
    return write_spec(tmp_path, doc)


def test_default_service_account_is_refused(tmp_path: Path) -> None:
    """accelplane binds a native cluster's Role (create/delete pods, write ConfigMaps) to its
    service account; `default` is every unnamed pod's account in the namespace: an error."""
    spec = _prod_eu(tmp_path, lambda d: d["flink"]["clusters"][0].__setitem__("serviceAccount", "default"))
    severity, path, message = findings_by_code(spec)["AP6501"]
    assert (severity, path) == ("error", "flink.clusters[0].serviceAccount")
    assert "every pod in namespace 'flink' that names none" in message and "fraud-scoring" in message


def test_flink_cluster_in_kube_system_is_refused(tmp_path: Path) -> None:
    spec = _prod_eu(tmp_path, lambda d: d["flink"]["clusters"][0].__setitem__("namespace", "kube-system"))
    severity, path, message = findings_by_code(spec)["AP6502"]
    assert (severity, path) == ("error", "flink.clusters[0].namespace")
    assert "hostPath TaskManagers" in message


@pytest.mark.parametrize(
    ("namespace", "owner"),
    [
        ("kube-public", "Kubernetes (system namespace)"),
        ("kube-node-lease", "Kubernetes (system namespace)"),
        ("volcano-system", "the Volcano installation"),
    ],
)
def test_flink_cluster_in_another_system_namespace_is_a_warning(tmp_path: Path, namespace: str, owner: str) -> None:
    spec = _prod_eu(tmp_path, lambda d: d["flink"]["clusters"][0].__setitem__("namespace", namespace))
    severity, path, message = findings_by_code(spec)["AP6503"]
    assert (severity, path) == ("warning", "flink.clusters[0].namespace")
    assert owner in message


def test_example_stacks_keep_least_privilege() -> None:
    """No example stack runs Flink as `default` or in a system namespace."""
    from accelplane.pipeline import load_validated

    for spec in EXAMPLE_SPECS:
        codes = {e.finding.code for e in load_validated(spec).warnings if e.finding}
        assert not codes & {"AP6501", "AP6502", "AP6503"}, (spec.name, codes)
