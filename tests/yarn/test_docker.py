"""Flink on YARN with Docker: ``yarn.docker.enabled`` makes the NodeManagers able to launch Docker
containers, and the Flink config asks for it (``containerized.{master,taskmanager}.env.`` with
``YARN_CONTAINER_RUNTIME_TYPE``, ``…_DOCKER_IMAGE``, ``…_DOCKER_MOUNTS``), with every mount source
allowed in container-executor.cfg; cgroups v2 without Docker warns that YARN cannot isolate GPUs."""

from __future__ import annotations

from pathlib import Path

import yaml
from accelplane.pipeline import load_validated

from tests.support.render import files_for
from tests.support.specs import WriteSpec, error_lines
from tests.support.yarn_specs import BASE, parse_container_executor, yarn_files

TM = "containerized.taskmanager.env."
JM = "containerized.master.env."


def _flink_config(path: Path, cluster: str = "scoring") -> dict[str, object]:
    text, _ = files_for(path)[f"flink/{cluster}/config.yaml"]
    doc: dict[str, object] = yaml.safe_load(text)
    return doc


def _allowed(path: Path) -> dict[str, dict[str, set[str]]]:
    out = {}
    for name, text in yarn_files(path).items():
        if name.startswith("container-executor/"):
            docker = parse_container_executor(text).get("docker", {})
            out[name] = {m: set(filter(None, docker.get(f"docker.allowed.{m}-mounts", "").split(","))) for m in ("ro", "rw")}
    return out


def test_the_flink_containers_ask_for_docker_with_mounts_yarn_allows(write_spec: WriteSpec) -> None:
    text = BASE.replace(
        "docker: {enabled: true, runtime: nvidia, allowedDevices: [/dev/nvidia-caps/nvidia-cap1]}",
        "docker: {enabled: true, runtime: nvidia, allowedDevices: [/dev/nvidia-caps/nvidia-cap1], "
        "mounts: [{path: /usr/lib/hadoop}, {path: /etc/hadoop/conf}]}",
    )
    path = write_spec(text)
    conf = _flink_config(path)
    image = "registry.example.com/flink-gpu:1.20.1-py3"
    assert conf[f"{TM}YARN_CONTAINER_RUNTIME_TYPE"] == conf[f"{JM}YARN_CONTAINER_RUNTIME_TYPE"] == "docker"
    assert conf[f"{TM}YARN_CONTAINER_RUNTIME_DOCKER_IMAGE"] == conf[f"{JM}YARN_CONTAINER_RUNTIME_DOCKER_IMAGE"] == image
    assert conf[f"{JM}YARN_CONTAINER_RUNTIME_DOCKER_MOUNTS"] == (
        "/etc/hadoop/conf:/etc/hadoop/conf:ro,/usr/lib/hadoop:/usr/lib/hadoop:ro"
    )
    spec = load_validated(path).model
    (cluster,) = spec.flink_clusters
    coordination_dir = str(Path(cluster.coordination_file).parent)
    tm_mounts = str(conf[f"{TM}YARN_CONTAINER_RUNTIME_DOCKER_MOUNTS"]).split(",")
    jm_mounts = str(conf[f"{JM}YARN_CONTAINER_RUNTIME_DOCKER_MOUNTS"]).split(",")
    assert tm_mounts == sorted(
        [
            "/etc/hadoop/conf:/etc/hadoop/conf:ro",
            "/usr/lib/hadoop:/usr/lib/hadoop:ro",
            f"{spec.discovery.script_path}:{spec.discovery.script_path}:ro",  # not the node image: the host's
            "/opt/accelplane/discovery:/opt/accelplane/discovery:ro",
            f"{coordination_dir}:{coordination_dir}:rw",
        ]
    )
    # container-executor refuses a mount whose source is not allowed in that mode; GPU TaskManagers
    # run only on pools with GPUs, and an allowed entry missing on a node fails every container
    # there (error 52), so the CPU-only pool allows the JobManager's mounts alone
    for name, allowed in _allowed(path).items():
        for mount in tm_mounts if name != "container-executor/cpu.cfg" else jm_mounts:
            source, _, mode = mount.split(":")
            assert source in allowed[mode], (name, mount)


def test_the_node_image_brings_its_own_discovery_script(write_spec: WriteSpec) -> None:
    """accelplane's node image has the script and module at the same paths with its own Python: the
    host's are not mounted over them (only the coordination directory is)."""
    text = BASE.replace("      image: registry.example.com/flink-gpu:1.20.1-py3\n", "") + (
        "nodeImage: {baseImage: flink:1.20.1-java17, image: registry.example.com/flink-gpu:1.20.1-node}\n"
    )
    conf = _flink_config(write_spec(text))
    assert conf[f"{TM}YARN_CONTAINER_RUNTIME_DOCKER_IMAGE"] == "registry.example.com/flink-gpu:1.20.1-node"
    mounts = str(conf[f"{TM}YARN_CONTAINER_RUNTIME_DOCKER_MOUNTS"])
    assert "discovery" not in mounts and mounts.endswith(":rw") and mounts.count(",") == 0


def test_without_docker_flink_asks_for_nothing(write_spec: WriteSpec) -> None:
    text = BASE.replace("docker: {enabled: true, runtime: nvidia, allowedDevices: [/dev/nvidia-caps/nvidia-cap1]}", "cgroups: v1").replace("  cgroups: v2\n", "")
    conf = _flink_config(write_spec(text))
    assert not [k for k in conf if k.startswith(("containerized.", "yarn.container-runtime"))]


def test_cgroups_v2_without_docker_is_a_warning(write_spec: WriteSpec) -> None:
    text = BASE.replace("  docker: {enabled: true, runtime: nvidia, allowedDevices: [/dev/nvidia-caps/nvidia-cap1]}\n", "")
    spec = load_validated(write_spec(text))
    (warning,) = [str(w) for w in spec.warnings if "cgroups" in str(w)]
    assert warning.endswith(
        "yarn.cgroups: with cgroups v2 and no Docker, YARN's GPU plugin cannot keep containers off each other's "
        "GPUs on pools t4, v100 (cgroup v2 has no devices controller; YARN-11692 keeps GPU isolation only on "
        "mixed v1/v2 hierarchies), so every TaskManager sees every GPU of its node; set yarn.docker.enabled: "
        "true (runtime nvidia isolates by NVIDIA_VISIBLE_DEVICES) or use cgroups v1 or hybrid hosts"
    )


def test_gpu_taskmanagers_in_docker_need_an_image(write_spec: WriteSpec) -> None:
    text = BASE.replace("      image: registry.example.com/flink-gpu:1.20.1-py3\n", "")
    errors = error_lines(write_spec(text))
    assert [e.split(": ", 1)[1] for e in errors] == [
        "flink.clusters[0].image: with yarn.docker the GPU TaskManagers run in Docker, here the stock image "
        "flink:1.20-java17 (a floating tag without python3, which the GPU discovery script needs, and without "
        "Hadoop); set image (or nodeImage.image) to a pinned image with python3, such as the one nodeImage builds"
    ]


def test_the_runtime_keys_are_accelplanes(write_spec: WriteSpec) -> None:
    text = BASE.replace("      queue: stream\n", "      queue: stream\n      config: {containerized.taskmanager.env.YARN_CONTAINER_RUNTIME_TYPE: default}\n")
    errors = error_lines(write_spec(text))
    assert len(errors) == 1 and "containerized.taskmanager.env.YARN_CONTAINER_RUNTIME_TYPE" in errors[0], errors
