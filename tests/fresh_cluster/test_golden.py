"""Golden files of what a fresh cluster gets from each example stack (regenerate with UPDATE_GOLDEN=1):
Namespaces, the native Flink clusters' ServiceAccount/Role/RoleBinding and the MIG manager layout.
Every golden document also passes its real validator."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from tests.conftest import EXAMPLE_SPECS
from tests.support.mig_parted import mig_parted_errors
from tests.support.render import files_for
from tests.support.validators import validate_core_object

GOLDEN = Path(__file__).resolve().parent / "golden"
COMPONENTS = {"flink-native-rbac", "mig-manager-config"}


def fresh_cluster_objects(spec: Path) -> str:
    """The stack's fresh-cluster objects as one multi-document YAML text, in file order."""
    docs = []
    for path, (text, _) in files_for(spec).items():
        if not path.startswith("kubernetes/"):
            continue
        obj = yaml.safe_load(text)
        component = obj["metadata"].get("labels", {}).get("app.kubernetes.io/component")
        if obj["kind"] == "Namespace" or component in COMPONENTS:
            docs.append(f"# {path}\n{text}")
    return "---\n".join(docs)


@pytest.mark.parametrize("spec", EXAMPLE_SPECS, ids=lambda p: p.stem)
def test_golden(spec: Path) -> None:
    actual = fresh_cluster_objects(spec)
    path = GOLDEN / f"{spec.stem}.yaml"
    if os.environ.get("UPDATE_GOLDEN") == "1":
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(actual, encoding="utf-8")
    assert path.is_file(), f"{path} missing: run with UPDATE_GOLDEN=1 to create it"
    assert actual == path.read_text(encoding="utf-8"), (
        f"{path.name} differs from the golden file (UPDATE_GOLDEN=1)"
    )
    for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")):
        if doc is None:
            continue
        validate_core_object(doc)
        if doc["kind"] == "ConfigMap":
            assert mig_parted_errors(yaml.safe_load(doc["data"]["config.yaml"])) == []


def test_golden_files_are_all_used() -> None:
    assert {p.name for p in GOLDEN.iterdir()} == {f"{s.stem}.yaml" for s in EXAMPLE_SPECS}
