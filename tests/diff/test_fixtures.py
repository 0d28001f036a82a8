"""The hand-made base tree is realistic: its artifacts pass their real validators."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from accelplane.diff.values import parse_flink_legacy, parse_hadoop_xml, parse_ini

from tests.diff.scenarios import BASE_DIR, SCENARIOS, scenario_tree
from tests.support.validators import validate_k8s_object

BIN = Path(sys.executable).parent


@pytest.mark.parametrize("path", sorted(p.name for p in (BASE_DIR / "kubernetes").iterdir()))
def test_kubernetes_objects_validate(path: str) -> None:
    validate_k8s_object(yaml.safe_load((BASE_DIR / "kubernetes" / path).read_text()))


def test_pod_template_validates() -> None:
    pod = yaml.safe_load((BASE_DIR / "flink/fraud-scoring/pod-template-taskmanager.yaml").read_text())
    pod["metadata"]["name"] = "taskmanager"  # Flink names the pods; the template has no name
    validate_k8s_object(pod)


def test_scenario_objects_validate() -> None:
    for name in SCENARIOS:
        for path, (text, _) in scenario_tree(name).items():
            if path.startswith("kubernetes/"):
                assert isinstance(text, str)
                validate_k8s_object(yaml.safe_load(text))


def test_config_files_parse_as_their_kind() -> None:
    assert parse_hadoop_xml((BASE_DIR / "yarn/resource-types.xml").read_text()) is not None
    assert parse_hadoop_xml((BASE_DIR / "yarn/node-resources-v100.xml").read_text()) is not None
    legacy = parse_flink_legacy((BASE_DIR / "flink/sessions-v100/flink-conf.yaml").read_text())
    assert legacy["external-resource.gpu.yarn.config-key"] == "yarn.io/gpu"
    assert set(parse_ini((BASE_DIR / "yarn/container-executor.cfg").read_text())) == {
        "",
        "gpu",
        "cgroups",
        "docker",
    }


def test_script_and_dockerfile_pass_shellcheck_and_hadolint() -> None:
    for cmd in (
        [str(BIN / "shellcheck"), str(BASE_DIR / "node/install-discovery.sh")],
        [str(BIN / "hadolint"), str(BASE_DIR / "node-image/Dockerfile")],
    ):
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        assert proc.returncode == 0, proc.stdout + proc.stderr
