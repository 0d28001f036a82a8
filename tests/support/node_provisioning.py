"""Helpers for the node-image / node provisioning / discovery ConfigMap tests."""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path

from accelplane.derive.discovery_paths import node_platforms

from tests.conftest import EXAMPLE_SPECS, STACKS_DIR
from tests.support.paths import REPO_ROOT
from tests.support.render import files_for
from tests.support.specs import model_of

FAKES_DIR = REPO_ROOT / "tests" / "discovery" / "fakes"

# A spec that exercises everything: Kubernetes + YARN + standalone GPU pools, clusters in two
# namespaces, per-cluster coordination files, a non-default user/group and install directory.
FULL_SPEC = """\
cluster: {name: mixed, platforms: [kubernetes, yarn, standalone]}
nodePools:
  - name: a100
    nodes: 2
    gpu: {vendor: nvidia, model: NVIDIA A100-SXM4-80GB, perNode: 8}
    labels: {accelplane.io/pool: a100}
  - name: t4
    platform: yarn
    nodes: 3
    gpu: {vendor: nvidia, model: Tesla T4, perNode: 2}
  - name: l4
    platform: standalone
    nodes: 1
    hosts: [gpu-01.example.internal]
    gpu: {vendor: nvidia, model: NVIDIA L4, perNode: 4}
  - name: l4-solo
    platform: standalone
    nodes: 1
    hosts: [gpu-02.example.internal]
    gpu: {vendor: nvidia, model: NVIDIA L4, perNode: 4}
  - name: cpu
    platform: yarn
    nodes: 4
discovery:
  installDir: /usr/local/libexec/accelplane
  coordinationFile: /var/lib/accelplane/gpu-coordination
  user: flinkgpu
  group: gpu-users
nodeImage: {baseImage: "flink:1.19.2-scala_2.12-java17", nvidiaMlPyVersion: "12.570.86"}
flink:
  defaults: {mode: session, image: "registry.example.internal/flink-gpu:1.19.2-py3"}
  clusters:
    - name: k8s-a
      target: kubernetes
      namespace: team-a
      taskManager: {gpu: {amount: 2, pool: a100}}
    - name: k8s-b
      target: kubernetes-operator
      namespace: team-b
      taskManager: {gpu: {amount: 1, pool: a100}}
      discovery: {coordinationFile: /run/accelplane-k8s/coordination}
    - name: k8s-cpu
      target: kubernetes
      namespace: team-c
    - name: k8s-zero
      target: kubernetes
      namespace: team-d
      taskManager: {gpu: {amount: 0}}
    - name: yarn-t4
      target: yarn
      taskManager: {gpu: {amount: 1, pool: t4}}
      discovery: {coordinationFile: /var/lib/accelplane/yarn/t4-coordination}
    - name: standalone-nocoord
      target: standalone
      taskManager: {gpu: {amount: 1, pool: l4-solo}}  # a host of its own: coordination off is safe there
      discovery: {coordination: false, coordinationFile: /var/lib/unused/coordination}
    - name: standalone-l4
      target: standalone
      taskManager: {gpu: {amount: 2, pool: l4}}
"""


SPEC_CASES = ["mixed", *(p.stem for p in EXAMPLE_SPECS)]
"""FULL_SPEC plus every example stack (new stacks are covered automatically)."""


def spec_case(name: str, write_spec: Callable[..., Path]) -> Path:
    """Path of a `SPEC_CASES` entry."""
    return write_spec(FULL_SPEC) if name == "mixed" else STACKS_DIR / f"{name}.yaml"


def artifact(name: str, write_spec: Callable[..., Path], rel: str) -> str | None:
    """Rendered text of ``rel`` for a spec case, or None after asserting the spec must not have it
    (``node/`` needs YARN/standalone GPU pools, ``node-image/`` needs ``nodeImage``)."""
    path = spec_case(name, write_spec)
    files = files_for(path)
    if rel in files:
        return files[rel][0]
    model = model_of(path)
    if rel.startswith("node/"):
        assert node_platforms(model) == (), f"{name}: {rel} missing"
    else:
        assert model.node_image is None, f"{name}: {rel} missing"
    return None


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file's bytes."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def snapshot(root: Path) -> dict[str, tuple[object, ...]]:
    """Every path below ``root`` with type, mode, owner, mtime and content hash (no symlink following)."""
    out: dict[str, tuple[object, ...]] = {}
    for path in sorted(root.rglob("*")):
        st = path.lstat()
        digest = sha256_file(path) if stat.S_ISREG(st.st_mode) else ""
        out[str(path.relative_to(root))] = (
            stat.S_IFMT(st.st_mode),
            stat.S_IMODE(st.st_mode),
            st.st_uid,
            st.st_gid,
            st.st_mtime_ns,
            digest,
        )
    return out


def account_ids() -> tuple[int, int]:
    """uid/gid the fake root's Flink user gets: a foreign one when we are root (so ownership
    changes are real), our own otherwise (chown to ourselves needs no privilege)."""
    if os.geteuid() == 0:
        return 4321, 4322
    return os.getuid(), os.getgid()


def make_fake_root(root: Path, user: str | None, group: str | None) -> tuple[int, int]:
    """A directory tree with ``etc/passwd`` and ``etc/group`` naming the Flink user/group."""
    uid, gid = account_ids()
    (root / "etc").mkdir(parents=True, exist_ok=True)
    passwd = "root:x:0:0:root:/root:/bin/sh\n"
    groups = "root:x:0:\n"
    if user is not None:
        passwd += f"{user}:x:{uid}:{gid}::/nonexistent:/usr/sbin/nologin\n"
    if group is not None:
        groups += f"{group}:x:{gid}:\n"
    (root / "etc" / "passwd").write_text(passwd)
    (root / "etc" / "group").write_text(groups)
    return uid, gid


def run_provisioner(
    script: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run provision.sh with bash, capturing output."""
    full_env = {k: v for k, v in os.environ.items() if k != "ACCELPLANE_ROOT"}
    full_env.update(env or {})
    return subprocess.run(
        ["bash", str(script), *args], capture_output=True, text=True, env=full_env, check=False, timeout=60
    )


def write_rendered(files: dict[str, tuple[str, int]], out: Path) -> Path:
    """Write rendered files (relative path → (text, mode)) below ``out``."""
    for rel, (text, mode) in files.items():
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8", newline="\n")
        target.chmod(mode)
    return out
