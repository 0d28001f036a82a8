"""Checks for YARN Docker mounts, devices and images (docs/hardening.md, "YARN Docker mounts").

Every path a Flink container on YARN mounts is also allowed node-wide in container-executor.cfg
(``docker.allowed.ro-mounts``/``rw-mounts``): any job's code then gets it. Hadoop's container-executor
(3.4.1) refuses only a read-write mount at or above its own cfg (mount-utils.c:298-309), a source
outside the allowed lists (mount-utils.c:290-318) or one that does not resolve (mount-utils.c:
101-154, 339-345); it takes ``/``, ``/etc`` or ``/var/run/docker.sock`` once the cfg allows it, and
any device listed in ``docker.allowed.devices`` (docker-util.c:1059-1069, a string match). accelplane
is stricter: it refuses what would give a container root on the NodeManager.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator

from accelplane.derive.images import flink_image, inherits_node_image
from accelplane.derive.monitoring import exports_owner_metrics
from accelplane.derive.yarn_docker import (
    LIBRARY_REGISTRY,
    docker_clusters,
    image_trust_entry,
    metrics_directory,
)
from accelplane.derive.yarn_types import yarn_gpu_clusters
from accelplane.errors import PathTuple, Problem
from accelplane.findings import ERROR, WARNING, Finding, declare
from accelplane.model import Spec

DOCKER_SYSTEM_MOUNT = declare(
    'AP6075', ERROR, 'a YARN Docker mount of the host root, a system directory or a container runtime socket',
    fix='mount only the directories the containers need (Hadoop home and configuration, a JDK)',
)
DOCKER_RW_SYSTEM_MOUNT = declare(
    'AP6076', ERROR, 'a read-write YARN Docker mount under a system directory',
    fix='mount it read-only (mode: ro) or use a directory outside the system directories',
)
DOCKER_RO_SYSTEM_MOUNT = declare(
    'AP6077', ERROR, 'a YARN Docker mount under /etc or /usr that is not Hadoop or a JDK',
    fix='mount only /etc/hadoop/..., a Hadoop installation (/usr/.../hadoop...) or a JDK (/usr/lib/jvm/NAME)',
)
DOCKER_MOUNT_NOT_NORMAL = declare(
    'AP6078', ERROR, 'a YARN Docker mount path that is not normalised',
    fix='write the path without "..", ".", "//" or a trailing "/"',
)
DOCKER_DEVICE_NOT_GPU = declare(
    'AP6079', ERROR, 'a YARN Docker device that is not a GPU device',
    fix='list only GPU devices in yarn.docker.allowedDevices (/dev/nvidia*, /dev/nvidia-caps/*, /dev/dri/*, /dev/kfd)',
)
DOCKER_LIBRARY_TRUST = declare(
    'AP5075', WARNING, 'a YARN Docker image without a registry: every Docker Hub top-level image is trusted',
    fix='use an image from a registry of your own (registry.example.com/team/flink:tag)',
)

SYSTEM_DIRECTORIES = (
    "/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/boot", "/dev", "/proc",
    "/sys", "/root", "/var/run", "/run",
)
"""The host's system directories (issue #37): never mounted, nothing under them read-write."""
RUNTIME_SOCKETS = (
    "/var/run/docker.sock", "/run/docker.sock", "/run/containerd/containerd.sock",
    "/var/run/containerd/containerd.sock", "/var/run/crio/crio.sock", "/run/crio/crio.sock",
    "/run/podman/podman.sock", "/var/run/podman/podman.sock", "/run/docker/plugins",
)
"""Container runtime sockets: whoever can reach one is root on the host."""
GPU_DEVICE_PREFIXES = ("/dev/nvidia", "/dev/dri/")
GPU_DEVICES = ("/dev/kfd",)


def within(path: str, directory: str) -> bool:
    """True when ``path`` is ``directory`` or lies below it (both normalised absolute paths)."""
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def is_normalised(path: str) -> bool:
    """True for an absolute path with no ``.``/``..`` component, ``//`` or trailing ``/``."""
    return path == "/" or (posixpath.normpath(path) == path and not path.endswith("/") and "//" not in path)


def is_gpu_device(path: str) -> bool:
    """True for an NVIDIA (``/dev/nvidia*``, ``/dev/nvidia-caps/*``), DRM (``/dev/dri/*``) or AMD KFD
    device path."""
    return is_normalised(path) and (path in GPU_DEVICES or path.startswith(GPU_DEVICE_PREFIXES))


def _ro_allowed_under_system(path: str) -> bool:
    """Hadoop's configuration (``/etc/hadoop/...``), a Hadoop installation (a ``/usr`` path with a
    component named ``hadoop*``) or a JDK (``/usr/lib/jvm/NAME`` and below)."""
    if within(path, "/etc/hadoop"):
        return True
    if within(path, "/usr"):
        parts = path.split("/")[2:]
        if any(p.startswith("hadoop") for p in parts):
            return True
        return path.startswith("/usr/lib/jvm/")
    return False


