"""Bad specs: coordination directories that would be handed to the Flink user must be dedicated."""

from __future__ import annotations

from accelplane.cli import main

from tests.support.specs import run_validate

YARN_BASE = """\
cluster: {name: bad, platforms: [yarn]}
nodePools:
  - {name: t4, platform: yarn, nodes: 2, gpu: {vendor: nvidia, perNode: 2}}
"""


def test_shared_system_directory_is_refused(write_spec, capsys, monkeypatch):
    path = write_spec(YARN_BASE + "discovery: {coordinationFile: /var/tmp/flink-gpu-coordination}\n")
    code, err = run_validate(path, capsys, monkeypatch)
    assert code == 1
    assert err == [
        "spec.yaml: discovery.coordinationFile: the coordination file's directory /var/tmp is a shared system "
        "directory, but accelplane gives the coordination directory to the Flink user (flink:flink, mode 2770); "
        "use a dedicated directory, e.g. /var/lib/accelplane/flink-gpu-coordination",
        "accelplane: 1 error",
    ]


def test_cluster_override_from_flink_defaults_is_located_there(write_spec, capsys, monkeypatch):
    path = write_spec(
        YARN_BASE
        + """\
discovery: {user: yarn, group: hadoop}
flink:
  defaults: {discovery: {coordinationFile: /opt/flink/plugins/coordination}}
  clusters:
    - {name: s, target: yarn, taskManager: {gpu: {amount: 1}}}
"""
    )
    code, err = run_validate(path, capsys, monkeypatch)
    assert code == 1
    assert err == [
        "spec.yaml: flink.defaults.discovery.coordinationFile: the coordination file's directory /opt/flink/plugins "
        "is a shared system directory, but accelplane gives the coordination directory to the Flink user "
        "(yarn:hadoop, mode 2770); use a dedicated directory, e.g. /var/lib/accelplane/coordination",
        "accelplane: 1 error",
    ]


def test_directory_holding_the_script_is_refused(write_spec, capsys, monkeypatch):
    path = write_spec(
        YARN_BASE
        + """\
discovery: {installDir: /opt/accelplane/bin}
flink:
  clusters:
    - name: s
      target: yarn
      taskManager: {gpu: {amount: 1}}
      discovery: {coordinationFile: /opt/accelplane/coordination}
"""
    )
    code, err = run_validate(path, capsys, monkeypatch)
    assert code == 1
    assert err == [
        "spec.yaml: flink.clusters[0].discovery.coordinationFile: the coordination file's directory /opt/accelplane "
        "contains the discovery script's install directory /opt/accelplane/bin; the Flink user owns the "
        "coordination directory and could replace the script, so use a separate directory, e.g. "
        "/var/lib/accelplane/gpu-coordination",
        "accelplane: 1 error",
    ]


def test_unnormalized_paths_are_refused(write_spec, capsys, monkeypatch):
    path = write_spec(
        YARN_BASE + "discovery: {installDir: /opt/x/, coordinationFile: /var/lib/accelplane/../../tmp/c}\n"
    )
    code, err = run_validate(path, capsys, monkeypatch)
    assert code == 1
    assert err == [
        "spec.yaml: discovery.coordinationFile: '/var/lib/accelplane/../../tmp/c' is not a normalized path "
        "(no '.', '..', '//' or trailing '/'); write '/var/tmp/c'",
        "spec.yaml: discovery.installDir: '/opt/x/' is not a normalized path (no '.', '..', '//' or trailing '/'); "
        "write '/opt/x'",
        "accelplane: 2 errors",
    ]


def test_root_install_dir_is_refused(write_spec, capsys, monkeypatch):
    path = write_spec(YARN_BASE + "discovery: {installDir: /}\n")
    code, err = run_validate(path, capsys, monkeypatch)
    assert code == 1
    assert err == [
        "spec.yaml: discovery.installDir: the discovery script cannot be installed into '/'; use a dedicated "
        "directory, e.g. /opt/flink/plugins/external-resource-gpu",
        "accelplane: 1 error",
    ]


def test_only_directories_accelplane_creates_are_checked(write_spec, capsys, monkeypatch):
    """Kubernetes without nodeImage: no node/ and no image, so no directory is created or checked."""
    path = write_spec(
        """\
cluster: {name: k8s, platforms: [kubernetes]}
nodePools:
  - {name: a100, nodes: 1, gpu: {vendor: nvidia, perNode: 8}, labels: {accelplane.io/pool: a100}}
discovery: {coordinationFile: /var/tmp/flink-gpu-coordination}
flink:
  clusters:
    - {name: c, target: kubernetes, image: "registry.example.internal/flink-gpu:1.20.5-py3",
       taskManager: {gpu: {amount: 1, pool: a100}}}
"""
    )
    code, err = run_validate(path, capsys, monkeypatch)
    assert (code, err) == (0, [])


def test_example_stacks_are_valid(capsys):
    from tests.conftest import STACKS_DIR

    assert main(["validate", str(STACKS_DIR / "prod-eu.yaml"), str(STACKS_DIR / "yarn-analytics.yaml")]) == 0
