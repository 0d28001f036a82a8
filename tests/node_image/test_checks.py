"""Bad specs: coordination directories that would be handed to the Flink user must be dedicated."""

from __future__ import annotations

import pytest
from accelplane.cli import main

from tests.support.specs import run_validate

YARN_BASE = """\
cluster: {name: bad, platforms: [yarn]}
nodePools:
  - {name: t4, platform: yarn, nodes: 2, gpu: {vendor: nvidia, perNode: 2}}
yarn: {cgroups: v1}
"""


REFUSED = [
    pytest.param(
        "discovery: {coordinationFile: /var/tmp/flink-gpu-coordination}\n",
        [
            "spec.yaml: discovery.coordinationFile: the coordination file's directory /var/tmp is not one "
            "accelplane owns (/var/lib/accelplane or /run/accelplane, accelplane-<suffix> there, or a directory "
            "below them), but accelplane gives it to the Flink user (flink:flink, mode 2770) and mounts it into "
            "TaskManagers; use e.g. /var/lib/accelplane/flink-gpu-coordination",
            "accelplane: 1 error",
        ],
        id="shared-system-directory",
    ),
    pytest.param(
        """\
discovery: {user: yarn, group: hadoop}
flink:
  defaults: {discovery: {coordinationFile: /opt/flink/plugins/coordination}}
  clusters:
    - {name: s, target: yarn, taskManager: {gpu: {amount: 1}}}
""",
        [
            "spec.yaml: flink.defaults.discovery.coordinationFile: the coordination file's directory "
            "/opt/flink/plugins is not one accelplane owns (/var/lib/accelplane or /run/accelplane, "
            "accelplane-<suffix> there, or a directory below them), but accelplane gives it to the Flink user "
            "(yarn:hadoop, mode 2770) and mounts it into TaskManagers; use e.g. /var/lib/accelplane/coordination",
            "accelplane: 1 error",
        ],
        id="cluster-override-from-flink-defaults-is-located-there",
    ),
    pytest.param(
        """\
discovery: {installDir: /var/lib/accelplane-gpu/bin}
flink:
  clusters:
    - name: s
      target: yarn
      taskManager: {gpu: {amount: 1}}
      discovery: {coordinationFile: /var/lib/accelplane-gpu/coordination}
""",
        [
            "spec.yaml: flink.clusters[0].discovery.coordinationFile: the coordination file's directory "
            "/var/lib/accelplane-gpu contains the discovery script's install directory /var/lib/accelplane-gpu/bin; "
            "the Flink user owns the coordination directory and could replace the script, so use a separate "
            "directory, e.g. /var/lib/accelplane/gpu-coordination",
            "accelplane: 1 error",
        ],
        id="directory-holding-the-script",
    ),
    pytest.param(
        "discovery: {installDir: /opt/x/, coordinationFile: /var/lib/accelplane/../../tmp/c}\n",
        [
            "spec.yaml: discovery.coordinationFile: '/var/lib/accelplane/../../tmp/c' is not a normalized path "
            "(no '.', '..', '//' or trailing '/'); write '/var/tmp/c'",
            "spec.yaml: discovery.installDir: '/opt/x/' is not a normalized path (no '.', '..', '//' or trailing "
            "'/'); write '/opt/x'",
            "accelplane: 2 errors",
        ],
        id="unnormalized-paths",
    ),
    pytest.param(
        "discovery: {installDir: /}\n",
        [
            "spec.yaml: discovery.installDir: the discovery script cannot be installed into '/'; use a dedicated "
            "directory, e.g. /opt/flink/plugins/external-resource-gpu",
            "accelplane: 1 error",
        ],
        id="root-install-dir",
    ),
]
"""YARN_BASE plus a discovery section, and the exact findings `validate` prints for it."""


@pytest.mark.parametrize(("extra", "expected"), REFUSED)
def test_unsafe_discovery_directories_are_refused(write_spec, capsys, monkeypatch, extra, expected):
    code, err = run_validate(write_spec(YARN_BASE + extra), capsys, monkeypatch)
    assert code == 1
    assert err == expected


HOSTILE_COORDINATION_FILES = [
    "/etc/gpu-coordination",
    "/etc/kubernetes/manifests/gpu-coordination",
    "/etc/sudoers.d/accelplane-gpu",
    "/root/.ssh/authorized_keys",
    "/etc/cron.d/x",
    "/etc/ssh/sshd_config",
    "/var/lib/kubelet/gpu-coordination",
    "/var/lib/accelplanex/gpu-coordination",
    "/run/gpu-coordination",
    "/var/lib/gpu-coordination",
    "/tmp/accelplane/gpu-coordination",
]


K8S_ONLY = """\
cluster: {{name: k8s, platforms: [kubernetes]}}
nodePools:
  - {{name: a100, nodes: 1, gpu: {{vendor: nvidia, perNode: 8}}, labels: {{accelplane.io/pool: a100}}}}
{discovery}
flink:
  clusters:
    - {{name: c, target: kubernetes, image: "registry.example.internal/flink-gpu:1.20.5-py3",
       taskManager: {{gpu: {{amount: 1, pool: a100}}}}{cluster_discovery}}}
"""


@pytest.mark.parametrize("where", ["spec", "cluster", "yarn"])
@pytest.mark.parametrize("coordination_file", HOSTILE_COORDINATION_FILES)
def test_system_directories_are_refused_on_every_platform(write_spec, capsys, monkeypatch, coordination_file, where):
    """Issue 15 §1: Kubernetes without nodeImage (pod templates' hostPath + init container), a cluster
    override, and YARN hosts (node/ provisioning) all refuse the same paths with `file: path: message`."""
    if where == "spec":
        text = K8S_ONLY.format(discovery=f"discovery: {{coordinationFile: {coordination_file}}}", cluster_discovery="")
        path_text = "discovery.coordinationFile"
    elif where == "cluster":
        text = K8S_ONLY.format(
            discovery="", cluster_discovery=f", discovery: {{coordinationFile: {coordination_file}}}"
        )
        path_text = "flink.clusters[0].discovery.coordinationFile"
    else:
        text = YARN_BASE + f"discovery: {{coordinationFile: {coordination_file}}}\n"
        path_text = "discovery.coordinationFile"
    code, err = run_validate(write_spec(text), capsys, monkeypatch)
    directory = coordination_file.rsplit("/", 1)[0]
    assert code == 1
    assert err[-1] == "accelplane: 1 error"
    assert err[0].startswith(
        f"spec.yaml: {path_text}: the coordination file's directory {directory} is not one accelplane owns"
    )


@pytest.mark.parametrize(
    "coordination_file",
    [
        "/var/lib/accelplane/gpu-coordination",
        "/run/accelplane/gpu-coordination",
        "/var/lib/accelplane-fraud/coordination",
        "/var/lib/accelplane/yarn/t4/coordination",
    ],
)
def test_directories_accelplane_owns_are_accepted(write_spec, capsys, monkeypatch, coordination_file):
    text = K8S_ONLY.format(discovery=f"discovery: {{coordinationFile: {coordination_file}}}", cluster_discovery="")
    assert run_validate(write_spec(text), capsys, monkeypatch) == (0, [])


def test_example_stacks_are_valid(capsys):
    from tests.conftest import STACKS_DIR

    assert main(["validate", str(STACKS_DIR / "prod-eu.yaml"), str(STACKS_DIR / "yarn-analytics.yaml")]) == 0
