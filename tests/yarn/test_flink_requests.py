"""Flink's own YARN code requests ``yarn.io/gpu`` and the GPU-model node label for every rendered config.

`FlinkYarnRequestProbe` (tests/yarn/java) runs the steps of Flink 1.20's ``YarnResourceManagerDriver``
with its own classes from flink-dist — TaskExecutorProcessSpec → container ``Resource``
(``TaskExecutorProcessSpecContainerResourcePriorityAdapter``, external resources through
``external-resource.<name>.yarn.config-key``) → ``AMRMClient.ContainerRequest`` with
``yarn.taskmanager.node-label`` (``ContainerRequestReflector``) — on Hadoop's classes from pyspark's
jars, with the rendered ``resource-types.xml`` first on the classpath. One command:
``pytest -m hadoop tests/yarn`` (needs the Flink distribution, ``pip install '.[hadoop]'`` and a JDK).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest
from accelplane.derive.yarn_labels import taskmanager_label
from accelplane.derive.yarn_types import yarn_gpu_clusters
from accelplane.render import write_tree

from tests.conftest import EXAMPLE_SPECS
from tests.support.render import files_for
from tests.support.specs import model_of
from tests.support.yarn_specs import BASE, without_gpu_models
from tests.yarn.hadoop import FlinkProbe

pytestmark = pytest.mark.hadoop

YARN_STACKS = [p for p in EXAMPLE_SPECS if "yarn" in model_of(p).platforms]
SPECS = {
    "base": BASE,
    "amd-model": BASE.replace("model: Tesla V100-SXM2-32GB}}", "model: AMD Instinct MI300X OAM}}").replace(
        "gpuModels: {Tesla V100-SXM2-32GB: {}}", "gpuModels: {AMD Instinct MI300X OAM: {}}"
    ),
    "no-labels": without_gpu_models(BASE).replace("  nodeLabels: true\n", "").replace(
        "gpu: {amount: 2, model: Tesla V100-SXM2-32GB}", "gpu: {amount: 3}"
    ),
}


def _requests(path: Path, out: Path, probe: FlinkProbe) -> dict[str, tuple[dict[str, str], int, str]]:
    """Cluster name → (what Flink requests, the spec's GPU amount, the expected label)."""
    spec = model_of(path)
    tree = write_tree(files_for(path), out)
    clusters = yarn_gpu_clusters(spec)
    dirs = [tree / "flink" / c.name for c in clusters]
    got = probe.requests(tree / "yarn", *dirs)
    return {
        c.name: (got[str(d)], c.task_manager.gpu.amount, taskmanager_label(spec, c) or "")  # type: ignore[union-attr]
        for c, d in zip(clusters, dirs, strict=True)
    }


@pytest.mark.parametrize("name", [*(p.stem for p in YARN_STACKS), *SPECS])
def test_flink_requests_yarn_io_gpu_and_the_model_label(
    name: str, flink_yarn_probe: FlinkProbe, write_spec: Callable[..., Path], tmp_path: Path
) -> None:
    path = next((p for p in YARN_STACKS if p.stem == name), None) or write_spec(SPECS[name], f"{name}.yaml")
    requests = _requests(path, tmp_path / "out", flink_yarn_probe)
    assert requests, "every YARN example must run a GPU Flink cluster on YARN"
    for cluster, (got, amount, label) in requests.items():
        assert "error" not in got, (cluster, got)
        gpu_types = {k for k in got if k.startswith("resource:") and k not in ("resource:memory-mb", "resource:vcores")}
        assert gpu_types == {"resource:yarn.io/gpu"}, (cluster, got)
        assert got["resource:yarn.io/gpu"] == str(amount), (cluster, got)
        assert got["label"] == label, (cluster, got)
    if name in ("yarn-analytics", "base", "amd-model"):
        assert all(label for _, _, label in requests.values()), requests


def test_example_stacks_place_by_model(flink_yarn_probe: FlinkProbe, tmp_path: Path) -> None:
    labels = set()
    for i, path in enumerate(YARN_STACKS):
        for got, _, _ in _requests(path, tmp_path / f"s{i}", flink_yarn_probe).values():
            labels.add(got["label"])
    assert labels - {""}, "some example stack must place TaskManagers by GPU-model node label"


def test_the_former_per_model_request_left_yarn_io_gpu_out(
    flink_yarn_probe: FlinkProbe, write_spec: Callable[..., Path], tmp_path: Path
) -> None:
    """Why per-model types were dropped: a config-key of yarn.io/gpu-<model> makes Flink request that
    type instead of yarn.io/gpu, the only type YARN's GPU plugin gives devices to."""
    tree = write_tree(files_for(write_spec(BASE)), tmp_path / "out")
    rt = tree / "yarn" / "resource-types.xml"
    rt.write_text(rt.read_text().replace(
        "<value>yarn.io/gpu</value>", "<value>yarn.io/gpu,yarn.io/gpu-teslav100sxm232gb</value>", 1
    ))
    conf = tree / "flink" / "scoring" / "config.yaml"
    text = conf.read_text()
    assert 'external-resource.gpu.yarn.config-key: "yarn.io/gpu"' in text
    conf.write_text(text.replace('yarn.config-key: "yarn.io/gpu"', 'yarn.config-key: "yarn.io/gpu-teslav100sxm232gb"'))
    got = flink_yarn_probe.requests(tree / "yarn", conf.parent)[str(conf.parent)]
    assert got["resource:yarn.io/gpu-teslav100sxm232gb"] == "2"
    assert got["resource:yarn.io/gpu"] == "0"


def _nodemanager_launch(command: str, log_dir: Path, work: Path) -> Path:
    """The launch script a NodeManager writes for a container with this one command: ``<LOG_DIR>``
    expanded to the container's log directory (``ContainerLaunch.expandEnvironment``) and the
    command run as ``exec /bin/bash -c "<command>"`` (``UnixShellScriptBuilder.command``), so
    Flink's ``$JAVA_HOME/bin/java`` is expanded by the script, as on a real NodeManager."""
    script = work / "launch_container.sh"
    script.write_text(
        "#!/bin/bash\nset -o pipefail -e\n"
        f'exec /bin/bash -c "{command.replace("<LOG_DIR>", str(log_dir))}"\n'
    )
    script.chmod(0o755)
    return script


def test_yarn_taskmanagers_refuse_to_start_without_their_gpus(
    flink_yarn_probe: FlinkProbe, tmp_path: Path
) -> None:
    """Fail loudly on YARN: the container command Flink builds from the rendered
    ``yarn.container-start-command-template`` (its own ``Utils.getTaskManagerShellCommand`` and
    ``YarnClusterDescriptor.setupApplicationMasterContainer``) runs the discovery script before a
    TaskManager's JVM and ends the container with exit 1 and the reason in ``taskmanager.err`` when
    it cannot find the TaskManager's GPUs; the JobManager's container starts without the check."""
    import os
    import shutil
    import subprocess

    from tests.support.fake_nvidia_smi import install_fake_nvidia_smi
    from tests.support.paths import SOURCE_ROOT

    (path,) = [p for p in YARN_STACKS if p.stem == "yarn-analytics"]
    spec = model_of(path)
    tree = write_tree(files_for(path), tmp_path / "out")
    cluster = yarn_gpu_clusters(spec)[0]
    amount = cluster.task_manager.gpu.amount  # type: ignore[union-attr]
    got = flink_yarn_probe.requests(tree / "yarn", tree / "flink" / cluster.name)[str(tree / "flink" / cluster.name)]
    assert "error" not in got, got
    script_path = spec.discovery.script_path
    tm_command, jm_command = got["command:taskmanager"], got["command:jobmanager"]
    assert f"{script_path} {amount} " in tm_command and "YarnTaskExecutorRunner" in tm_command
    assert "YarnSessionClusterEntrypoint" in jm_command

    script = tmp_path / "accelplane-gpu-discovery"
    shutil.copyfile(SOURCE_ROOT / "accelplane" / "discovery" / "gpu_discovery.py", script)
    script.chmod(0o755)
    java_home = tmp_path / "jdk"
    (java_home / "bin").mkdir(parents=True)
    record = tmp_path / "java-started"
    # the JVM: records its arguments and its pid (the container shell's, which execs it); with
    # FAKE_JAVA_SECONDS it then lives that long, as a TaskManager would
    pids = tmp_path / "java-pids"
    (java_home / "bin" / "java").write_text(
        f'#!/bin/sh\necho "$@" >> {record}\necho $$ >> {pids}\n'
        'if [ -n "${FAKE_JAVA_SECONDS:-}" ]; then exec sleep "$FAKE_JAVA_SECONDS"; fi\n'
    )
    (java_home / "bin" / "java").chmod(0o755)
    fake = install_fake_nvidia_smi(tmp_path / "bin", count=4)
    coordination = tmp_path / "gpu-coordination"
    assert cluster.coordination and f"--check-free --coordination-file {cluster.coordination_file}" in tm_command

    def run(command: str, name: str, **env: str) -> tuple[int, str, str]:
        work = tmp_path / name
        logs = work / "logs"
        logs.mkdir(parents=True)
        record.unlink(missing_ok=True)
        command = command.replace(script_path, str(script)).replace(cluster.coordination_file, str(coordination))
        launch = _nodemanager_launch(command, logs, work)
        base = {"PATH": f"{fake.parent}{os.pathsep}{os.environ['PATH']}", "JAVA_HOME": str(java_home)}
        proc = subprocess.run([str(launch)], cwd=work, env={**base, **env}, capture_output=True, text=True)
        err = (logs / "taskmanager.err").read_text() if (logs / "taskmanager.err").exists() else ""
        return proc.returncode, record.read_text() if record.exists() else "", err

    code, started, err = run(tm_command, "tm-ok")
    assert code == 0, err
    assert "org.apache.flink.yarn.YarnTaskExecutorRunner" in started
    # its GPUs were taken for the JVM itself: the container's shell, which then exec'd java
    jvm = pids.read_text().split()[-1]
    owners = [line.split()[2] for line in coordination.read_text().splitlines() if len(line.split()) > 2]
    assert owners.count(jvm) == amount, (jvm, owners)
    code, started, err = run(tm_command, "tm-too-few", FAKE_GPU_COUNT=str(amount - 1))
    assert (code, started) == (1, "")
    assert "accelplane: refusing to start this GPU TaskManager: GPU discovery" in err
    # The GPUs it would get are held by a live owner in the coordination file (another TaskManager
    # of this host): refused, naming the holder, before the JVM starts.
    holder = subprocess.Popen(["sleep", "300"])
    try:
        allocated = subprocess.run(
            [str(script), "4", "--enable-coordination-mode", "--coordination-file", str(coordination),
             "--owner-pid", str(holder.pid)],
            env={"PATH": f"{fake.parent}{os.pathsep}{os.environ['PATH']}"}, capture_output=True, text=True,
        )  # fmt: skip
        assert allocated.returncode == 0, allocated.stderr
        code, started, err = run(tm_command, "tm-held")
        assert (code, started) == (1, "")
        assert f"held by live owners in {coordination}: GPU 0: pid {holder.pid}, sleep" in err
        assert "the GPUs it would get are held by live owners" in err
    finally:
        holder.kill()
        holder.wait()
    # Two TaskManager containers starting at once on a NodeManager with GPUs for one of them: the
    # check and the taking are one locked step of the coordination file, so exactly one starts.
    both = []
    for name in ("tm-race-a", "tm-race-b"):
        work = tmp_path / name
        (work / "logs").mkdir(parents=True)
        launch = _nodemanager_launch(
            tm_command.replace(script_path, str(script)).replace(cluster.coordination_file, str(coordination)),
            work / "logs", work,
        )
        env = {"PATH": f"{fake.parent}{os.pathsep}{os.environ['PATH']}", "JAVA_HOME": str(java_home),
               "FAKE_GPU_COUNT": str(amount), "FAKE_JAVA_SECONDS": "60"}  # fmt: skip
        both.append((work, subprocess.Popen([str(launch)], cwd=work, env=env)))
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any(p.poll() is not None for _, p in both):
            time.sleep(0.1)
        refused = [(w, p) for w, p in both if p.poll() is not None]
        assert len(refused) == 1 and refused[0][1].returncode == 1, [p.poll() for _, p in both]
        err = (refused[0][0] / "logs" / "taskmanager.err").read_text()
        assert "accelplane: refusing to start this GPU TaskManager" in err, err
    finally:
        for _, p in both:
            p.kill()
            p.wait()
    code, started, err = run(tm_command, "tm-no-driver", FAKE_NVIDIA_SMI_FAIL="9")
    assert (code, started) == (1, "")
    assert "accelplane: refusing to start this GPU TaskManager" in err
    script.unlink()
    code, started, err = run(tm_command, "tm-no-script")
    assert (code, started) == (1, "")
    assert "accelplane: refusing to start this GPU TaskManager" in err
    code, started, _ = run(jm_command, "jm", FAKE_NVIDIA_SMI_FAIL="9")
    assert code == 0 and "YarnSessionClusterEntrypoint" in started
