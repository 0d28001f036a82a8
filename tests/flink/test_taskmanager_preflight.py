"""Fail loudly on Kubernetes: the GPU preflight init container of every GPU TaskManager pod template.

Real Flink 1.20.5 starts a TaskManager whose GPU plugin jar is missing, whose discovery script is
missing, or whose script fails, and that TaskManager still advertises its configured GPU amount
(tests/gpu_slots/test_gpu_slots_flink.py shows each case). The rendered TaskManager pod templates
therefore carry an init container, ``accelplane-gpu-preflight``, that runs the same discovery script
in inventory mode on the same devices before Flink's container starts.

Checked here:

* shape, for every GPU TaskManager of every example stack (native and operator): the same image,
  the discovery script mounted like the main container's, exactly the GPUs the main container gets
  (Flink's ``kubernetes.config-key`` resource and amount, or the DRA claim), least privilege;
* behaviour: the container's own ``command`` is run here with ``sh`` against a fake ``FLINK_HOME``
  and the suite's fake ``nvidia-smi``, for every way the NVIDIA runtime exposes a container's
  devices (``NVIDIA_VISIBLE_DEVICES`` as a UUID list, ``void`` / the volume-mounts directory with
  only the allocated GPUs visible, unset) and for each failure: missing plugin jar, missing script,
  a script whose interpreter is missing, too few GPUs, a broken driver. It passes exactly when
  Flink's GPU driver would find the TaskManager's GPUs.

That Flink keeps the init container in the pods it creates is checked with Flink's own pod factory
(tests/flink/test_flink_pod_factory.py, ``test_volcano_binding_survives``).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from accelplane.builders.pod_templates import MAIN_CONTAINER, PREFLIGHT_INIT_CONTAINER

from tests.conftest import EXAMPLE_SPECS, STACKS_DIR
from tests.support.fake_nvidia_smi import fake_gpu_uuid, install_fake_nvidia_smi
from tests.support.paths import SOURCE_ROOT
from tests.support.render import files_for

DISCOVERY = SOURCE_ROOT / "accelplane" / "discovery" / "gpu_discovery.py"


def _templates() -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(id, TaskManager pod template, effective Flink config) of every GPU cluster on Kubernetes."""
    out = []
    for spec in EXAMPLE_SPECS:
        files = files_for(spec)
        for path, (text, _) in sorted(files.items()):
            if not path.endswith("/taskmanager-pod-template.yaml"):
                continue
            template = yaml.safe_load(text)
            base = path.rsplit("/", 1)[0]
            config: dict[str, Any] = {}
            for name in ("config.yaml", "flink-conf.yaml"):
                if f"{base}/{name}" in files:
                    config = yaml.safe_load(files[f"{base}/{name}"][0]) or {}
            if not config:  # kubernetes-operator: the FlinkDeployment carries the configuration
                cluster = base.rsplit("/", 1)[1]
                for rel, (obj_text, _) in files.items():
                    if rel.startswith("kubernetes/flinkdeployment_") and rel.endswith(f"_{cluster}.yaml"):
                        config = yaml.safe_load(obj_text)["spec"]["flinkConfiguration"]
            if "external-resource.gpu.amount" in config:
                out.append((f"{spec.stem}/{base.rsplit('/', 1)[1]}", template, config))
    return out


TEMPLATES = _templates()


def test_every_example_gpu_taskmanager_is_covered() -> None:
    ids = {t[0] for t in TEMPLATES}
    assert {"prod-eu/fraud-scoring", "prod-eu/embeddings-amd", "dra-gpus/embeddings-mig"} <= ids, ids


@pytest.mark.parametrize(("case", "template", "config"), TEMPLATES, ids=[t[0] for t in TEMPLATES])
def test_preflight_asks_for_exactly_the_main_containers_gpus(
    case: str, template: dict[str, Any], config: dict[str, Any]
) -> None:
    spec = template["spec"]
    (pre,) = [c for c in spec["initContainers"] if c["name"] == PREFLIGHT_INIT_CONTAINER]
    (main,) = [c for c in spec["containers"] if c["name"] == MAIN_CONTAINER]
    assert spec["initContainers"][-1] is pre, "runs last, after the coordination directory is prepared"
    amount = str(config["external-resource.gpu.amount"])
    resource = config.get("external-resource.gpu.kubernetes.config-key")
    if resource is None:  # DRA: the pod's claim, used by the main container too
        assert pre["resources"]["claims"] == main["resources"]["claims"]
        assert not any("/" in k for k in pre["resources"]["limits"])
    else:
        gpu_limits = {k: v for k, v in pre["resources"]["limits"].items() if "/" in k}
        assert gpu_limits == {resource: amount}
        assert "claims" not in pre["resources"]
    # The discovery script, mounted like the main container's, is what the preflight runs.
    script = config["external-resource.gpu.param.discovery-script.path"]
    assert pre["command"][:5] == ["sh", "-c", pre["command"][2], PREFLIGHT_INIT_CONTAINER, script]
    assert pre["command"][5] == amount
    assert pre["volumeMounts"] == [m for m in main["volumeMounts"] if m["mountPath"] == script]
    assert "--enable-coordination-mode" not in pre["command"], "inventory only: no coordination file"
    if "--isolated-devices" in str(config.get("external-resource.gpu.param.discovery-script.args", "")):
        assert "--isolated-devices" in pre["command"]
    sc = pre["securityContext"]
    assert (sc["runAsNonRoot"], sc["allowPrivilegeEscalation"], sc["readOnlyRootFilesystem"]) == (True, False, True)
    assert sc["capabilities"] == {"drop": ["ALL"]} and sc["runAsUser"] != 0
    assert set(pre["resources"]["limits"]) >= {"cpu", "memory"}
    coordination = [c for c in spec["initContainers"] if c["name"] != PREFLIGHT_INIT_CONTAINER]
    for other in coordination:
        assert other["image"] == pre["image"]


