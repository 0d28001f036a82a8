"""Hadoop container-executor's rules for a ``docker run`` the NodeManager asks for, ported to Python.

Ported from Hadoop 3.4.1 (``rel/release-3.4.1``), ``hadoop-yarn-server-nodemanager/src/main/native/
container-executor/impl/``: ``utils/docker-util.c`` (``get_docker_run_command`` and helpers),
``utils/mount-utils.c`` (mount checks) and ``configuration.c`` (reading the cfg). Only the rules a
Flink container meets are ported: network, mounts, capabilities, runtime, devices, image trust,
in the order ``get_docker_run_command`` applies them (docker-util.c:1640-1710) — the first refusal
is the container's verdict. The files under ``tests/yarn/data/`` hold the verdicts of the real
container-executor code (built from that source) on accelplane's rendered files;
tests/yarn/test_container_executor.py checks this port against them.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

DOCKER_SECTION = "docker"
COMMAND_SECTION = "docker-command-execution"

OK = 0
INVALID_MOUNT = 49
INVALID_RO_MOUNT = 50
INVALID_RW_MOUNT = 51
MOUNT_ACCESS_ERROR = 52
INVALID_DOCKER_NETWORK = 60
INVALID_DOCKER_CAPABILITY = 62
INVALID_DOCKER_DEVICE = 64
INVALID_DOCKER_RUNTIME = 74
"""container-executor's error codes (util.h:77-102)."""
MESSAGES = {
    INVALID_RW_MOUNT: "Invalid docker read-write mount",
    INVALID_RO_MOUNT: "Invalid docker read-only mount",
    MOUNT_ACCESS_ERROR: "Mount access error",
    INVALID_DOCKER_NETWORK: "Invalid docker network",
    INVALID_DOCKER_CAPABILITY: "Invalid docker capability",
    INVALID_DOCKER_DEVICE: "Invalid docker device",
    INVALID_DOCKER_RUNTIME: "Invalid docker runtime",
}


def read_config(text: str) -> dict[str, dict[str, str]]:
    """container-executor's view of a cfg or command file: lines before the first ``[section]`` in
    section ``""``, repeated sections merged, the FIRST occurrence of a key kept
    (configuration.c:454-474 merge, 504-524 read, 561-572 first match); ``#`` starts a comment."""
    sections: dict[str, dict[str, str]] = {"": {}}
    current = ""
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("[") and line.endswith("]"):
            current = line[1:-1].strip()
            sections.setdefault(current, {})
            continue
        key, sep, value = line.partition("=")
        if sep:
            sections[current].setdefault(key.strip(), value.strip())
    return sections


def _values(section: dict[str, str], key: str) -> list[str] | None:
    value = section.get(key)
    if value is None:
        return None
    return [v for v in value.split(",") if v]


def image_trusted(command: dict[str, str], docker: dict[str, str]) -> bool:
    """docker-util.c:113-174 ``check_trusted_image``: an entry starting with ``library`` trusts an
    image without ``/``; any entry trusts an image that starts with the entry plus ``/``."""
    image = command.get("image", "")
    for entry in _values(docker, "docker.trusted.registries") or []:
        if entry.startswith("library") and "/" not in image:
            return True
        prefix = entry if entry.endswith("/") else entry + "/"
        if image.startswith(prefix):
            return True
    return False


@dataclass(frozen=True)
class Node:
    """What the mount checks see of a node's file system: which paths exist and which are
    directories (mount-utils.c:101-154 resolves every path with ``realpath``; no symlinks here)."""

    directories: frozenset[str]
    files: frozenset[str] = frozenset()

    def exists(self, path: str) -> bool:
        """True when ``path`` resolves on the node."""
        return path in self.directories or path in self.files

    def normalize(self, path: str) -> str | None:
        """mount-utils.c:101-154 ``normalize_mount``: the real path, with ``/`` appended for a
        directory; None when it does not resolve."""
        real = posixpath.normpath(path)
        if not self.exists(real):
            return None
        return real.rstrip("/") + "/" if real in self.directories else real


