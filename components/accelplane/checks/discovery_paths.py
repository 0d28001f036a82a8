"""Which hosts and images get the discovery script, and whether the directories we hand over are safe.

Node artifacts (``node/``: cloud-init, shell provisioner, tmpfiles rule) and the node image
(``node-image/``) give each coordination directory to the Flink user (owner ``discovery.user``,
mode 2770). That is only safe for a directory dedicated to accelplane: handing ``/var/tmp`` or
``/opt/flink`` to the Flink user would break the host or let the Flink user replace the script.
The selection rules live here, next to the check, so the builders and the check always agree.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator
from dataclasses import dataclass

from accelplane.errors import PathTuple, Problem
from accelplane.gpu_resources import target_platform
from accelplane.model import FlinkCluster, NodePool, Spec

NODE_PLATFORMS = ("standalone", "yarn")
"""Platforms whose GPU hosts are provisioned with ``node/`` (Kubernetes nodes run the image)."""

IMAGE_PLATFORMS = ("kubernetes",)
"""Platforms whose TaskManagers run in the node image."""

# Directories shared by the whole system (FHS) or by Flink itself: never given to the Flink user.
SHARED_DIRECTORIES = frozenset(
    {
        "/",
        "/bin",
        "/boot",
        "/dev",
        "/etc",
        "/home",
        "/lib",
        "/lib32",
        "/lib64",
        "/media",
        "/mnt",
        "/opt",
        "/proc",
        "/root",
        "/run",
        "/run/lock",
        "/run/user",
        "/sbin",
        "/srv",
        "/sys",
        "/tmp",
        "/usr",
        "/usr/bin",
        "/usr/lib",
        "/usr/lib64",
        "/usr/libexec",
        "/usr/local",
        "/usr/local/bin",
        "/usr/local/lib",
        "/usr/local/libexec",
        "/usr/local/sbin",
        "/usr/local/share",
        "/usr/sbin",
        "/usr/share",
        "/var",
        "/var/cache",
        "/var/lib",
        "/var/local",
        "/var/lock",
        "/var/log",
        "/var/opt",
        "/var/run",
        "/var/spool",
        "/var/tmp",
        "/opt/flink",
        "/opt/flink/bin",
        "/opt/flink/conf",
        "/opt/flink/lib",
        "/opt/flink/log",
        "/opt/flink/opt",
        "/opt/flink/plugins",
    }
)


@dataclass(frozen=True)
class CoordinationFile:
    """A coordination file some TaskManagers use, with the spec path that sets it."""

    path: str
    spec_path: PathTuple

    @property
    def directory(self) -> str:
        """The directory that holds it (created for and owned by the Flink user)."""
        return posixpath.dirname(self.path)


def gpu_clusters(spec: Spec, platforms: tuple[str, ...]) -> list[FlinkCluster]:
    """Flink clusters with GPU TaskManagers (amount > 0) whose TaskManagers run on ``platforms``."""
    return [
        c
        for c in spec.flink_clusters
        if c.task_manager.gpu is not None
        and c.task_manager.gpu.amount > 0
        and target_platform(c) in platforms
    ]


def node_gpu_pools(spec: Spec) -> list[NodePool]:
    """GPU pools on YARN/standalone hosts of platforms the cluster runs (they get ``node/``)."""
    return [
        p
        for p in spec.node_pools
        if p.gpu is not None and p.platform in NODE_PLATFORMS and spec.has_platform(p.platform)
    ]


def node_platforms(spec: Spec) -> tuple[str, ...]:
    """YARN/standalone platforms of the cluster that have GPU pools; ``node/`` is rendered when non-empty."""
    return tuple(sorted({p.platform for p in node_gpu_pools(spec)}))


def coordination_files(spec: Spec, platforms: tuple[str, ...]) -> list[CoordinationFile]:
    """Coordination files to prepare on hosts/images of ``platforms``, sorted by path.

    Always ``discovery.coordinationFile`` (the node-wide default), plus every per-cluster
    override of a GPU cluster in coordination mode running there.
    """
    found = {
        spec.discovery.coordination_file: CoordinationFile(
            spec.discovery.coordination_file, ("discovery", "coordinationFile")
        )
    }
    for c in gpu_clusters(spec, platforms):
        if c.coordination and c.coordination_file not in found:
            found[c.coordination_file] = CoordinationFile(
                c.coordination_file, c.field_path("discovery", "coordinationFile")
            )
    return [found[k] for k in sorted(found)]


def prepared_coordination_files(spec: Spec) -> list[CoordinationFile]:
    """Every coordination file whose directory ``node/`` or ``node-image/`` will create."""
    found: dict[str, CoordinationFile] = {}
    if node_platforms(spec):
        found.update((f.path, f) for f in coordination_files(spec, node_platforms(spec)))
    if spec.node_image is not None:
        for f in coordination_files(spec, IMAGE_PLATFORMS):
            found.setdefault(f.path, f)
    return [found[k] for k in sorted(found)]


def check(spec: Spec) -> Iterator[Problem]:
    """Coordination directories that accelplane would hand to the Flink user must be dedicated ones."""
    files = prepared_coordination_files(spec)
    if not files:
        return
    install_dir = spec.discovery.install_dir
    if install_dir == "/":
        yield Problem(
            ("discovery", "installDir"),
            "the discovery script cannot be installed into '/'; use a dedicated directory, e.g. "
            "/opt/flink/plugins/external-resource-gpu",
        )
    elif posixpath.normpath(install_dir) != install_dir:
        yield Problem(
            ("discovery", "installDir"),
            f"{install_dir!r} is not a normalized path (no '.', '..', '//' or trailing '/'); "
            f"write {posixpath.normpath(install_dir)!r}",
        )
    for f in files:
        if posixpath.normpath(f.path) != f.path:
            yield Problem(
                f.spec_path,
                f"{f.path!r} is not a normalized path (no '.', '..', '//' or trailing '/'); "
                f"write {posixpath.normpath(f.path)!r}",
            )
            continue
        d = f.directory
        if d in SHARED_DIRECTORIES:
            yield Problem(
                f.spec_path,
                f"the coordination file's directory {d} is a shared system directory, but accelplane gives "
                f"the coordination directory to the Flink user ({spec.discovery.user}:{spec.discovery.group}, "
                f"mode 2770); use a dedicated directory, e.g. /var/lib/accelplane/{posixpath.basename(f.path)}",
            )
        elif d == install_dir or install_dir.startswith(d + "/"):
            yield Problem(
                f.spec_path,
                f"the coordination file's directory {d} contains the discovery script's install directory "
                f"{install_dir}; the Flink user owns the coordination directory and could replace the script, "
                "so use a separate directory, e.g. /var/lib/accelplane/gpu-coordination",
            )
