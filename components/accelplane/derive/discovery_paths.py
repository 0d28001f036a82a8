"""Which hosts and images get the discovery script, and whether the directories we hand over are safe.

Node artifacts (``node/``: cloud-init, shell provisioner, tmpfiles rule), the node image
(``node-image/``) and the Kubernetes pod templates (hostPath + init container) give each
coordination directory to the Flink user (owner ``discovery.user``, mode 2770). That is only safe
for a directory accelplane owns: handing ``/etc`` or ``/etc/sudoers.d`` to the Flink user, or
mounting ``/etc/kubernetes/manifests`` into a TaskManager, gives the host away. `coordination_dir_problem`
is the one rule for all of them.
The selection rules live here, below both the check (`accelplane.checks.discovery_paths`) and the
builders, so what is checked is exactly what is built.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from accelplane.errors import PathTuple
from accelplane.model import FlinkCluster, NodePool, Spec

NODE_PLATFORMS = ("standalone", "yarn")
"""Platforms whose GPU hosts are provisioned with ``node/`` (Kubernetes nodes run the image)."""

IMAGE_PLATFORMS = ("kubernetes",)
"""Platforms whose TaskManagers run in the node image."""

COORDINATION_ROOTS = ("/run", "/var/lib")
"""The only parents of a coordination directory tree: state that lives until reboot (``/run``,
tmpfs) or across reboots (``/var/lib``). Both exist on every host and image."""

COORDINATION_NAME = re.compile(r"accelplane(-[A-Za-z0-9_.-]+)?")
"""Name of the directory accelplane owns below a root: ``accelplane`` or ``accelplane-<suffix>``."""

COORDINATION_RULE = "/var/lib/accelplane or /run/accelplane, accelplane-<suffix> there, or a directory below them"
"""The allowlist in words, for error messages and docs."""


def coordination_dir_problem(directory: str) -> str | None:
    """Why ``directory`` may not hold a coordination file, or None when it is one accelplane owns.

    The one rule for every platform and artifact (pod templates' hostPath and init container, node
    image, cloud-init, provision script, tmpfiles rule): the directory is handed to the Flink user
    (mode 2770) and, by the tmpfiles rule, re-owned at every boot, so it must be in accelplane's own
    namespace (``/var/lib/accelplane…``, ``/run/accelplane…``), never a system or shared directory
    such as ``/etc``, ``/etc/kubernetes/manifests``, ``/root/.ssh`` or ``/var/lib/kubelet``.
    """
    if posixpath.normpath(directory) != directory or not directory.startswith("/"):
        return f"{directory!r} is not a normalized absolute path"
    for root in COORDINATION_ROOTS:
        if directory.startswith(root + "/"):
            name = directory[len(root) + 1 :].split("/", 1)[0]
            if COORDINATION_NAME.fullmatch(name):
                return None
    return f"{directory} is not one accelplane owns ({COORDINATION_RULE})"


def accelplane_base(directory: str) -> str:
    """The ``<root>/accelplane…`` directory a valid coordination directory is in (or is)."""
    for root in COORDINATION_ROOTS:
        if directory.startswith(root + "/"):
            return f"{root}/{directory[len(root) + 1 :].split('/', 1)[0]}"
    raise ValueError(f"{directory} is not below a coordination root")


FLINK_PID_SUFFIX = "-flink-pids"
"""``<base>-flink-pids``: beside accelplane's coordination tree, the directory of standalone
clusters' pid directories (``env.pid.dir``), one per cluster."""


def flink_pid_root(spec: Spec) -> str:
    """The host directory that holds each standalone cluster's pid directory: owned by the Flink
    user, mode 0755, in a root-owned parent (``/run`` or ``/var/lib``), made by ``node/provision.sh``
    and the tmpfiles rule. Not inside the coordination directory: that one is group-writable
    (2770), so any member of the group could rename a pid directory there and plant its own."""
    directory = posixpath.dirname(spec.discovery.coordination_file)
    if coordination_dir_problem(directory) is not None:
        return f"/run/accelplane{FLINK_PID_SUFFIX}"  # an invalid spec (refused by the checks)
    return accelplane_base(directory) + FLINK_PID_SUFFIX


def flink_pid_dir(spec: Spec, cluster: FlinkCluster) -> str:
    """``env.pid.dir`` accelplane renders for a standalone GPU cluster: its own directory below
    `flink_pid_root`, so two clusters run by one user never share ``flink-$USER-taskexecutor.pid``
    and no other local user can plant a pid file in it (Flink's default is ``/tmp``)."""
    return f"{flink_pid_root(spec)}/{cluster.name}"


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
        if c.uses_gpus and c.platform in platforms
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


def used_coordination_files(spec: Spec) -> list[CoordinationFile]:
    """Every coordination file any artifact names: ``discovery.coordinationFile`` (always, it is the
    default of every cluster) and the override of every GPU cluster in coordination mode, on any
    platform; sorted by path."""
    return coordination_files(spec, ("kubernetes", *NODE_PLATFORMS))


def prepared_coordination_files(spec: Spec) -> list[CoordinationFile]:
    """Every coordination file whose directory ``node/`` or ``node-image/`` will create."""
    found: dict[str, CoordinationFile] = {}
    if node_platforms(spec):
        found.update((f.path, f) for f in coordination_files(spec, node_platforms(spec)))
    if spec.node_image is not None:
        for f in coordination_files(spec, IMAGE_PLATFORMS):
            found.setdefault(f.path, f)
    return [found[k] for k in sorted(found)]