def _permitted(node: Node, allowed: list[str], requested: str) -> int:
    """mount-utils.c:217-253 ``check_mount_permitted``: 1 when ``requested`` is an allowed entry or
    below an allowed directory (string prefix of the normalised paths), 0 if not, -1 if it does not
    resolve."""
    path = node.normalize(requested)
    if path is None:
        return -1
    for entry in allowed:
        if path == entry or (entry.endswith("/") and path.startswith(entry)):
            return 1
    return 0


def _mounts(command: dict[str, str], docker: dict[str, str], node: Node, cfg_path: str) -> tuple[int, list[str]]:
    """docker-util.c:1480-1545 ``add_docker_mounts`` with mount-utils.c:265-356: (code, kept mounts).
    An untrusted image loses every mount silently (docker-util.c:1503-1514)."""
    requested = _values(command, "mounts")
    if not requested:
        return OK, []
    if not image_trusted(command, docker):
        return OK, []
    allowed: dict[str, list[str]] = {}
    for mode in ("ro", "rw"):
        entries = []
        for entry in _values(docker, f"docker.allowed.{mode}-mounts") or []:
            normal = node.normalize(entry)
            if normal is None:  # mount-utils.c:339-345: every allowed entry must exist on the node
                return MOUNT_ACCESS_ERROR, []
            entries.append(normal)
        allowed[mode] = entries
    cfg = node.normalize(cfg_path)
    kept = []
    for mount in requested:
        src, dest, mode = [*mount.split(":"), "", ""][:3]
        rw = _permitted(node, allowed["rw"], src)
        ro = _permitted(node, allowed["ro"], src)
        if -1 in (rw, ro):
            return INVALID_MOUNT, []
        if mode.startswith("rw"):
            if rw == 0:
                return INVALID_RW_MOUNT, []
            # mount-utils.c:298-309: no rw mount at or above container-executor.cfg
            source = node.normalize(src) or ""
            if cfg is not None and source.endswith("/") and cfg.startswith(source):
                return INVALID_RW_MOUNT, []
        elif ro == 0 and rw == 0:
            return INVALID_RO_MOUNT, []
        kept.append(f"{src}:{dest}:{mode}")
    return OK, kept


def _value_permitted(value: str, entry: str, prefix: str) -> bool:
    """docker-util.c:241-260: equal to the entry, or (with a prefix character, devices) the entry
    starts with the part of the value before it (``strncmp``)."""
    if not prefix:
        return value == entry
    head = value.split(prefix, 1)[0]
    return entry[: len(head)] == head


def _allowed_values(
    command: dict[str, str], docker: dict[str, str], key: str, allowed_key: str, *, multiple: bool, prefix: str = ""
) -> tuple[int, list[str]]:
    """docker-util.c:190-287 ``add_param_to_command_if_allowed``: 0 and the values, -1 when one is
    not allowed (or the allowed list is empty), 72 (untrusted) for anything but ``net``."""
    values = _values(command, key) if multiple else ([command[key]] if key in command else [])
    if not values:
        return OK, []
    if key != "net" and not image_trusted(command, docker):
        return 72, []
    allowed = _values(docker, allowed_key)
    if not allowed:
        return -1, []
    for value in values:
        if prefix and prefix not in value:
            return -1, []
        if not any(_value_permitted(value, entry, prefix) for entry in allowed):
            return -1, []
    return OK, values


@dataclass(frozen=True)
class Verdict:
    """What container-executor makes of a ``docker run`` command file: ``code`` 0 with the parts of
    the docker command accelplane cares about, or the error code of the first refusal."""

    code: int
    network: str = ""
    mounts: tuple[str, ...] = ()
    capabilities: tuple[str, ...] = ()
    runtime: str = ""
    devices: tuple[str, ...] = field(default_factory=tuple)


