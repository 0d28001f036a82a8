"""Random YARN Docker specs: when the checks accept one, container-executor's rules (the port checked
against Hadoop 3.4.1's own code in test_container_executor.py) run every Flink container the
NodeManager may start on every pool as rendered; when a mount or device is dangerous, a check
refuses it (never the rendered cfg)."""

from __future__ import annotations

from typing import Any

import pytest
from accelplane.builders import build_all
from accelplane.checks import run_checks
from accelplane.derive.container_executor import docker_run_verdict, read_config
from accelplane.derive.yarn_docker import CFG_PATH, nodemanager_run_commands, provisioned_node
from accelplane.derive.yarn_types import yarn_pools
from accelplane.model_convert import build_model
from accelplane.render import bundle_files
from accelplane.schema import validate_document
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.yarn.test_random_specs import spec as yarn_spec

pytestmark = pytest.mark.slow  # hypothesis over generated YARN Docker specs

IMAGES = [
    "registry.example.com/team/flink-gpu:1.20.1",
    "registry.example.com:5000/flink:1.20.1-py3",
    "ghcr.io/org/sub/flink@sha256:" + "a" * 64,
    "apache/flink:1.20.1-java17",
    "myflink:1.20.1",
]
MOUNTS = [
    ("/usr/lib/hadoop", "ro"), ("/etc/hadoop/conf", "ro"), ("/usr/lib/jvm/java-17", "ro"),
    ("/data/checkpoints", "rw"), ("/opt/models", "ro"),
    ("/", "ro"), ("/etc", "ro"), ("/var/run/docker.sock", "rw"), ("/usr/lib/hadoop", "rw"), ("/etc/ssl", "ro"),
    ("/data/../etc", "ro"),
]
DEVICES = ["/dev/nvidia-caps/nvidia-cap1", "/dev/dri/renderD128", "/dev/kfd", "/dev/sda", "/dev/mem"]
DIRS = ["/var/lib/hadoop-yarn/nm-local-dir", "/data1/yarn/local", "/data2/yarn/local", "/var/log/hadoop-yarn/containers", "/run/yarn"]


@st.composite
def docker_spec(draw: st.DrawFn) -> dict[str, Any]:
    doc: dict[str, Any] = draw(yarn_spec())
    docker = doc["yarn"]["docker"]
    docker["enabled"] = True
    docker["mounts"] = [{"path": p, "mode": m} for p, m in draw(st.lists(st.sampled_from(MOUNTS), max_size=4, unique=True))]
    docker["allowedDevices"] = draw(st.lists(st.sampled_from(DEVICES), max_size=2, unique=True))
    doc["yarn"]["localDirs"] = draw(st.lists(st.sampled_from(DIRS[:3] + DIRS[4:]), min_size=1, max_size=2, unique=True))
    doc["yarn"]["logDirs"] = draw(st.lists(st.sampled_from(DIRS[3:]), min_size=1, max_size=1))
    if draw(st.booleans()):
        doc["monitoring"] = {"enabled": True}
    if "flink" not in doc:  # a CPU-only cluster: JobManager and TaskManagers in Docker, no GPU
        doc["flink"] = {"clusters": [{"name": "cpu", "target": "yarn", "taskManager": {"replicas": 1}}]}
    for cluster in doc["flink"]["clusters"]:
        cluster["image"] = draw(st.sampled_from(IMAGES))
        if draw(st.booleans()):
            cluster["discovery"] = {"coordination": False}
    return doc


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docker_spec())
def test_accepted_docker_specs_run_every_container(doc: dict[str, Any]) -> None:
    if validate_document(doc):
        event("schema error")
        return
    model, problems = build_model(doc)
    if model is None or problems:
        event("model error")
        return
    errors = [p for p in run_checks(model) if not p.is_warning]
    codes = {p.finding.code for p in errors if p.finding}
    hostile = [m for m in doc["yarn"]["docker"]["mounts"] if (m["path"], m["mode"]) in MOUNTS[5:]]
    hostile += [d for d in doc["yarn"]["docker"]["allowedDevices"] if d in ("/dev/sda", "/dev/mem")]
    hostile += [d for d in doc["yarn"]["localDirs"] if d == "/run/yarn"]
    if hostile:
        assert codes & {"AP6075", "AP6076", "AP6077", "AP6078", "AP6079"}, hostile
        event("refused: hostile mount or device")
        return
    if errors:
        event("rejected by other checks")
        return
    event("rendered")
    files = bundle_files(build_all(model))
    for pool in yarn_pools(model):
        cfg = files[f"yarn/container-executor/{pool.name}.cfg"][0]
        docker = read_config(cfg)["docker"]
        node = provisioned_node(model, pool)
        for name, command in nodemanager_run_commands(model, pool):
            verdict = docker_run_verdict(cfg, command, node, CFG_PATH)
            assert verdict.code == 0, (pool.name, name, verdict)
            requested = read_config(command)["docker-command-execution"]
            assert len(verdict.mounts) == len(requested["mounts"].split(","))  # none dropped (trusted)
            assert "runtime" not in requested or verdict.runtime == "nvidia"
        if "docker.trusted.registries" in docker:
            event("trusted: " + ("library" if "library" in docker["docker.trusted.registries"] else "registry"))
