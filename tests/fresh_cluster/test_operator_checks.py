"""The Flink Kubernetes Operator's admission rules a spec can break, as `file: path: message` errors,
and the HA/checkpoint derivations compared with Flink's own classes."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from accelplane.cli import main
from accelplane.derive.flink_state import CHECKPOINTS_DIR, HA_STORAGE, HA_TYPE, SAVEPOINTS_DIR, ha_enabled
from accelplane.flink_options import option_names
from accelplane.model_convert import build_model

from tests.support.findings_text import without_tags
from tests.support.flink.home import require_flink_home
from tests.support.specs import model_of

HEAD = """\
cluster: {name: c, platforms: [kubernetes]}
flink:
  clusters:
    - name: op
      target: kubernetes-operator
      namespace: jobs
"""
JOB = '      job: {jarURI: "local:///j.jar", upgradeMode: %s}\n'
SOURCE = "the Flink Kubernetes Operator 1.15.0 DefaultValidator rejects the FlinkDeployment without it"


def _errors(write_spec: Callable[..., Path], capsys: pytest.CaptureFixture[str], text: str) -> list[str]:
    path = write_spec(text)
    code = main(["validate", "--strict", str(path)])  # warnings too
    err = without_tags(capsys.readouterr().err).splitlines()
    return [line.split("spec.yaml: ", 1)[-1] for line in err] if code == 1 else []


def test_savepoint_needs_both_directories(
    write_spec: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    errors = _errors(write_spec, capsys, HEAD + JOB % "savepoint")
    assert errors[:2] == [
        "flink.clusters[0].job.upgradeMode: upgradeMode savepoint restores from checkpoints: set "
        f"config.execution.checkpointing.dir (or its former name state.checkpoints.dir); {SOURCE}",
        "flink.clusters[0].job.upgradeMode: upgradeMode savepoint takes a savepoint on every upgrade: set "
        f"config.execution.checkpointing.savepoint-dir (or its former name state.savepoints.dir); {SOURCE}",
    ]
    ok = (
        HEAD
        + JOB % "savepoint"
        + "      config: {state.checkpoints.dir: s3://b/c, state.savepoints.dir: s3://b/s}\n"
    )
    assert _errors(write_spec, capsys, ok) == []


def test_flink_before_1_20_reads_only_the_former_names(
    write_spec: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    text = HEAD + '      version: "1.18"\n' + JOB % "savepoint"
    # without any directory: the errors name the keys Flink 1.18 reads
    errors = _errors(write_spec, capsys, text)
    assert errors == [
        f"flink.clusters[0].job.upgradeMode: upgradeMode savepoint restores from checkpoints: set config.state.checkpoints.dir; {SOURCE}",
        f"flink.clusters[0].job.upgradeMode: upgradeMode savepoint takes a savepoint on every upgrade: set config.state.savepoints.dir; {SOURCE}",
        "accelplane: 2 errors",
    ]
    # the 1.20 names are written as the names 1.18 reads (issue 29), so the operator finds them
    text += "      config: {execution.checkpointing.dir: s3://b/c, execution.checkpointing.savepoint-dir: s3://b/s}\n"
    assert _errors(write_spec, capsys, text) == []
    (cluster,) = model_of(write_spec(text, "renamed.yaml")).flink_clusters
    assert dict(cluster.config) == {"state.checkpoints.dir": "s3://b/c", "state.savepoints.dir": "s3://b/s"}


def test_last_state_needs_checkpoints_and_ha(
    write_spec: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    errors = _errors(write_spec, capsys, HEAD + JOB % "last-state")
    assert errors == [
        "flink.clusters[0].job.upgradeMode: upgradeMode last-state restores from checkpoints: set "
        f"config.execution.checkpointing.dir (or its former name state.checkpoints.dir); {SOURCE}",
        "flink.clusters[0].job.upgradeMode: upgradeMode last-state restores from the HA metadata; without high "
        "availability (config.high-availability.type: kubernetes and config.high-availability.storageDir) the "
        "operator cannot upgrade a job whose JobManager is gone; enable HA or use upgradeMode savepoint",
        "accelplane: 2 errors",
    ]
    ok = (
        HEAD
        + JOB % "last-state"
        + (
            "      config: {execution.checkpointing.dir: s3://b/c, high-availability.type: kubernetes,"
            " high-availability.storageDir: s3://b/ha}\n"
        )
    )
    assert _errors(write_spec, capsys, ok) == []


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (
            "{high-availability.type: kubernetes}",
            "flink.clusters[0].config.high-availability.type: kubernetes high availability keeps its metadata in "
            "high-availability.storageDir; Flink refuses to start the JobManager without it: set "
            "config.high-availability.storageDir",
        ),
        (
            "{kubernetes.operator.deployment.rollback.enabled: true}",
            "flink.clusters[0].config.kubernetes.operator.deployment.rollback.enabled: rollbacks need high "
            "availability (config.high-availability.type); the Flink Kubernetes Operator 1.15.0 DefaultValidator "
            "rejects the FlinkDeployment without it",
        ),
        (
            "{kubernetes.operator.periodic.savepoint.interval: 1h}",
            "flink.clusters[0].config.kubernetes.operator.periodic.savepoint.interval: periodic savepoints need a "
            "savepoint directory: set config.execution.checkpointing.savepoint-dir (or its former name "
            f"state.savepoints.dir); {SOURCE}",
        ),
        (
            "{kubernetes.operator.cluster.health-check.enabled: true, kubernetes.operator.jm-deployment-recovery.enabled: false}",
            "flink.clusters[0].config.kubernetes.operator.cluster.health-check.enabled: the cluster health check "
            "needs kubernetes.operator.jm-deployment-recovery.enabled: true; the Flink Kubernetes Operator 1.15.0 "
            "DefaultValidator rejects the FlinkDeployment otherwise",
        ),
    ],
)
def test_operator_config_rules(
    write_spec: Callable[..., Path], capsys: pytest.CaptureFixture[str], config: str, message: str
) -> None:
    text = HEAD + '      job: {jarURI: "local:///j.jar"}\n' + f"      config: {config}\n"
    assert _errors(write_spec, capsys, text) == [message, "accelplane: 1 error"]


def test_flink_newer_than_the_operator_knows(
    write_spec: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    text = HEAD + '      version: "2.5"\n      mode: session\n'
    assert _errors(write_spec, capsys, text) == [
        "flink.clusters[0].version: the Flink Kubernetes Operator 1.15.0 DefaultValidator knows Flink up to 2.4 "
        "(flinkVersion v2_4); use a Flink version it supports or target kubernetes",
        "accelplane: 1 error",
    ]


def test_upgrade_mode_on_native_kubernetes_is_refused(
    write_spec: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    text = HEAD.replace("target: kubernetes-operator", "target: kubernetes") + JOB % "stateless"
    assert _errors(write_spec, capsys, text) == [
        "flink.clusters[0].job.upgradeMode: upgradeMode is a Flink Kubernetes Operator setting and native "
        "Kubernetes (target kubernetes) would ignore it; remove it or use target kubernetes-operator",
        "accelplane: 1 warning",
    ]


# --- the derivations agree with Flink 1.20's own classes --------------------------------------

PROBE = r"""
import org.apache.flink.configuration.*;
import org.apache.flink.runtime.jobmanager.HighAvailabilityMode;
public class StateProbe { public static void main(String[] a) throws Exception {
  StringBuilder out = new StringBuilder("{\"keys\": {");
  ConfigOption<?>[] opts = {CheckpointingOptions.CHECKPOINTS_DIRECTORY, CheckpointingOptions.SAVEPOINT_DIRECTORY,
      HighAvailabilityOptions.HA_MODE, HighAvailabilityOptions.HA_STORAGE_PATH};
  String[] names = {"checkpoints", "savepoints", "ha_type", "ha_storage"};
  for (int i = 0; i < opts.length; i++) {
    out.append(i > 0 ? "," : "").append("\"").append(names[i]).append("\": [\"").append(opts[i].key()).append("\"");
    for (FallbackKey k : opts[i].fallbackKeys()) out.append(",\"").append(k.getKey()).append("\"");
    out.append("]");
  }
  out.append("}, \"ha\": [");
  for (int i = 0; i < a.length; i += 2) {
    Configuration c = new Configuration(); c.setString(a[i], a[i + 1]);
    out.append(i > 0 ? "," : "").append(HighAvailabilityMode.isHighAvailabilityModeActivated(c));
  }
  System.out.println(out.append("]}"));
}}
"""
HA_CASES = [
    ("high-availability.type", "kubernetes"), ("high-availability.type", "KUBERNETES"),
    ("high-availability.type", "NONE"), ("high-availability.type", "standalone"),
    ("high-availability", "zookeeper"), ("recovery.mode", "none"), ("high-availability.type", "com.example.Ha"),
]  # fmt: skip


@pytest.mark.flink
def test_derivations_match_flink_1_20(tmp_path: Path) -> None:
    home = require_flink_home()
    dist = next((Path(home) / "lib").glob("flink-dist-*.jar"))
    (tmp_path / "StateProbe.java").write_text(PROBE, encoding="utf-8")
    subprocess.run(["javac", "-cp", str(dist), "StateProbe.java"], cwd=tmp_path, check=True)
    args = [x for case in HA_CASES for x in case]
    out = subprocess.run(
        ["java", "-cp", f"{dist}:.", "StateProbe", *args],
        cwd=tmp_path,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    flink = json.loads(out.strip().splitlines()[-1])
    # the names the 1.20 tables give are the ones Flink's ConfigOptions read, in Flink's order
    assert tuple(flink["keys"]["checkpoints"]) == option_names((1, 20), CHECKPOINTS_DIR)
    assert tuple(flink["keys"]["savepoints"]) == option_names((1, 20), SAVEPOINTS_DIR)
    assert tuple(flink["keys"]["ha_type"]) == option_names((1, 20), HA_TYPE)
    assert tuple(flink["keys"]["ha_storage"]) == option_names((1, 20), HA_STORAGE)
    for (key, value), expected in zip(HA_CASES, flink["ha"], strict=True):
        data = {"cluster": {"name": "c", "platforms": ["kubernetes"]},
                "flink": {"clusters": [{"name": "a", "config": {key: value}}]}}  # fmt: skip
        model, _ = build_model(data)
        assert model is not None
        assert ha_enabled(model.flink_clusters[0]) is expected, (key, value)
