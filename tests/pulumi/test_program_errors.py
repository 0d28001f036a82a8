"""An invalid stack spec fails `pulumi up` with exactly the errors `accelplane validate` prints."""

from __future__ import annotations

from pathlib import Path

import pulumi
import pytest
from accelplane.cli import main as cli_main

from tests.pulumi.conftest import RunProgram
from tests.support.pulumi_program import copy_project
from tests.support.specs import write_spec

BAD_SPECS = {
    "schema": """
        extends: [base/gpu-platform.yaml]
        cluster: {name: bad-schema, platforms: [kubernetes]}
        queues:
          - {name: streaming, weight: 0, capability: {cpu: 8, memory: 8Gi, pods: 10}}
          - {name: batch, weight: 1, colour: blue, capability: {cpu: 8, memory: 8Gi, pods: 10}}
        """,
    "semantic": """
        extends: [base/gpu-platform.yaml]
        cluster: {name: bad-ref, platforms: [kubernetes]}
        queues:
          - {name: streaming, parent: nowhere, weight: 1, capability: {cpu: 8, memory: 8Gi, pods: 10}}
        """,
    "base-file": """
        extends: [base/broken.yaml]
        cluster: {name: bad-base, platforms: [kubernetes]}
        """,
    "yaml-syntax": """
        cluster: {name: bad-yaml
        """,
}
BROKEN_BASE = """
    priorityClasses:
      - {name: system-critical-flink, value: 2000000000}
    """


def write_project(tmp_path: Path, name: str) -> Path:
    project = copy_project(tmp_path / "project")
    write_spec(project / "stacks", BROKEN_BASE, "base/broken.yaml")
    write_spec(project / "stacks", BAD_SPECS[name], f"{name}.yaml")
    return project


def cli_validate(
    project: Path, spec: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> str:
    monkeypatch.chdir(project)
    capsys.readouterr()
    assert cli_main(["validate", spec]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    return captured.err.rstrip("\n")


@pytest.mark.parametrize("name", sorted(BAD_SPECS))
def test_invalid_spec_fails_with_the_validate_errors(
    name: str,
    tmp_path: Path,
    pulumi_run: RunProgram,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    project = write_project(tmp_path, name)
    spec = f"stacks/{name}.yaml"
    expected = cli_validate(project, spec, monkeypatch, capsys)
    assert expected.startswith(("stacks/", "stacks/base/"))  # path-named

    registered = []
    with pytest.raises(pulumi.RunError) as info:
        run = pulumi_run({"accelplane:spec": spec}, stack=name, project_dir=project)
        registered = run.registrations
    assert str(info.value) == expected
    assert registered == []


def test_messages_name_the_file_and_path(
    tmp_path: Path,
    pulumi_run: RunProgram,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    project = write_project(tmp_path, "base-file")
    with pytest.raises(pulumi.RunError) as info:
        pulumi_run({"accelplane:spec": "stacks/base-file.yaml"}, stack="x", project_dir=project)
    lines = str(info.value).splitlines()
    assert lines[-1] == f"accelplane: {len(lines) - 1} error{'s' if len(lines) != 2 else ''}"
    assert all(line.startswith("stacks/base/broken.yaml: priorityClasses[0]") for line in lines[:-1]), lines


def test_missing_spec_file(
    tmp_path: Path,
    pulumi_run: RunProgram,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    project = copy_project(tmp_path / "project")
    expected = cli_validate(project, "stacks/nope.yaml", monkeypatch, capsys)
    with pytest.raises(pulumi.RunError) as info:
        pulumi_run({"accelplane:spec": "stacks/nope.yaml"}, stack="x", project_dir=project)
    assert str(info.value) == expected
    assert "stacks/nope.yaml" in str(info.value)


def test_missing_spec_setting_names_the_config_key(pulumi_run: RunProgram) -> None:
    with pytest.raises(pulumi.ConfigMissingError, match="accelplane:spec"):
        pulumi_run({}, stack="x")


WARNED = """
    extends: [base/gpu-platform.yaml]
    cluster: {name: warned, platforms: [kubernetes]}
    queues:
      - {name: streaming, weight: 3, deserved: {cpu: 8, memory: 8Gi}, capability: {cpu: 8, memory: 8Gi, pods: 10}}
    """


def test_warnings_are_logged_and_the_program_proceeds(
    tmp_path: Path,
    pulumi_run: RunProgram,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A valid spec's warnings go to ``pulumi.log.warn``, each as `validate` prints it (issue 28)."""
    project = copy_project(tmp_path / "project")
    write_spec(project / "stacks", WARNED, "warned.yaml")
    monkeypatch.chdir(project)
    capsys.readouterr()
    assert cli_main(["validate", "stacks/warned.yaml"]) == 0
    printed = [line for line in capsys.readouterr().err.splitlines() if " warning AP" in line]
    assert printed
    logged: list[str] = []
    monkeypatch.setattr(pulumi.log, "warn", lambda message, *a, **k: logged.append(message))
    run = pulumi_run({"accelplane:spec": "stacks/warned.yaml"}, stack="warned", project_dir=project)
    assert run.registrations
    assert logged == printed
