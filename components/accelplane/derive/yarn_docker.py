"""Flink containers in Docker on YARN: what Flink must put in its containers' environment.

``yarn.docker.enabled`` lets NodeManagers launch Docker containers (``allowed-runtimes``, the
``[docker]`` section of ``container-executor.cfg``), but a YARN container runs in Docker only when
its launch environment asks for it (Hadoop 3.5 ``DockerLinuxContainerRuntime``):
``YARN_CONTAINER_RUNTIME_TYPE=docker``, the image in ``YARN_CONTAINER_RUNTIME_DOCKER_IMAGE`` and
extra bind mounts in ``YARN_CONTAINER_RUNTIME_DOCKER_MOUNTS`` (``source:dest:mode`` separated by
commas, mode ``ro`` or ``rw``; container-executor refuses a source outside
``docker.allowed.ro-mounts``/``rw-mounts``). Flink sets a container's environment from
``containerized.master.env.<NAME>`` (the JobManager, YARN's ApplicationMaster) and
``containerized.taskmanager.env.<NAME>`` (``ResourceManagerOptions.CONTAINERIZED_*_ENV_PREFIX``).

Mounted at the same path: the site's ``yarn.docker.mounts`` (Hadoop, its configuration, a JDK the
image lacks) in every container, and in GPU TaskManagers the coordination directory (read-write)
when coordination is on and, unless the image is accelplane's node image (which has them), the
host's discovery script and module directory (read-only; the script runs in the container, from the
container start command, with the host stub's ``/usr/bin/python3``, which the image must then have).
"""

from __future__ import annotations

import posixpath

from accelplane.discovery_install import MODULE_DIR
from accelplane.model import FlinkCluster, Spec

RUNTIME_TYPE_ENV = "YARN_CONTAINER_RUNTIME_TYPE"
IMAGE_ENV = "YARN_CONTAINER_RUNTIME_DOCKER_IMAGE"
MOUNTS_ENV = "YARN_CONTAINER_RUNTIME_DOCKER_MOUNTS"
ENV_PREFIX = {"jobmanager": "containerized.master.env.", "taskmanager": "containerized.taskmanager.env."}
"""Flink's per-role prefixes of container environment variables."""


def runs_in_docker(spec: Spec, cluster: FlinkCluster) -> bool:
    """True when the cluster's YARN containers run in Docker (a YARN cluster with yarn.docker)."""
    return cluster.target == "yarn" and spec.yarn is not None and spec.yarn.docker_enabled


def uses_node_image(spec: Spec, cluster: FlinkCluster) -> bool:
    """True when the cluster runs accelplane's node image (``nodeImage.image``), which carries the
    discovery script and module at the host paths with its own Python: mounting the host's stub
    (which runs the host's ``/usr/bin/python3``) over them would break them."""
    return spec.node_image is not None and cluster.image is not None and cluster.image == spec.node_image.image


def container_mounts(spec: Spec, cluster: FlinkCluster, role: str) -> list[tuple[str, str]]:
    """(path, ``ro``/``rw``) the role's containers mount, sorted by path (``rw`` wins a path given
    twice)."""
    assert spec.yarn is not None
    mounts: dict[str, str] = {}
    wanted = list(spec.yarn.docker_mounts)
    gpu = cluster.task_manager.gpu
    if role == "taskmanager" and gpu is not None and gpu.amount > 0:
        if not uses_node_image(spec, cluster):
            wanted += [(spec.discovery.script_path, "ro"), (MODULE_DIR, "ro")]
        if cluster.coordination:
            wanted.append((posixpath.dirname(cluster.coordination_file), "rw"))
    for path, mode in wanted:
        mounts[path] = "rw" if "rw" in (mode, mounts.get(path)) else "ro"
    return sorted(mounts.items())


def mounts_value(mounts: list[tuple[str, str]]) -> str:
    """``YARN_CONTAINER_RUNTIME_DOCKER_MOUNTS``: ``/a:/a:ro,/b:/b:rw`` (paths are schema-restricted
    to ``[A-Za-z0-9_./-]``, so no separator can hide in them)."""
    return ",".join(f"{path}:{path}:{mode}" for path, mode in mounts)


def allowed_mounts(spec: Spec) -> dict[str, list[str]]:
    """``docker.allowed.ro-mounts`` / ``rw-mounts`` for container-executor: every source any Flink
    container on YARN mounts (each path under its mode; ``rw`` implies the container may also ask
    ``ro``, which container-executor allows for a path in ``rw-mounts``)."""
    ro: set[str] = set()
    rw: set[str] = set()
    for c in spec.flink_clusters:
        if not runs_in_docker(spec, c):
            continue
        for role in ENV_PREFIX:
            for path, mode in container_mounts(spec, c, role):
                (rw if mode == "rw" else ro).add(path)
    return {"ro": sorted(ro - rw), "rw": sorted(rw)}
