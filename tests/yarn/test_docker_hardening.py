"""YARN Docker mounts and devices that would give every Flink container (any job's code) the
NodeManager host are refused (issue #37 item 1, docs/hardening.md "YARN Docker mounts and devices");
what the containers need is allowed, read-write only where they write; the GPU owner metrics
directory is mounted read-write where the discovery script writes it from a container (#44 item 6).
"""

from __future__ import annotations

import pytest
from accelplane.checks.yarn_docker import is_gpu_device, mount_problem
from accelplane.derive.container_executor import docker_run_verdict
from accelplane.derive.yarn_docker import CFG_PATH, nodemanager_run_commands, provisioned_node
from accelplane.pipeline import load_validated

from tests.conftest import EXAMPLE_SPECS
from tests.support.render import files_for
from tests.support.specs import WriteSpec, findings_by_code, findings_of
from tests.support.yarn_specs import BASE

DOCKER = "  docker: {enabled: true, runtime: nvidia, allowedDevices: [/dev/nvidia-caps/nvidia-cap1]}\n"


def _with_docker(mounts: str, devices: str = "[/dev/nvidia-caps/nvidia-cap1]") -> str:
    assert DOCKER in BASE
    return BASE.replace(DOCKER, f"  docker: {{enabled: true, runtime: nvidia, allowedDevices: {devices}, mounts: {mounts}}}\n")


def test_the_issues_hostile_mounts_and_devices_are_errors(write_spec: WriteSpec) -> None:
    """The reproducer of #37 item 1: each mount and device is one error at its own field."""
    text = _with_docker(
        "[{path: /, mode: rw}, {path: /var/run/docker.sock, mode: rw}, {path: /etc, mode: rw}, "
        "{path: /root/.ssh}, {path: /usr/lib/hadoop/../../..}]",
        "[/dev/sda, /dev/mem, /dev/kmsg]",
    )
    found = sorted((e.path, e.finding.code) for e in findings_of(write_spec(text)) if e.finding and e.finding.code.startswith("AP6"))
    assert found == sorted(
        [
            ("yarn.docker.allowedDevices[0]", "AP6079"),
            ("yarn.docker.allowedDevices[1]", "AP6079"),
            ("yarn.docker.allowedDevices[2]", "AP6079"),
            ("yarn.docker.mounts[0].path", "AP6075"),
            ("yarn.docker.mounts[1].path", "AP6075"),
            ("yarn.docker.mounts[2].path", "AP6075"),
            ("yarn.docker.mounts[3].path", "AP6075"),
            ("yarn.docker.mounts[4].path", "AP6078"),
        ]
    )
    assert all(e.finding.severity == "error" for e in findings_of(write_spec(text)) if e.finding and e.finding.code.startswith("AP607"))


@pytest.mark.parametrize(
    ("path", "mode", "code"),
    [
        ("/", "ro", "AP6075"),
        ("/var", "ro", "AP6075"),  # holds /var/run and the Docker socket
        ("/run/containerd/containerd.sock", "ro", "AP6075"),
        ("/var/run/crio/crio.sock", "ro", "AP6075"),
        ("/boot", "ro", "AP6075"),
        ("/proc/sys", "ro", "AP6075"),
        ("/lib64", "ro", "AP6075"),
        ("/etc/hadoop/conf", "rw", "AP6076"),  # also container-executor's own rule: rw above its cfg
        ("/usr/lib/hadoop", "rw", "AP6076"),
        ("/etc/ssl/private", "ro", "AP6077"),
        ("/usr/bin", "ro", "AP6077"),
        ("/usr/lib/jvm", "ro", "AP6077"),  # every JDK, not the one the containers run
        ("/data//x", "ro", "AP6078"),
        ("/data/./x", "ro", "AP6078"),
        ("/data/x/", "ro", "AP6078"),
    ],
)
def test_refused_mounts(path: str, mode: str, code: str) -> None:
    found = mount_problem(path, mode)
    assert found is not None and found[1].code == code


