"""`accelplane render` writes the shipping artifacts with the right modes, deterministically."""

from __future__ import annotations

import stat

from accelplane.cli import main

from tests.conftest import STACKS_DIR


def _tree(out):
    return {
        str(p.relative_to(out)): (p.read_bytes(), stat.S_IMODE(p.stat().st_mode))
        for p in sorted(out.rglob("*"))
        if p.is_file()
    }


def test_yarn_stack_renders_node_artifacts_executable(tmp_path, capsys):
    out = tmp_path / "yarn"
    assert main(["render", str(STACKS_DIR / "yarn-analytics.yaml"), "--out", str(out), "-q"]) == 0
    tree = _tree(out)
    modes = {k: m for k, (_, m) in tree.items() if k.startswith(("node/", "node-image/"))}
    assert modes == {
        "node-image/Dockerfile": 0o644,
        "node-image/accelplane-gpu-discovery": 0o755,
        "node-image/accelplane_gpu_discovery.py": 0o644,
        "node/cloud-init.yaml": 0o644,
        "node/provision.sh": 0o755,
        "node/tmpfiles.d/accelplane-gpu.conf": 0o644,
    }
    again = tmp_path / "again"
    assert main(["render", str(STACKS_DIR / "yarn-analytics.yaml"), "--out", str(again), "-q"]) == 0
    assert _tree(again) == tree


def test_kubernetes_stack_renders_image_and_configmap_but_no_host_files(tmp_path):
    out = tmp_path / "prod"
    assert main(["render", str(STACKS_DIR / "prod-eu.yaml"), "--out", str(out), "-q"]) == 0
    names = set(_tree(out))
    assert {"node-image/Dockerfile", "node-image/accelplane-gpu-discovery"} <= names
    assert not [n for n in names if n.startswith("node/")]
    assert [n for n in names if n.startswith("kubernetes/configmap_flink_accelplane-gpu-discovery-")]