def mount_problem(path: str, mode: str) -> tuple[str, Finding] | None:
    """Why a container may not mount ``path`` in ``mode`` (message, finding), or None."""
    if not is_normalised(path):
        return (f"{path} is not a normalised path (container-executor resolves it with realpath, so the "
                "allowed entry and what is mounted can differ)", DOCKER_MOUNT_NOT_NORMAL)
    hits = [d for d in (*SYSTEM_DIRECTORIES, *RUNTIME_SOCKETS) if within(d, path)]
    if hits or any(within(path, s) for s in RUNTIME_SOCKETS):
        what = "the host root" if path == "/" else ", ".join(hits) if hits else "a container runtime socket"
        return (f"mounting {path} gives every Flink container (any job's code) {what} of the NodeManager host, "
                "root on it; container-executor would allow it once container-executor.cfg lists it", DOCKER_SYSTEM_MOUNT)
    system = next((d for d in SYSTEM_DIRECTORIES if within(path, d)), None)
    if system is None:
        return None
    if mode == "rw":
        return (f"{path} is under the system directory {system}: read-write there lets a container change what "
                "the host runs", DOCKER_RW_SYSTEM_MOUNT)
    if system not in ("/etc", "/usr"):
        return (f"{path} is under the system directory {system}, which no container may see (credentials, "
                "kernel and device interfaces of the NodeManager host)", DOCKER_SYSTEM_MOUNT)
    if _ro_allowed_under_system(path):
        return None
    return (f"{path} is under the system directory {system}; only Hadoop's configuration (/etc/hadoop/...), a "
            "Hadoop installation (a /usr path with a component named hadoop*) or a JDK (/usr/lib/jvm/NAME) "
            "may be mounted from /etc or /usr, read-only",
            DOCKER_RO_SYSTEM_MOUNT)


def _mounts(spec: Spec) -> Iterator[tuple[PathTuple, str, str]]:
    """(finding path, host path, mode) of every source a Docker Flink container mounts."""
    y = spec.yarn
    assert y is not None
    for i, (path, mode) in enumerate(y.docker_mount_list):
        yield ("yarn", "docker", "mounts", i, "path"), path, mode
    for field, dirs in (("localDirs", y.local_dirs), ("logDirs", y.log_dirs)):
        for i, path in enumerate(dirs):
            yield ("yarn", field, i), path, "rw"
    clusters = docker_clusters(spec)
    if any(c.coordination for c in clusters):
        yield ("discovery", "coordinationFile"), posixpath.dirname(spec.discovery.coordination_file), "rw"
    if any(exports_owner_metrics(spec, c) for c in clusters):
        yield ("monitoring", "textfileDirectory"), metrics_directory(spec), "rw"


def check(spec: Spec) -> Iterator[Problem]:
    """Refuse YARN Docker mounts and devices that give containers the host; warn on ``library``."""
    y = spec.yarn
    if y is None or not y.docker_enabled or not spec.has_platform("yarn"):
        return
    seen: set[tuple[str, str]] = set()
    for where, path, mode in _mounts(spec):
        if (path, mode) in seen:
            continue
        seen.add((path, mode))
        found = mount_problem(path, mode)
        if found is not None:
            message, finding = found
            yield Problem(where, message, finding)
    for i, device in enumerate(y.docker_device_list):
        if not is_gpu_device(device):
            yield Problem(
                ("yarn", "docker", "allowedDevices", i),
                f"{device} is not a GPU device: docker.allowed.devices lets every Flink container open it "
                "(a disk, /dev/mem or /dev/kmsg is root on the host)",
                DOCKER_DEVICE_NOT_GPU,
            )
    stock_gpu = {c.name for c in yarn_gpu_clusters(spec) if c.image is None}  # AP5xxx stock-image error says it
    library = [c for c in docker_clusters(spec) if image_trust_entry(flink_image(c)) == LIBRARY_REGISTRY and c.name not in stock_gpu]
    # one finding per image setting: a cluster's own image, or nodeImage.image for every cluster
    # that inherits it (one setting, one fix: #39 item 4)
    inheriting = [c.name for c in library if inherits_node_image(spec, c)]
    for c in library:
        if c.name not in inheriting:
            yield Problem(c.field_path("image"), _library_message(flink_image(c)), DOCKER_LIBRARY_TRUST)
    if inheriting and spec.node_image is not None and spec.node_image.image is not None:
        yield Problem(
            ("nodeImage", "image"),
            _library_message(spec.node_image.image) + f" (the image of Flink cluster{'s' if len(inheriting) > 1 else ''} "
            f"{', '.join(inheriting)})",
            DOCKER_LIBRARY_TRUST,
        )


def _library_message(image: str) -> str:
    return (
        f"{image} has no registry part, so container-executor.cfg must trust it as "
        f"docker.trusted.registries={LIBRARY_REGISTRY}, which trusts every Docker Hub top-level image "
        "(their containers get the allowed mounts and capabilities)"
    )