@pytest.mark.parametrize(
    ("path", "mode"),
    [
        ("/etc/hadoop/conf", "ro"),
        ("/usr/lib/hadoop", "ro"),
        ("/usr/local/hadoop-3.4.1", "ro"),
        ("/usr/lib/jvm/java-17-openjdk-amd64", "ro"),
        ("/var/lib/accelplane", "rw"),  # coordination directory
        ("/var/lib/prometheus/node-exporter", "rw"),  # owner metrics
        ("/var/lib/hadoop-yarn/nm-local-dir", "rw"),
        ("/var/log/hadoop-yarn/containers", "rw"),
        ("/data/flink/checkpoints", "rw"),
    ],
)
def test_allowed_mounts(path: str, mode: str) -> None:
    assert mount_problem(path, mode) is None


def test_only_gpu_devices() -> None:
    for device in ("/dev/nvidia0", "/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-caps/nvidia-cap1", "/dev/dri/renderD128", "/dev/kfd"):
        assert is_gpu_device(device), device
    for device in ("/dev/sda", "/dev/mem", "/dev/kmsg", "/dev/infiniband/uverbs0", "/dev/dri/../sda", "/dev/kfd/"):
        assert not is_gpu_device(device), device


def test_nodemanager_directories_are_checked_as_rw_mounts(write_spec: WriteSpec) -> None:
    text = BASE.replace("yarn:\n", "yarn:\n  localDirs: [/var/lib/yarn-local, /tmp]\n  logDirs: [/var/log]\n", 1)
    by_path = {e.path: e.finding.code for e in findings_of(write_spec(text)) if e.finding}
    assert by_path.get("yarn.localDirs[0]") is None
    assert by_path.get("yarn.logDirs[0]") is None  # /var/log is no system directory
    text = BASE.replace("yarn:\n", "yarn:\n  localDirs: [/var/run/yarn]\n", 1)
    assert findings_by_code(write_spec(text, "b.yaml"))["AP6076"][1] == "yarn.localDirs[0]"


def test_an_image_without_registry_is_trusted_as_library_with_a_warning(write_spec: WriteSpec) -> None:
    text = BASE.replace("image: registry.example.com/flink-gpu:1.20.1-py3", "image: myflink:1.20.1-py3")
    path = write_spec(text)
    severity, where, message = findings_by_code(path)["AP5075"]
    assert (severity, where) == ("warning", "flink.clusters[0].image")
    assert "docker.trusted.registries=library" in message
    cfg = files_for(path)["yarn/container-executor/v100.cfg"][0]
    assert "docker.trusted.registries=library\n" in cfg


def test_yarn_analytics_mounts_the_owner_metrics_directory_read_write() -> None:
    """#44 item 6: the discovery script writes --metrics-file from inside the TaskManager container;
    its directory is mounted rw and allowed rw, and container-executor's rules (port) accept it."""
    path = next(p for p in EXAMPLE_SPECS if p.stem == "yarn-analytics")
    spec = load_validated(path).model
    directory = spec.monitoring.textfile_directory.rstrip("/")
    files = files_for(path)
    conf = files["flink/sessions-v100/config.yaml"][0]
    assert f"--metrics-file {directory}/" in conf
    assert f"{directory}:{directory}:rw" in conf.split("containerized.taskmanager.env.YARN_CONTAINER_RUNTIME_DOCKER_MOUNTS: ")[1].split("\n")[0]
    pool = next(p for p in spec.node_pools if p.name == "v100")
    cfg = files["yarn/container-executor/v100.cfg"][0]
    assert directory in cfg.split("docker.allowed.rw-mounts=")[1].split("\n")[0].split(",")
    for name, command in nodemanager_run_commands(spec, pool):
        verdict = docker_run_verdict(cfg, command, provisioned_node(spec, pool), CFG_PATH)
        assert verdict.code == 0, name
        if name.endswith("taskmanager"):
            assert f"{directory}:{directory}:rw" in verdict.mounts
