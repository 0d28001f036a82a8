"""Unit tests of the Flink config builder (format choice, key names, values, serialisation).

Flink's own loader reads every rendered file in test_flink_e2e_rendered.py; here the builder's
decisions are pinned down quickly and PyYAML (a different YAML implementation) cross-reads the
standard-YAML output.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from accelplane.builders import build_all
from accelplane.builders.flink_config import render_config
from accelplane.derive.discovery_paths import FLINK_PID_SUFFIX
from accelplane.derive.flink_java import FLINK_JAVA17_OPTIONS
from accelplane.derive.flink_keys import config_format, effective_config, flink_memory
from accelplane.derive.flink_values import legacy_value_problem, yaml_key, yaml_value
from accelplane.quantity import Quantity
from accelplane.render import bundle_files

from tests.flink.specs import KUBERNETES, STANDALONE, variant
from tests.support.fake_flink_daemon import install_fake_taskmanager, on_host, started_pids, stop_all
from tests.support.specs import model_of, write_spec


@pytest.mark.parametrize(
    ("version", "fmt", "expected"),
    [
        ("1.17", "auto", "flink-conf.yaml"),
        ("1.18", "auto", "flink-conf.yaml"),
        ("1.19", "auto", "config.yaml"),
        ("1.20", "auto", "config.yaml"),
        ("1.20.1", "auto", "config.yaml"),
        ("2.0", "auto", "config.yaml"),
        ("2.1", "config.yaml", "config.yaml"),
        ("1.19", "flink-conf.yaml", "flink-conf.yaml"),
        ("1.20", "flink-conf.yaml", "flink-conf.yaml"),
        ("1.18", "flink-conf.yaml", "flink-conf.yaml"),
    ],
)
def test_config_format_by_version(tmp_path: Path, version: str, fmt: str, expected: str) -> None:
    spec = model_of(write_spec(tmp_path, variant(STANDALONE, version=version, configFormat=fmt)))
    cluster = spec.flink_clusters[0]
    assert config_format(cluster) == expected
    files = bundle_files(build_all(spec))
    assert f"flink/edge-gpu/{expected}" in files
    other = {"config.yaml", "flink-conf.yaml"} - {expected}
    assert f"flink/edge-gpu/{other.pop()}" not in files


@pytest.mark.parametrize(
    ("text", "expected"), [("2Gi", "2g"), ("1600Mi", "1600m"), ("1Ti", "1t"), ("1536Mi", "1536m")]
)
def test_flink_memory_units(text: str, expected: str) -> None:
    assert flink_memory(Quantity.parse(text)) == expected


def test_native_kubernetes_keys(tmp_path: Path) -> None:
    spec = model_of(
        write_spec(
            tmp_path,
            variant(
                KUBERNETES,
                image="registry.example/flink:1.20.1-gpu",
                config={"state.backend.type": "rocksdb"},
            ),
        )
    )
    values = effective_config(spec, spec.flink_clusters[0])
    assert values == {
        "env.java.opts.all": " ".join(FLINK_JAVA17_OPTIONS),
        "execution.target": "kubernetes-application",
        "external-resource.gpu.amount": 2,
        "external-resource.gpu.driver-factory.class": "org.apache.flink.externalresource.gpu.GPUDriverFactory",
        "external-resource.gpu.kubernetes.config-key": "nvidia.com/gpu",
        "external-resource.gpu.param.discovery-script.args": (
            "--enable-coordination-mode --coordination-file /var/lib/accelplane/gpu-coordination --file-mode 0660 --isolated-devices"
        ),
        "external-resource.gpu.param.discovery-script.path": (
            "/opt/flink/plugins/external-resource-gpu/accelplane-gpu-discovery"
        ),
        "external-resources": ("gpu",),
        "jobmanager.memory.process.size": "2g",
        "kubernetes.cluster-id": "job1",
        "kubernetes.container.image.ref": "registry.example/flink:1.20.1-gpu",
        "kubernetes.jobmanager.cpu.amount": 1,
        "kubernetes.jobmanager.service-account": "flink",
        "kubernetes.namespace": "flink",
        "kubernetes.pod-template-file.jobmanager": "/opt/flink/accelplane/jobmanager-pod-template.yaml",
        "kubernetes.pod-template-file.taskmanager": "/opt/flink/accelplane/taskmanager-pod-template.yaml",
        "kubernetes.taskmanager.cpu.amount": 4,
        "kubernetes.taskmanager.service-account": "flink",
        "state.backend.type": "rocksdb",
        "taskmanager.memory.process.size": "8g",
        "taskmanager.numberOfTaskSlots": 2,
    }


def test_pre_1_17_key_names(tmp_path: Path) -> None:
    """Flink 1.17 renamed kubernetes.container.image and kubernetes.*.cpu (YAML-safe suffixes)."""
    spec = model_of(
        write_spec(
            tmp_path,
            variant(
                KUBERNETES,
                version="1.16",
                taskManager={**KUBERNETES["flink"]["clusters"][0]["taskManager"], "cpu": "500m"},
            ),
        )
    )
    values = effective_config(spec, spec.flink_clusters[0])
    assert values["kubernetes.container.image"] == KUBERNETES["flink"]["clusters"][0]["image"]
    assert values["kubernetes.taskmanager.cpu"] == 0.5
    assert "kubernetes.container.image.ref" not in values
    assert "kubernetes.taskmanager.cpu.amount" not in values


def test_no_coordination_no_args(tmp_path: Path) -> None:
    spec = model_of(write_spec(tmp_path, variant(KUBERNETES, discovery={"coordination": False})))
    values = effective_config(spec, spec.flink_clusters[0])
    assert "external-resource.gpu.param.discovery-script.args" not in values
    assert values["external-resource.gpu.amount"] == 2


def test_cluster_coordination_file_override(tmp_path: Path) -> None:
    spec = model_of(
        write_spec(tmp_path, variant(KUBERNETES, discovery={"coordinationFile": "/run/accelplane-gpu/claims"}))
    )
    values = effective_config(spec, spec.flink_clusters[0])
    assert values["external-resource.gpu.param.discovery-script.args"] == (
        "--enable-coordination-mode --coordination-file /run/accelplane-gpu/claims --file-mode 0660 --isolated-devices"
    )


def test_cpu_only_cluster_has_no_gpu_keys(tmp_path: Path) -> None:
    tm = {"replicas": 1, "slots": 1, "cpu": 2, "memory": "4Gi"}
    spec = model_of(write_spec(tmp_path, variant(KUBERNETES, taskManager=tm)))
    values = effective_config(spec, spec.flink_clusters[0])
    assert not [k for k in values if k.startswith("external-resource")]


def test_yarn_keys(tmp_path: Path) -> None:
    data = variant(STANDALONE, target="yarn", queue="analytics", mode="application", job={"parallelism": 2})
    data["cluster"]["platforms"] = ["yarn"]
    data["nodePools"][0]["platform"] = "yarn"
    data["queues"] = [{"name": "analytics"}]
    data["yarn"] = {}
    spec = model_of(write_spec(tmp_path, data))
    values = effective_config(spec, spec.flink_clusters[0])
    assert values["external-resource.gpu.yarn.config-key"] == "yarn.io/gpu"
    assert values["yarn.application.queue"] == "analytics"
    assert values["yarn.containers.vcores"] == 1
    assert values["yarn.appmaster.vcores"] == 1
    assert values["execution.target"] == "yarn-application"
    assert values["parallelism.default"] == 2
    assert not [k for k in values if k.startswith("kubernetes.") or ".kubernetes." in k]


def test_yaml_values_survive_yaml_1_2_typing() -> None:
    """Strings YAML 1.2 would retype are quoted; Flink re-stringifies typed scalars."""
    for text in ("1e3", "0o17", "0x1F", "1.10", "true", "null", "~", "123", "a: b", "#x", "- item", "[a]"):
        rendered = yaml_value(text)
        assert rendered.startswith('"'), rendered
        assert yaml.safe_load(f"k: {rendered}")["k"] == text
    assert yaml_value(("gpu",)) == '["gpu"]'
    assert yaml_value(2) == "2"
    assert yaml_value(0.5) == '"0.5"'
    assert yaml_value(1e20) == '"1e+20"'
    assert yaml_value(True) == "true"
    assert yaml_key("taskmanager.numberOfTaskSlots") == "taskmanager.numberOfTaskSlots"
    assert yaml_key("true") == '"true"'
    assert yaml_key("1.2") == '"1.2"'


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ("a#b", "comment"),
        ("", "empty"),
        (" padded", "spaces"),
        ('"quoted"', "quotes"),
        ("two\nlines", "line break"),
    ],
)
def test_legacy_value_problems(value: str, fragment: str) -> None:
    problem = legacy_value_problem(value)
    assert problem is not None and fragment in problem


def test_legacy_values_fine() -> None:
    for value in ("s3://bucket/path?x=1", "a: b", "30 s", 3, 0.25, False, ("gpu", "fpga")):
        assert legacy_value_problem(value) is None


def test_rendered_config_yaml_reads_back(tmp_path: Path) -> None:
    spec = model_of(
        write_spec(
            tmp_path, variant(KUBERNETES, config={"pipeline.name": "1e3", "rest.flamegraph.enabled": True})
        )
    )
    cluster = spec.flink_clusters[0]
    values = effective_config(spec, cluster)
    text = render_config(spec, cluster, values)
    parsed = yaml.safe_load(text)
    assert parsed["pipeline.name"] == "1e3"
    assert parsed["rest.flamegraph.enabled"] is True
    assert parsed["external-resources"] == ["gpu"]
    assert set(parsed) == set(values)
    assert all("." in k or k == "external-resources" for k in parsed)  # flat keys only


def test_rendered_legacy_config_lines(tmp_path: Path) -> None:
    spec = model_of(write_spec(tmp_path, variant(STANDALONE, version="1.18")))
    cluster = spec.flink_clusters[0]
    text = render_config(spec, cluster, effective_config(spec, cluster))
    lines = [line for line in text.splitlines() if not line.startswith("#")]
    assert "external-resources: gpu" in lines
    assert "taskmanager.memory.process.size: 1g" in lines
    assert all(": " in line for line in lines)


def _standalone_hosts_spec(tmp_path: Path, install_dir: Path | None = None, coordination_file: Path | None = None) -> Path:
    data = variant(
        STANDALONE,
        taskManager={
            **STANDALONE["flink"]["clusters"][0]["taskManager"],
            "replicas": 3,
            "gpu": {"amount": 1, "pool": "hosts"},
        },
    )
    data["nodePools"][0]["hosts"] = ["b.example.internal", "a.example.internal"]
    data["nodePools"][0]["nodes"] = 2
    if install_dir is not None:
        data["discovery"] = {"installDir": str(install_dir)}
    if coordination_file is not None:
        data["discovery"]["coordinationFile"] = str(coordination_file)
    return write_spec(tmp_path, data)


def test_standalone_start_script_per_host_and_no_workers_file(tmp_path: Path) -> None:
    """TaskManagers spread round-robin over the pool's hosts, one start script per host; no
    ``workers`` file, since ``bin/start-cluster.sh`` would start them without the GPU preflight."""
    files = bundle_files(build_all(model_of(_standalone_hosts_spec(tmp_path))))
    assert "flink/edge-gpu/workers" not in files
    scripts = sorted(p for p in files if "/taskmanagers/" in p)
    assert scripts == [
        "flink/edge-gpu/taskmanagers/a.example.internal.sh",
        "flink/edge-gpu/taskmanagers/b.example.internal.sh",
    ]
    assert "readonly TASKMANAGERS=2" in files[scripts[0]][0]  # hosts in sorted order, round-robin
    assert "readonly TASKMANAGERS=1" in files[scripts[1]][0]
    assert all(files[p][1] == 0o755 for p in scripts)


def test_standalone_start_script_refuses_hosts_without_the_gpus_and_starts_stock(tmp_path: Path) -> None:
    """The single-model host script, run against a fake FLINK_HOME and the fake nvidia-smi: it
    starts its TaskManagers with the stock command line (``external-resources`` is in the config
    file) when discovery finds the host's GPUs, and refuses otherwise."""
    import shutil
    import subprocess

    from tests.support.fake_nvidia_smi import install_fake_nvidia_smi
    from tests.support.paths import SOURCE_ROOT, host_dirs

    # a directory accelplane owns for the coordination file and the start lock, unique per test,
    # and a root-owned install directory (never below /tmp: AP8060)
    install, coordination = host_dirs(tmp_path)
    script = install / "accelplane-gpu-discovery"
    shutil.copyfile(SOURCE_ROOT / "accelplane" / "discovery" / "gpu_discovery.py", script)
    script.chmod(0o755)
    files = bundle_files(build_all(model_of(_standalone_hosts_spec(tmp_path, install, coordination))))
    start = tmp_path / "start.sh"
    start.write_text(files["flink/edge-gpu/taskmanagers/a.example.internal.sh"][0])
    start.chmod(0o755)
    home = tmp_path / "flink"
    plugin = home / "plugins" / "external-resource-gpu"
    plugin.mkdir(parents=True)
    (plugin / "flink-external-resource-gpu-1.20.5.jar").write_bytes(b"")
    (home / "conf").mkdir()
    record = tmp_path / "started"
    install_fake_taskmanager(home, record)
    pid_root = Path(f"{coordination.parent}{FLINK_PID_SUFFIX}")  # as node/provision.sh prepares it
    pid_root.mkdir(mode=0o755, exist_ok=True)
    pids = pid_root / "edge-gpu"  # the rendered env.pid.dir
    fake = install_fake_nvidia_smi(tmp_path / "bin", count=4)
    env = {"PATH": f"{fake.parent}:{os.environ['PATH']}", "FLINK_HOME": str(home), "HOME": str(tmp_path),
           "USER": "flink"}  # fmt: skip

    def run(**extra: str) -> tuple[int, str, list[str]]:
        record.unlink(missing_ok=True)
        stop_all(pids)  # the TaskManagers of the run before, so their GPUs are free again
        proc = subprocess.run([*on_host("a.example.internal"), str(start), "-D", "x=y"], env={**env, **extra},
                              capture_output=True, text=True)  # fmt: skip
        started = record.read_text().splitlines() if record.exists() else []
        return proc.returncode, proc.stderr, started

    try:
        _run_the_single_model_cases(run, plugin, coordination, pids)
    finally:
        stop_all(pids)
        shutil.rmtree(coordination.parent, ignore_errors=True)
        shutil.rmtree(pid_root, ignore_errors=True)


def _run_the_single_model_cases(
    run: Callable[..., tuple[int, str, list[str]]], plugin: Path, coordination: Path, pids: Path
) -> None:
    code, err, started = run()
    assert (code, started) == (0, ["start -D x=y", "start -D x=y"]), err
    # each TaskManager's GPU was taken for its pid before the script let go of the start lock
    records = coordination.read_text()
    assert all(f" {pid} " in f" {records} ".replace("\t", " ") for pid in started_pids(pids)), records
    code, err, started = run(FAKE_GPU_COUNT="1")  # 2 TaskManagers × 1 GPU need 2
    assert (code, started) == (1, [])
    assert "GPU discovery did not find 2 GPU(s) for external resource gpu" in err
    code, err, started = run(FAKE_NVIDIA_SMI_FAIL="9")
    assert (code, started) == (1, [])
    (plugin / "flink-external-resource-gpu-1.20.5.jar").unlink()
    code, err, started = run()
    assert (code, started) == (1, [])
    assert "Flink's GPU plugin (flink-external-resource-gpu-*.jar) is not in" in err


def test_output_independent_of_list_order(tmp_path: Path) -> None:
    data = variant(KUBERNETES)
    data["nodePools"].append(
        {**data["nodePools"][0], "name": "a100b", "labels": {"accelplane.io/pool": "a100b"}}
    )
    data["flink"]["clusters"].append(
        {**data["flink"]["clusters"][0], "name": "job2", "taskManager": {"replicas": 1, "gpu": {"amount": 1}}}
    )
    data["flink"]["clusters"][0]["config"] = {"z.key": "1", "a.key": "2", "m.key": "3"}
    first = bundle_files(build_all(model_of(write_spec(tmp_path, data))))
    shuffled = variant(data)
    rng = random.Random(7)
    for key in ("nodePools",):
        rng.shuffle(shuffled[key])
    shuffled["flink"]["clusters"].reverse()
    shuffled["flink"]["clusters"][-1]["config"] = dict(
        reversed(list(data["flink"]["clusters"][0]["config"].items()))
    )
    second = bundle_files(build_all(model_of(write_spec(tmp_path, shuffled, "shuffled.yaml"))))
    assert first == second
