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

from accelplane.derive.container_executor import Node, container_directories, run_command_file
from accelplane.derive.images import flink_image
from accelplane.derive.monitoring import exports_owner_metrics
from accelplane.discovery_install import MODULE_DIR
from accelplane.model import FlinkCluster, NodePool, Spec

RUNTIME_TYPE_ENV = "YARN_CONTAINER_RUNTIME_TYPE"
IMAGE_ENV = "YARN_CONTAINER_RUNTIME_DOCKER_IMAGE"
MOUNTS_ENV = "YARN_CONTAINER_RUNTIME_DOCKER_MOUNTS"
ENV_PREFIX = {"jobmanager": "containerized.master.env.", "taskmanager": "containerized.taskmanager.env."}
"""Flink's per-role prefixes of container environment variables."""

HADOOP_REF = "Hadoop 3.4.1 (rel/release-3.4.1)"
"""The container-executor and NodeManager sources the rules below cite."""
DEFAULT_NETWORK = "host"
"""The network every Flink container gets: the NodeManager's
``yarn.nodemanager.runtime.linux.docker.default-container-network`` (YarnConfiguration.java:2570-2571,
default ``host``), since Flink asks for none (DockerLinuxContainerRuntime.java:610-612).
container-executor refuses a network not in ``docker.allowed.networks`` (docker-util.c:889-902,
error 60)."""
NM_DOCKER_CAPABILITIES = (
    "CHOWN", "DAC_OVERRIDE", "FSETID", "FOWNER", "MKNOD", "NET_RAW", "SETGID",
    "SETUID", "SETFCAP", "SETPCAP", "NET_BIND_SERVICE", "SYS_CHROOT", "KILL", "AUDIT_WRITE",
)
"""The capabilities the NodeManager adds to every Docker container
(``yarn.nodemanager.runtime.linux.docker.capabilities``, YarnConfiguration.java:2497-2512);
container-executor refuses the container unless every one is in ``docker.allowed.capabilities``
(docker-util.c:1030-1056, error 62). accelplane writes the same list on both sides."""
CFG_PATH = "/etc/hadoop/conf/container-executor.cfg"
"""Where container-executor reads its cfg in the layout docs/yarn.md assumes (Bigtop's
``container-executor.conf.dir``); only the rw-mount-above-the-cfg rule depends on it."""
LIBRARY_REGISTRY = "library"
"""The ``docker.trusted.registries`` entry that trusts images without a ``/`` in their name (Docker
Hub's top-level images, e.g. ``flink:1.20``): docker-util.c:139-146."""


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
        if exports_owner_metrics(spec, cluster):
            # the script writes the owner metrics file there from inside the container (docs/hardening.md)
            wanted.append((metrics_directory(spec), "rw"))
    for path, mode in wanted:
        mounts[path] = "rw" if "rw" in (mode, mounts.get(path)) else "ro"
    return sorted(mounts.items())


def mounts_value(mounts: list[tuple[str, str]]) -> str:
    """``YARN_CONTAINER_RUNTIME_DOCKER_MOUNTS``: ``/a:/a:ro,/b:/b:rw`` (paths are schema-restricted
    to ``[A-Za-z0-9_./-]``, so no separator can hide in them)."""
    return ",".join(f"{path}:{path}:{mode}" for path, mode in mounts)


def metrics_directory(spec: Spec) -> str:
    """node-exporter's textfile directory, where the discovery script writes the GPU owner metrics."""
    return spec.monitoring.textfile_directory.rstrip("/") or "/"


def docker_clusters(spec: Spec) -> list[FlinkCluster]:
    """The Flink clusters whose YARN containers run in Docker."""
    return [c for c in spec.flink_clusters if runs_in_docker(spec, c)]


def image_trust_entry(image: str) -> str:
    """The narrowest ``docker.trusted.registries`` entry that trusts ``image``: ``library`` for a
    name without ``/`` (Docker Hub top level, docker-util.c:133-146), else everything before the
    last ``/`` of the repository. container-executor trusts an image that starts with the entry
    plus ``/`` (docker-util.c:147-161), so the repository itself (followed by ``:tag``) cannot be
    named; the entry trusts the image's sibling repositories too."""
    repository = image.split("@", 1)[0]
    if "/" not in repository:
        return LIBRARY_REGISTRY
    return repository.rsplit("/", 1)[0]


