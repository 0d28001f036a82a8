"""Which hosts and images get the discovery script, and whether the directories we hand over are safe.

Node artifacts (``node/``: cloud-init, shell provisioner, tmpfiles rule) and the node image
(``node-image/``) give each coordination directory to the Flink user (owner ``discovery.user``,
mode 2770). That is only safe for a directory dedicated to accelplane: handing ``/var/tmp`` or
``/opt/flink`` to the Flink user would break the host or let the Flink user replace the script.
The selection rules live here, below both the check (`accelplane.checks.discovery_paths`) and the
builders, so what is checked is exactly what is built.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from accelplane.derive.gpu_resources import target_platform
from accelplane.errors import PathTuple
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
