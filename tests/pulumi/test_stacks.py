"""Project and stack files: one Pulumi stack per example cluster spec, settings the program reads."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.conftest import EXAMPLE_SPECS, STACKS_DIR
from tests.pulumi.conftest import RunProgram, stack_config
from tests.support.paths import REPO_ROOT
from tests.support.pulumi_program import PULUMI_STACKS

KNOWN_KEYS = {"accelplane:spec", "accelplane:renderDir", "kubernetes:context", "kubernetes:kubeconfig"}


def test_pulumi_project_file() -> None:
    project = yaml.safe_load((REPO_ROOT / "Pulumi.yaml").read_text(encoding="utf-8"))
    assert project["name"] == "accelplane"  # the namespace of the `accelplane:*` config keys
    assert project["runtime"]["name"] == "python"
    assert project["stackConfigDir"] == "stacks"
    assert "main" not in project  # the program is __main__.py in the project directory
    assert (REPO_ROOT / "__main__.py").read_text(encoding="utf-8").count(
        "accelplane.program import main"
    ) == 1


@pytest.mark.parametrize("spec", EXAMPLE_SPECS, ids=lambda p: p.stem)
def test_every_example_spec_has_a_stack(spec: Path) -> None:
    name = spec.stem
    stack_file = STACKS_DIR / f"Pulumi.{name}.yaml"
    assert stack_file.is_file(), f"example spec stacks/{name}.yaml has no Pulumi stack file {stack_file.name}"
    assert stack_config(name)["accelplane:spec"] == f"stacks/{name}.yaml"


@pytest.mark.parametrize("stack", PULUMI_STACKS)
def test_stack_files_use_known_settings(stack: str) -> None:
    config = stack_config(stack)
    assert set(config) <= KNOWN_KEYS, f"unknown settings {sorted(set(config) - KNOWN_KEYS)}"
    assert (REPO_ROOT / config["accelplane:spec"]).is_file()


def test_kubernetes_provider_settings(pulumi_run: RunProgram) -> None:
    config = {
        "accelplane:spec": "stacks/prod-eu.yaml",
        "kubernetes:context": "prod-eu-admin",
        "kubernetes:kubeconfig": "/etc/accelplane/kubeconfig",
    }
    run = pulumi_run(config, stack="prod-eu")
    (provider,) = run.of_type("pulumi:providers:kubernetes")
    assert provider.name == "kubernetes"
    assert provider.inputs == {
        "context": "prod-eu-admin",
        "kubeconfig": "/etc/accelplane/kubeconfig",
        "enableConfigMapMutable": "true",
    }
    # every Kubernetes resource goes through this provider (never an ambient default provider)
    for r in run.kubernetes():
        assert r.provider.startswith(provider.urn + "::"), r.name


def test_provider_defaults_to_the_ambient_kubeconfig(pulumi_run: RunProgram) -> None:
    run = pulumi_run({"accelplane:spec": "stacks/prod-eu.yaml"}, stack="prod-eu")
    (provider,) = run.of_type("pulumi:providers:kubernetes")
    assert provider.inputs == {"enableConfigMapMutable": "true"}