def trusted_registries(spec: Spec) -> list[str]:
    """``docker.trusted.registries``: one entry per image a Docker Flink container runs, sorted.
    Without it container-executor silently drops every mount and capability of the container and
    refuses its runtime and devices (docker-util.c:1503-1514, 214-222)."""
    return sorted({image_trust_entry(flink_image(c)) for c in docker_clusters(spec)})


def nodemanager_dirs(spec: Spec) -> list[str]:
    """The NodeManager's local and log directories: every Docker container mounts its own
    directories below them read-write (DockerLinuxContainerRuntime.java:695-700)."""
    assert spec.yarn is not None
    return sorted({*spec.yarn.local_dirs, *spec.yarn.log_dirs})


def pool_runs_gpu_taskmanagers(pool: NodePool) -> bool:
    """True when GPU TaskManagers may run on the pool's NodeManagers (a pool with GPUs): only there
    do their extra mounts (discovery script, coordination and metrics directories) exist, and a
    ``docker.allowed.*-mounts`` entry missing on a node fails every container on it (mount-utils.c
    normalize_mounts, error 52)."""
    return pool.gpu is not None


def allowed_mounts(spec: Spec, pool: NodePool | None = None) -> dict[str, list[str]]:
    """``docker.allowed.ro-mounts`` / ``rw-mounts`` for container-executor on ``pool``'s
    NodeManagers (every pool when None): the NodeManager's own directories (rw), then every source a
    Flink container that may run there mounts (each path under its mode; a path in ``rw-mounts`` may
    also be mounted ``ro``, mount-utils.c:311-318)."""
    ro: set[str] = set()
    rw: set[str] = set(nodemanager_dirs(spec)) if docker_clusters(spec) else set()
    for c in docker_clusters(spec):
        for role in ENV_PREFIX:
            if role == "taskmanager" and pool is not None and not pool_runs_gpu_taskmanagers(pool):
                mounts = container_mounts(spec, c, "jobmanager")
            else:
                mounts = container_mounts(spec, c, role)
            for path, mode in mounts:
                (rw if mode == "rw" else ro).add(path)
    return {"ro": sorted(ro - rw), "rw": sorted(rw)}


def nodemanager_run_commands(spec: Spec, pool: NodePool) -> list[tuple[str, str]]:
    """(``<cluster>/<role>``, command file) of every Docker Flink container that may run on the
    pool's NodeManagers, as the NodeManager writes it (`container_executor.run_command_file`):
    JobManagers anywhere, GPU TaskManagers on pools with GPUs, with ``runtime=nvidia`` where the
    GPU plugin starts them (NvidiaDockerV2CommandPlugin)."""
    assert spec.yarn is not None
    out = []
    for c in docker_clusters(spec):
        for role in ENV_PREFIX:
            gpu = role == "taskmanager" and c.task_manager.gpu is not None and c.task_manager.gpu.amount > 0
            if gpu and not pool_runs_gpu_taskmanagers(pool):
                continue
            runtime = "nvidia" if gpu and pool.gpu is not None and pool.gpu.vendor == "nvidia" and spec.yarn.docker_runtime == "nvidia" else ""
            text = run_command_file(
                image=flink_image(c),
                user_mounts=mounts_value(container_mounts(spec, c, role)),
                capabilities=list(NM_DOCKER_CAPABILITIES),
                local_dirs=list(spec.yarn.local_dirs),
                log_dirs=list(spec.yarn.log_dirs),
                network=DEFAULT_NETWORK,
                runtime=runtime,
            )
            out.append((f"{c.name}/{role}", text))
    return out


def provisioned_node(spec: Spec, pool: NodePool, cfg_path: str = CFG_PATH) -> Node:
    """The pool's NodeManager host as docs/yarn.md says to prepare it: every allowed mount source,
    the NodeManager's directories with the container's own below them, the cfg's directory."""
    assert spec.yarn is not None
    dirs: set[str] = set()
    allowed = allowed_mounts(spec, pool)
    wanted = [*allowed["ro"], *allowed["rw"], posixpath.dirname(cfg_path)]
    for kind in container_directories(list(spec.yarn.local_dirs), list(spec.yarn.log_dirs)).values():
        wanted += kind
    files = {cfg_path, spec.discovery.script_path}
    for path in wanted:
        if path in files:
            continue
        while path not in ("/", ""):
            dirs.add(path)
            path = posixpath.dirname(path)
    dirs.add("/")
    return Node(frozenset(dirs), frozenset(files))