def docker_run_verdict(cfg_text: str, command_text: str, node: Node, cfg_path: str) -> Verdict:
    """The verdict of container-executor (cfg ``cfg_text`` at ``cfg_path``) on the NodeManager's
    command file ``command_text`` on ``node``, in docker-util.c:1640-1710's order."""
    docker = read_config(cfg_text).get(DOCKER_SECTION, {})
    command = read_config(command_text).get(COMMAND_SECTION, {})
    code, net = _allowed_values(command, docker, "net", "docker.allowed.networks", multiple=False)
    if code != OK:  # docker-util.c:890-903
        return Verdict(INVALID_DOCKER_NETWORK)
    code, mounts = _mounts(command, docker, node, cfg_path)
    if code != OK:
        return Verdict(code)
    code, caps = _allowed_values(command, docker, "cap-add", "docker.allowed.capabilities", multiple=True)
    if code == 72:  # docker-util.c:1046-1050: dropped for an untrusted image
        caps = []
    elif code != OK:
        return Verdict(INVALID_DOCKER_CAPABILITY)
    code, runtime = _allowed_values(command, docker, "runtime", "docker.allowed.runtimes", multiple=False)
    if code != OK:  # docker-util.c:905-916: untrusted too
        return Verdict(INVALID_DOCKER_RUNTIME)
    code, devices = _allowed_values(command, docker, "devices", "docker.allowed.devices", multiple=True, prefix=":")
    if code != OK:  # docker-util.c:1059-1069
        return Verdict(INVALID_DOCKER_DEVICE)
    return Verdict(OK, net[0] if net else "", tuple(mounts), tuple(caps), runtime[0] if runtime else "", tuple(devices))


APPLICATION_ID = "application_1764000000000_0001"
CONTAINER_ID = "container_e01_1764000000000_0001_01_000002"
USER = "flink"
UID_GID = "1001:1001"


def container_directories(local_dirs: list[str], log_dirs: list[str], user: str = USER) -> dict[str, list[str]]:
    """The per-container directories the NodeManager mounts into every Docker container, by kind
    (DockerLinuxContainerRuntime.java:657-670, 695-700; ContainerLaunch / ResourceLocalizationService
    layout): ``log`` and ``app`` read-write, ``filecache`` and ``user-filecache`` read-only."""
    return {
        "log": [f"{d}/{APPLICATION_ID}/{CONTAINER_ID}" for d in log_dirs],
        "app": [f"{d}/usercache/{user}/appcache/{APPLICATION_ID}" for d in local_dirs],
        "filecache": [f"{d}/filecache" for d in local_dirs],
        "user-filecache": [f"{d}/usercache/{user}/filecache" for d in local_dirs],
    }


def run_command_file(
    *,
    image: str,
    user_mounts: str,
    capabilities: list[str],
    local_dirs: list[str],
    log_dirs: list[str],
    network: str = "host",
    runtime: str = "",
) -> str:
    """The ``docker run`` command file the NodeManager writes for a container (DockerClient.java
    ``writeCommandToTempFile``: ``[docker-command-execution]``, keys sorted (DockerCommand's TreeMap),
    list values joined by ``,``, ``environ`` last), as DockerLinuxContainerRuntime.launchContainer
    builds it (java:591-870: user remapping on, host network without hostname, capabilities,
    the NodeManager's directories, then ``YARN_CONTAINER_RUNTIME_DOCKER_MOUNTS``) and
    NvidiaDockerV2CommandPlugin.updateDockerRunCommand adds (``runtime=nvidia`` and
    ``NVIDIA_VISIBLE_DEVICES`` in the env file) for a GPU container (``runtime``)."""
    dirs = container_directories(local_dirs, log_dirs)
    mounts = [f"{d}:{d}:rw" for d in dirs["log"] + dirs["app"]]
    mounts += [f"{d}:{d}:ro" for d in dirs["filecache"] + dirs["user-filecache"]]
    mounts += [m for m in user_mounts.split(",") if m]
    workdir = f"{dirs['app'][0]}/{CONTAINER_ID}"
    args = {
        "cap-add": ",".join(capabilities),
        "cap-drop": "ALL",
        "detach": "true",
        "docker-command": "run",
        "group-add": UID_GID.split(":")[1],
        "image": image,
        "launch-command": f"bash,{workdir}/launch_container.sh",
        "mounts": ",".join(mounts),
        "name": CONTAINER_ID,
        "net": network,
        "user": UID_GID,
        "workdir": workdir,
    }
    if runtime:
        args["runtime"] = runtime
    lines = ["[docker-command-execution]", *(f"  {k}={v}" for k, v in sorted(args.items()))]
    lines.append(f"  environ={local_dirs[0]}/nmPrivate/{APPLICATION_ID}/{CONTAINER_ID}/docker.{CONTAINER_ID}.env")
    return "\n".join(lines) + "\n"
