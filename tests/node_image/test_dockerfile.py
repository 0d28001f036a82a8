"""node-image/: the Docker build context, checked by hadolint (no finding at any level)."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from pathlib import Path

import pytest
from accelplane.discovery_install import COMPILE_PROGRAM, MODULE_PATH, entry_stub, script_text

from tests.conftest import STACKS_DIR
from tests.support.node_provisioning import FULL_SPEC, SPEC_CASES, artifact
from tests.support.render import files_for
from tests.support.validators import tool


def hadolint(dockerfile: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """hadolint with failure threshold ``style``: any finding (error, warning, info, style) fails."""
    path = tmp_path / "Dockerfile"
    path.write_text(dockerfile)
    return subprocess.run(
        [tool("hadolint"), "--no-color", "--failure-threshold", "style", str(path)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def instructions(dockerfile: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    logical, out = "", []
    for line in dockerfile.splitlines():
        if not logical and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.endswith("\\"):
            logical += line[:-1] + " "
            continue
        logical += line
        keyword, _, args = logical.strip().partition(" ")
        out.append((keyword, " ".join(args.split())))
        logical = ""
    return out


@pytest.mark.parametrize("name", SPEC_CASES)
def test_hadolint_clean(name, write_spec, tmp_path):
    text = artifact(name, write_spec, "node-image/Dockerfile")
    if text is not None:
        result = hadolint(text, tmp_path)
        assert result.returncode == 0 and result.stdout == "", result.stdout + result.stderr


def test_hadolint_would_catch_unpinned_apt_without_the_documented_ignore(tmp_path):
    """The validator really runs: without the justified inline ignore, DL3008 is reported."""
    text = files_for(STACKS_DIR / "prod-eu.yaml")["node-image/Dockerfile"][0]
    assert text.count("# hadolint ignore=DL3008\n") == 1
    result = hadolint(text.replace("# hadolint ignore=DL3008\n", ""), tmp_path)
    assert result.returncode == 1
    assert "DL3008" in result.stdout


def test_build_context_contents(write_spec):
    files = files_for(write_spec(FULL_SPEC))
    context = {k: v for k, v in files.items() if k.startswith("node-image/")}
    assert sorted(context) == [
        "node-image/Dockerfile",
        "node-image/accelplane-gpu-discovery",
        "node-image/accelplane_gpu_discovery.py",
    ]
    script, mode = context["node-image/accelplane_gpu_discovery.py"]
    assert script == script_text()
    assert script.startswith("#!/usr/bin/env python3\n")
    assert mode == 0o644
    # the entry stub runs the module with the venv's python3 (pynvml), isolated and without site
    stub, mode = context["node-image/accelplane-gpu-discovery"]
    assert stub == entry_stub("/opt/accelplane/venv/bin/python3")
    assert stub.startswith("#!/opt/accelplane/venv/bin/python3 -IS\n")
    assert mode == 0o755

    dockerfile = context["node-image/Dockerfile"][0]
    ins = instructions(dockerfile)
    # the pinned base is the default of a build argument, so one context serves other pinned bases
    assert ins[:2] == [("ARG", "BASE_IMAGE=flink:1.19.2-scala_2.12-java17"), ("FROM", "${BASE_IMAGE}")]
    # Least privilege: root only for the install, the Flink user (numeric, for runAsNonRoot) last.
    users = [args for kw, args in ins if kw == "USER"]
    assert users == ["0", "${ACCELPLANE_FLINK_UID}"]
    assert ("ARG", "ACCELPLANE_FLINK_UID=9999") in ins
    # The script comes from the build context, root-owned: the module read-only, its entry stub
    # executable at exactly script_path; then the image's python3 byte-compiles the module.
    copies = [args for kw, args in ins if kw == "COPY"]
    assert copies == [
        f"--chown=0:0 --chmod=0644 accelplane_gpu_discovery.py {MODULE_PATH}",
        "--chown=0:0 --chmod=0755 accelplane-gpu-discovery /usr/local/libexec/accelplane/accelplane-gpu-discovery",
    ]
    # compiled as root, before USER; then the installed entry runs once as the Flink user
    assert [kw for kw, _ in ins][-5:] == ["COPY", "COPY", "RUN", "USER", "RUN"]
    assert ins[-1] == ("RUN", '["/usr/local/libexec/accelplane/accelplane-gpu-discovery", "--help"]')
    assert not [kw for kw, _ in ins if kw == "ADD"]
    labels = dict(re.findall(r'(\S+)="([^"]*)"', next(args for kw, args in ins if kw == "LABEL")))
    assert labels == {
        "io.accelplane.cluster": "mixed",
        "io.accelplane.discovery-script.path": "/usr/local/libexec/accelplane/accelplane-gpu-discovery",
        "io.accelplane.discovery-script.sha256": hashlib.sha256(script.encode()).hexdigest(),
        "org.opencontainers.image.base.name": "flink:1.19.2-scala_2.12-java17",
    }
    plugin_check, run, compile_run, _ = [args for kw, args in ins if kw == "RUN"]
    assert "flink-external-resource-gpu-*.jar" in plugin_check
    assert [kw for kw, _ in ins].index("USER") > [a for _, a in ins].index(plugin_check) - 1
    # the one precompile, as on hosts: COMPILE_PROGRAM (checked-hash .pyc, refusing unsafe directories)
    # (read from the file's own line: `instructions` normalises whitespace, the program's indentation)
    compile_line = next(line for line in context["node-image/Dockerfile"][0].splitlines() if "COMPILE" not in line
                        and line.startswith("RUN [") and "py_compile" in line)
    assert compile_run == " ".join(compile_line.removeprefix("RUN ").split())
    argv = json.loads(compile_line.removeprefix("RUN "))
    assert argv == ["/opt/accelplane/venv/bin/python3", "-I", "-S", "-c", COMPILE_PROGRAM, MODULE_PATH]
    assert "nvidia-ml-py==12.570.86" in run
    assert "--no-cache-dir" in run
    assert "python3 -m venv /opt/accelplane/venv" in run
    # Coordination directories of the Kubernetes clusters (default + k8s-b's override), owned by
    # the Flink user, mode 2770; YARN/standalone-only directories are not the image's business.
    # Create-then-own: mkdir (fails on an existing directory), then chown.
    assert run.endswith(
        "&& mkdir -m 2770 /run/accelplane-k8s /var/lib/accelplane "
        "&& chown flinkgpu:gpu-users /run/accelplane-k8s /var/lib/accelplane"
    )
    assert "install -d" not in run
    assert "id -u flinkgpu" in run
    envs = [args for kw, args in ins if kw == "ENV"]
    assert envs == ['PATH="/opt/accelplane/venv/bin:${PATH}" CUDA_DEVICE_ORDER=PCI_BUS_ID']
    # The Flink configuration is rendered per cluster, never baked into the image.
    assert "external-resource." not in "".join(a for _, a in ins)  # no external-resource.* key
    assert not [a for _, a in ins if "/conf" in a or "FLINK_PROPERTIES" in a]


def test_nested_coordination_directory_gets_root_owned_parents(write_spec):
    spec = FULL_SPEC.replace("/run/accelplane-k8s/coordination", "/run/accelplane/k8s/b/coordination")
    run = next(
        a for kw, a in instructions(files_for(write_spec(spec))["node-image/Dockerfile"][0]) if kw == "RUN" and "apt-get" in a
    )
    assert run.endswith(
        "&& mkdir -m 0755 /run/accelplane /run/accelplane/k8s "
        "&& mkdir -m 2770 /run/accelplane/k8s/b /var/lib/accelplane "
        "&& chown flinkgpu:gpu-users /run/accelplane/k8s/b /var/lib/accelplane"
    )


def test_no_build_context_without_node_image(write_spec):
    spec = FULL_SPEC.replace(
        'nodeImage: {baseImage: "flink:1.19.2-scala_2.12-java17", nvidiaMlPyVersion: "12.570.86"}\n', ""
    )
    files = files_for(write_spec(spec))
    assert not [k for k in files if k.startswith("node-image/")]
    assert "node/provision.sh" in files


def test_defaults_from_example_stack():
    text = files_for(STACKS_DIR / "prod-eu.yaml")["node-image/Dockerfile"][0]
    ins = instructions(text)
    assert ins[:2] == [("ARG", "BASE_IMAGE=flink:1.20.1-java17"), ("FROM", "${BASE_IMAGE}")]
    run = next(a for kw, a in ins if kw == "RUN" and "apt-get" in a)
    assert "nvidia-ml-py==12.575.51" in run
    assert run.endswith("&& mkdir -m 2770 /var/lib/accelplane && chown flink:flink /var/lib/accelplane")
    assert [a for kw, a in ins if kw == "COPY"] == [
        f"--chown=0:0 --chmod=0644 accelplane_gpu_discovery.py {MODULE_PATH}",
        "--chown=0:0 --chmod=0755 accelplane-gpu-discovery "
        "/opt/flink/plugins/external-resource-gpu/accelplane-gpu-discovery",
    ]


@pytest.mark.parametrize("jar", [True, False], ids=["plugin", "no-plugin"])
def test_build_refuses_a_base_image_without_flinks_gpu_plugin(jar: bool, tmp_path: Path) -> None:
    """Fail loudly at build time: the Dockerfile's first RUN, run with ``/bin/sh -c`` as Docker runs a
    shell-form RUN, against a base image's ``$FLINK_HOME``: it passes with
    ``plugins/external-resource-gpu/flink-external-resource-gpu-*.jar`` and stops the build without."""
    ins = instructions(files_for(STACKS_DIR / "prod-eu.yaml")["node-image/Dockerfile"][0])
    runs = [a for kw, a in ins if kw == "RUN"]
    assert "flink-external-resource-gpu-*.jar" in runs[0] and "apt-get" not in runs[0]
    home = tmp_path / "flink"
    plugin = home / "plugins" / "external-resource-gpu"
    plugin.mkdir(parents=True)
    if jar:
        (plugin / "flink-external-resource-gpu-1.20.1.jar").write_bytes(b"")
    (plugin / "gpu-discovery-common.sh").write_text("")  # what the plugin directory also holds
    proc = subprocess.run(
        ["/bin/sh", "-c", runs[0]], env={"FLINK_HOME": str(home), "PATH": "/usr/bin:/bin"},
        capture_output=True, text=True, check=False,
    )
    if jar:
        assert proc.returncode == 0, proc.stderr
    else:
        assert proc.returncode == 1
        assert "the base image has no Flink GPU plugin" in proc.stderr


def test_the_pods_stub_finds_the_bytecode_the_image_build_writes(write_spec):
    """Pods mount the ConfigMap's module over the image's copy and run it with ``python3`` from the
    image's PATH (`pod_entry_stub`), which takes the image's checked-hash ``.pyc`` of the same
    script (tests/discovery/test_pod_entry.py). That ``.pyc`` is the one the build writes: the
    build compiles exactly the module path the stub imports, with the interpreter the image's PATH
    finds first, and leaves the marker the stub looks for."""
    from accelplane.discovery_install import (
        MODULE_DIR,
        compiled_marker,
        configmap_data,
        pod_entry_stub,
        script_digest,
    )

    files = files_for(write_spec(FULL_SPEC))
    dockerfile = files["node-image/Dockerfile"][0]
    compile_line = next(line for line in dockerfile.splitlines() if line.startswith("RUN [") and "py_compile" in line)
    python, *_, module = json.loads(compile_line.removeprefix("RUN "))
    (env,) = [args for kw, args in instructions(dockerfile) if kw == "ENV"]
    first_on_path = re.match(r'PATH="([^:"]+):', env)
    assert first_on_path is not None and python == f"{first_on_path.group(1)}/python3"
    assert module == MODULE_PATH == f"{MODULE_DIR}/accelplane_gpu_discovery.py"
    stub = configmap_data()["accelplane-gpu-discovery"]
    assert stub == pod_entry_stub() and f"if [ -e {compiled_marker()} ]; then" in stub
    assert compiled_marker() == f"{MODULE_DIR}/__pycache__/accelplane_gpu_discovery.source-{script_digest()}"
    assert "exec python3 -I -S -B -c" in stub and f'sys.path.append("{MODULE_DIR}")' in stub
