"""Real validators for rendered artifacts, shared by every test module.

* Core Kubernetes objects: `kubernetes-validate` in strict mode (rejects unknown fields).
* Volcano, Kueue, prometheus-operator and Flink Kubernetes Operator custom resources: the
  ``openAPIV3Schema`` of the upstream CRDs in ``../shared/reference`` (byte-identical copies, see
  PROVENANCE.txt in each folder), made strict.
"""

from __future__ import annotations

import functools
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import yaml

from tests.support.paths import reference

KUBERNETES_VERSION = "1.33.0"
DRA_RELEASES = {"resource.k8s.io/v1beta1": "1.32.0", "resource.k8s.io/v1beta2": "1.33.0", "resource.k8s.io/v1": "1.34.0"}
"""The Kubernetes release accelplane renders each ``resource.k8s.io`` version for (the DRA objects'
schemas differ per version; tests/dra validates them against every release 1.32–1.37)."""

CRD_FILES = {
    ("scheduling.volcano.sh", "Queue"): "volcano/scheduling.volcano.sh_queues.yaml",
    ("scheduling.volcano.sh", "PodGroup"): "volcano/scheduling.volcano.sh_podgroups.yaml",
    ("monitoring.coreos.com", "PodMonitor"): "prometheus-operator/monitoring.coreos.com_podmonitors.yaml",
    ("monitoring.coreos.com", "PrometheusRule"): "prometheus-operator/monitoring.coreos.com_prometheusrules.yaml",
    ("flink.apache.org", "FlinkDeployment"): "flink-kubernetes-operator/flinkdeployments.flink.apache.org-v1.yml",
    ("flink.apache.org", "FlinkSessionJob"): "flink-kubernetes-operator/flinksessionjobs.flink.apache.org-v1.yml",
    ("kueue.x-k8s.io", "ResourceFlavor"): "kueue/kueue.x-k8s.io_resourceflavors.yaml",
    ("kueue.x-k8s.io", "ClusterQueue"): "kueue/kueue.x-k8s.io_clusterqueues.yaml",
    ("kueue.x-k8s.io", "Cohort"): "kueue/kueue.x-k8s.io_cohorts.yaml",
    ("kueue.x-k8s.io", "LocalQueue"): "kueue/kueue.x-k8s.io_localqueues.yaml",
    ("kueue.x-k8s.io", "WorkloadPriorityClass"): "kueue/kueue.x-k8s.io_workloadpriorityclasses.yaml",
}


@functools.cache
def crd_schema(group: str, kind: str, version: str) -> dict[str, Any]:
    """The openAPIV3Schema of an upstream CRD for ``group``/``kind`` at ``version``."""
    crd = yaml.safe_load(reference(CRD_FILES[(group, kind)]).read_text())
    for v in crd["spec"]["versions"]:
        if v["name"] == version:
            schema: dict[str, Any] = v["schema"]["openAPIV3Schema"]
            return schema
    raise AssertionError(f"CRD {group}/{kind} has no version {version}")


def _strict(schema: Any) -> Any:
    """Copy of an OpenAPI schema with ``additionalProperties: false`` on every object that lists
    ``properties`` (what the API server's structural pruning would silently drop, we reject)."""
    if isinstance(schema, dict):
        out = {k: _strict(v) for k, v in schema.items()}
        if (
            "properties" in schema
            and "additionalProperties" not in schema
            and not schema.get("x-kubernetes-preserve-unknown-fields")
        ):
            out["additionalProperties"] = False
        return out
    if isinstance(schema, list):
        return [_strict(v) for v in schema]
    return schema


def _with_object_header(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with ``apiVersion``, ``kind`` and ``metadata`` at its root where it does not list
    them: the API server accepts them on every custom resource whatever the CRD says (fabric8's
    generated CRDs, the Flink operator's, list only ``spec`` and ``status``)."""
    header = {"apiVersion": {"type": "string"}, "kind": {"type": "string"}, "metadata": {"type": "object"}}
    return {**schema, "properties": {**header, **schema.get("properties", {})}}


def validate_crd_object(obj: dict[str, Any]) -> None:
    """Validate a Volcano, prometheus-operator or Flink Kubernetes Operator custom resource against its
    upstream CRD schema (strict: unknown fields that the API server would prune are errors). Raises
    AssertionError with every problem."""
    group, version = obj["apiVersion"].split("/")
    schema = _strict(_with_object_header(crd_schema(group, obj["kind"], version)))
    errors = sorted(jsonschema.Draft7Validator(schema).iter_errors(obj), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors)


def validate_core_object(obj: dict[str, Any], version: str | None = None) -> None:
    """Validate a core Kubernetes object with kubernetes-validate --strict semantics (against
    ``version``; by default `KUBERNETES_VERSION`, or for a DRA object the release it is rendered for)."""
    if version is None:
        version = DRA_RELEASES.get(obj.get("apiVersion", ""), KUBERNETES_VERSION)
    try:
        kubernetes_validate.validate(obj, version, strict=True)
    except kubernetes_validate.ValidationError as exc:
        raise AssertionError(f"{obj.get('kind')}/{obj.get('metadata', {}).get('name')}: {exc}") from exc


def validate_k8s_object(obj: dict[str, Any]) -> None:
    """Route an object to its real validator: its upstream CRD's schema (a FlinkDeployment also
    through the operator's admission rules, tests/flink/operator_schema.py) or kubernetes-validate."""
    group = obj["apiVersion"].split("/")[0] if "/" in obj["apiVersion"] else ""
    if (group, obj["kind"]) in CRD_FILES:
        validate_crd_object(obj)
        if (group, obj["kind"]) == ("flink.apache.org", "FlinkDeployment"):
            from tests.flink.operator_schema import validate_flink_deployment

            validate_flink_deployment(obj)
    else:
        validate_core_object(obj)


def validate_rendered_files(files: dict[str, tuple[str, int]]) -> None:
    """Check every rendered file with the validator for its kind (used by fuzzing and examples).

    Kubernetes objects go to their real validators; other kinds are dispatched by path and are
    checked by the family test suites with their own real consumers (Flink, Hadoop, hadolint …);
    here they must at least parse in their format.
    """
    import xml.etree.ElementTree as ET

    for path, (text, _mode) in files.items():
        if path.startswith("kubernetes/"):
            validate_k8s_object(yaml.safe_load(text))
        elif path.endswith("-pod-template.yaml"):
            validate_core_object(yaml.safe_load(text))  # a v1/Pod
        elif path.endswith(".xml"):
            ET.fromstring(text)
        elif path.endswith((".yaml", ".yml")) and not path.endswith("flink-conf.yaml"):
            for _ in yaml.safe_load_all(text):
                pass


def tool(name: str) -> str:
    """Path of a validator executable, from this interpreter's venv or PATH.

    Missing: the test fails under CI (env ``CI`` set), and is skipped with the reason elsewhere.
    """
    candidate = Path(sys.executable).parent / name
    found = str(candidate) if candidate.is_file() else shutil.which(name)
    if found is None:
        message = f"{name} is not installed (see docs/node-image.md, 'Validators')"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return found