@pytest.fixture
def preflight(tmp_path: Path) -> Any:
    """Run prod-eu/fraud-scoring's preflight command (2 GPUs, ``--isolated-devices``) with ``sh``,
    the discovery script and ``FLINK_HOME`` moved under ``tmp_path``, the fake nvidia-smi on PATH."""
    template = yaml.safe_load(
        files_for(STACKS_DIR / "prod-eu.yaml")["flink/fraud-scoring/taskmanager-pod-template.yaml"][0]
    )
    (pre,) = [c for c in template["spec"]["initContainers"] if c["name"] == PREFLIGHT_INIT_CONTAINER]
    script = tmp_path / "accelplane-gpu-discovery"
    shutil.copyfile(DISCOVERY, script)
    script.chmod(0o755)
    home = tmp_path / "flink"
    plugin = home / "plugins" / "external-resource-gpu"
    plugin.mkdir(parents=True)
    (plugin / "flink-external-resource-gpu-1.20.5.jar").write_bytes(b"")
    fake = install_fake_nvidia_smi(tmp_path / "bin", count=4)
    command = [*pre["command"][:4], str(script), *pre["command"][5:]]
    assert shutil.which("sh") is not None

    def run(**env: str) -> Any:
        import subprocess

        base = {
            "PATH": f"{fake.parent}{os.pathsep}{os.environ['PATH']}",
            "FLINK_HOME": str(home),
            "HOME": str(tmp_path),
        }
        return subprocess.run(command, env={**base, **env}, capture_output=True, text=True, timeout=60)

    run.script = script  # type: ignore[attr-defined]
    run.plugin = plugin  # type: ignore[attr-defined]
    return run


@pytest.mark.parametrize(
    "runtime_env",
    [
        pytest.param(
            {"NVIDIA_VISIBLE_DEVICES": f"{fake_gpu_uuid(1)},{fake_gpu_uuid(3)}", "FAKE_HOST_GPUS": "1,3"},
            id="envvar-uuids",
        ),
        pytest.param({"NVIDIA_VISIBLE_DEVICES": "void", "FAKE_HOST_GPUS": "1,3"}, id="cdi-void"),
        pytest.param(
            {"NVIDIA_VISIBLE_DEVICES": "/var/run/nvidia-container-devices", "FAKE_HOST_GPUS": "0,2"},
            id="volume-mounts",
        ),
        pytest.param({"FAKE_HOST_GPUS": "2,3"}, id="unset"),
    ],
)
def test_preflight_passes_when_the_container_sees_its_gpus(preflight: Any, runtime_env: dict[str, str]) -> None:
    proc = preflight(**runtime_env)
    assert proc.returncode == 0, proc.stderr
    assert "accelplane: GPU preflight passed: discovery found GPU(s) 0,1 for this TaskManager" in proc.stdout


def test_preflight_refuses_too_few_gpus(preflight: Any) -> None:
    proc = preflight(NVIDIA_VISIBLE_DEVICES=fake_gpu_uuid(2), FAKE_HOST_GPUS="2")
    assert proc.returncode == 1
    assert "refusing to start this GPU TaskManager: GPU discovery" in proc.stderr
    assert "failed; its messages are above" in proc.stderr


def test_preflight_refuses_a_broken_driver(preflight: Any) -> None:
    proc = preflight(FAKE_NVIDIA_SMI_FAIL="9")
    assert proc.returncode == 1
    assert "refusing to start this GPU TaskManager: GPU discovery" in proc.stderr


def test_preflight_refuses_a_missing_plugin(preflight: Any) -> None:
    for jar in preflight.plugin.iterdir():
        jar.unlink()
    proc = preflight()
    assert proc.returncode == 1
    assert "Flink's GPU plugin (flink-external-resource-gpu-*.jar) is not in" in proc.stderr


def test_preflight_refuses_a_missing_script(preflight: Any) -> None:
    preflight.script.unlink()
    proc = preflight()
    assert proc.returncode == 1
    assert "missing or not executable" in proc.stderr


def test_preflight_refuses_a_script_without_its_interpreter(preflight: Any) -> None:
    """An image without python3 (the script's interpreter) cannot run discovery: refused too."""
    text = preflight.script.read_text().split("\n", 1)[1]
    preflight.script.write_text("#!/nonexistent/python3\n" + text)
    proc = preflight()
    assert proc.returncode == 1
    assert "refusing to start this GPU TaskManager: GPU discovery" in proc.stderr


def test_preflight_program_and_start_scripts_are_shellcheck_clean(tmp_path: Path) -> None:
    """The init container's program (POSIX sh) and every example stack's standalone start scripts
    (single-model ones included) pass shellcheck at style level."""
    import subprocess

    from tests.node_image.support import tool

    (_, template, _) = TEMPLATES[0]
    (pre,) = [c for c in template["spec"]["initContainers"] if c["name"] == PREFLIGHT_INIT_CONTAINER]
    program = tmp_path / "preflight.sh"
    program.write_text("#!/bin/sh\n" + pre["command"][2])  # run by `sh -c`: POSIX sh
    paths = [program]
    for spec in EXAMPLE_SPECS:
        for rel, (text, _) in files_for(spec).items():
            if "/taskmanagers/" in rel:
                path = tmp_path / spec.stem / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
                paths.append(path)
    assert any("edge-standalone" in str(p) for p in paths), "the single-model example renders start scripts"
    proc = subprocess.run([tool("shellcheck"), "-S", "style", *map(str, paths)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout
