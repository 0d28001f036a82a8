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
* behaviour: the container's own ``command`` is run here with ``sh`` against a fake ``FLINK_HOME``,
  the rendered ConfigMap's entry stub and module laid out as the pod mounts them (their two
  directories moved under a temporary directory) and the suite's fake ``nvidia-smi``, for every
  way the NVIDIA runtime exposes a container's
  devices (``NVIDIA_VISIBLE_DEVICES`` as a UUID list, ``void`` / the volume-mounts directory with
  only the allocated GPUs visible, unset) and for each failure: missing plugin jar, missing script,
  an image without ``python3``, too few GPUs, a broken driver. It passes exactly when Flink's GPU
  driver would find the TaskManager's GPUs;
* the bytecode cache, in an image without our precompiled module (the layout here has none): the
  preflight's call writes the module's bytecode into the pod's cache, and the TaskManager's later
  call (Flink's ``GPUDriver`` running the stub) loads the module from it instead of compiling it;
  without a usable cache discovery still works (compiled in memory). The node image's own bytecode,
  used instead when the ConfigMap carries the same script, is tested in
  tests/discovery/test_pod_entry.py.

That Flink keeps the init container in the pods it creates is checked with Flink's own pod factory
(tests/flink/test_flink_pod_factory.py, ``test_volcano_binding_survives``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from accelplane import discovery_install
from accelplane.builders.pod_templates import BYTECODE_VOLUME, MAIN_CONTAINER, PREFLIGHT_INIT_CONTAINER

from tests.conftest import EXAMPLE_SPECS, STACKS_DIR
from tests.support.fake_nvidia_smi import fake_gpu_uuid, install_fake_nvidia_smi
from tests.support.render import files_for


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
    discovery = [m for m in main["volumeMounts"] if m["name"].startswith("accelplane-gpu-discovery")]
    assert [m["mountPath"] for m in discovery] == [
        script,
        discovery_install.MODULE_PATH,
        discovery_install.POD_BYTECODE_DIR,
    ]
    # the same mounts, except that only the preflight (which runs first) may write the bytecode cache
    assert pre["volumeMounts"] == [
        {k: v for k, v in m.items() if not (m["name"] == BYTECODE_VOLUME and k == "readOnly")} for m in discovery
    ]
    assert discovery[2]["readOnly"] is True
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


PROD_EU = STACKS_DIR / "prod-eu.yaml"


def _configmap_data() -> dict[str, str]:
    """Data of prod-eu's rendered discovery ConfigMap (namespace ``flink``)."""
    files = files_for(PROD_EU)
    text = files[f"kubernetes/configmap_flink_{discovery_install.configmap_name()}.yaml"][0]
    data: dict[str, str] = yaml.safe_load(text)["data"]
    return data


@pytest.fixture
def preflight(tmp_path: Path) -> Any:
    """Run prod-eu/fraud-scoring's preflight command (2 GPUs, ``--isolated-devices``) with ``sh``:
    the rendered ConfigMap's stub at the script path and its module in the module directory, both
    directories (and the pod's bytecode cache) moved under ``tmp_path``, ``FLINK_HOME`` there too,
    the fake nvidia-smi on PATH. ``run.taskmanager(*args)`` then calls the stub the way Flink's
    ``GPUDriver`` does in the TaskManager container."""
    template = yaml.safe_load(files_for(PROD_EU)["flink/fraud-scoring/taskmanager-pod-template.yaml"][0])
    (pre,) = [c for c in template["spec"]["initContainers"] if c["name"] == PREFLIGHT_INIT_CONTAINER]
    data = _configmap_data()
    module_dir, cache = tmp_path / "module", tmp_path / "bytecode"
    module_dir.mkdir()
    cache.mkdir()
    # The rendered stub, with its two fixed directories moved (the only change).
    assert data[discovery_install.CONFIGMAP_KEY] == discovery_install.pod_entry_stub()
    stub_text = discovery_install.pod_entry_stub(str(module_dir), str(cache))
    script = tmp_path / "accelplane-gpu-discovery"
    script.write_text(stub_text)
    script.chmod(0o555)
    module = module_dir / discovery_install.MODULE_KEY
    module.write_text(data[discovery_install.MODULE_KEY])
    module.chmod(0o444)
    home = tmp_path / "flink"
    plugin = home / "plugins" / "external-resource-gpu"
    plugin.mkdir(parents=True)
    (plugin / "flink-external-resource-gpu-1.20.5.jar").write_bytes(b"")
    fake = install_fake_nvidia_smi(tmp_path / "bin", count=4)
    sh = shutil.which("sh")
    assert sh is not None and pre["command"][0] == "sh"
    command = [sh, *pre["command"][1:4], str(script), *pre["command"][5:]]
    path = f"{fake.parent}{os.pathsep}{os.environ['PATH']}"

    def env_of(extra: dict[str, str]) -> dict[str, str]:
        return {"PATH": path, "FLINK_HOME": str(home), "HOME": str(tmp_path), **extra}

    def run(**env: str) -> Any:
        return subprocess.run(command, env=env_of(env), capture_output=True, text=True, timeout=60)

    def taskmanager(*args: str, **env: str) -> Any:
        return subprocess.run([str(script), *args], env=env_of(env), capture_output=True, text=True, timeout=60)

    run.script = script  # type: ignore[attr-defined]
    run.plugin = plugin  # type: ignore[attr-defined]
    run.module = module  # type: ignore[attr-defined]
    run.cache = cache  # type: ignore[attr-defined]
    run.taskmanager = taskmanager  # type: ignore[attr-defined]
    run.fake_bin = fake.parent  # type: ignore[attr-defined]
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


def test_preflight_refuses_an_image_without_python3(preflight: Any) -> None:
    """The stub runs the module with ``python3`` from PATH: an image without it cannot run
    discovery, and the preflight says so."""
    proc = preflight(PATH=str(preflight.fake_bin))  # sh is run by absolute path; no python3 here
    assert proc.returncode == 1
    assert "python3" in proc.stderr and "not found" in proc.stderr
    assert "refusing to start this GPU TaskManager: GPU discovery" in proc.stderr


def _bytecode(cache: Path) -> list[Path]:
    return sorted(p for p in cache.rglob("*.pyc") if p.name.startswith(discovery_install.MODULE_NAME + "."))


def _verbose_python(directory: Path) -> Path:
    """A ``python3`` first on PATH that runs the real one with ``-v`` (import tracing on stderr)."""
    real = shutil.which("python3")
    assert real is not None
    directory.mkdir()
    wrapper = directory / "python3"
    wrapper.write_text(f'#!/bin/sh\nexec {real} -v "$@"\n')
    wrapper.chmod(0o755)
    return directory


def test_preflight_fills_the_bytecode_cache_the_taskmanager_reads(preflight: Any, tmp_path: Path) -> None:
    """The preflight's call compiles the module once and writes its bytecode into the pod's cache;
    the TaskManager's call (Flink's GPUDriver running the stub with the configured arguments) then
    loads the module from that bytecode instead of compiling it, and finds the same GPUs."""
    env = {"NVIDIA_VISIBLE_DEVICES": "void", "FAKE_HOST_GPUS": "1,3"}
    assert _bytecode(preflight.cache) == []
    proc = preflight(**env)
    assert proc.returncode == 0, proc.stderr
    (pyc,) = _bytecode(preflight.cache)
    assert pyc.parent == preflight.cache / preflight.module.parent.relative_to("/")
    verbose = _verbose_python(tmp_path / "verbose")
    tm = preflight.taskmanager("2", "--isolated-devices", PATH=f"{verbose}{os.pathsep}{preflight.fake_bin}"
                               f"{os.pathsep}{os.environ['PATH']}", **env)
    assert tm.returncode == 0, tm.stderr
    assert tm.stdout == "0,1\n"
    assert f"code object from '{pyc}'" in tm.stderr, "the TaskManager's call uses the preflight's bytecode"
    assert f"code object from {preflight.module}\n" not in tm.stderr, "and does not compile the module"
    assert _bytecode(preflight.cache) == [pyc]


def test_discovery_works_without_a_usable_bytecode_cache(preflight: Any) -> None:
    """A cache that cannot be written (not there, or the TaskManager's read-only mount before any
    preflight ran) costs only speed: the module is compiled in memory and discovery answers."""
    preflight.cache.rmdir()
    preflight.cache.write_text("not a directory")  # nothing can be created below it
    proc = preflight(FAKE_HOST_GPUS="2,3")
    assert proc.returncode == 0, proc.stderr
    tm = preflight.taskmanager("2", FAKE_HOST_GPUS="2,3")
    assert (tm.returncode, tm.stdout) == (0, "0,1\n"), tm.stderr


def test_preflight_program_and_start_scripts_are_shellcheck_clean(tmp_path: Path) -> None:
    """The init container's program (POSIX sh), the pods' discovery entry stub and every example
    stack's standalone start scripts (single-model ones included) pass shellcheck at style level."""
    from tests.support.validators import tool

    (_, template, _) = TEMPLATES[0]
    (pre,) = [c for c in template["spec"]["initContainers"] if c["name"] == PREFLIGHT_INIT_CONTAINER]
    program = tmp_path / "preflight.sh"
    program.write_text("#!/bin/sh\n" + pre["command"][2])  # run by `sh -c`: POSIX sh
    stub = tmp_path / "accelplane-gpu-discovery"
    stub.write_text(_configmap_data()[discovery_install.CONFIGMAP_KEY])  # the pods' entry stub
    paths = [program, stub]
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
