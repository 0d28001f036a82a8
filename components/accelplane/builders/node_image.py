"""Ship the GPU discovery script into node images and onto GPU hosts.

* ``node-image/`` (when the spec has ``nodeImage``): a Docker build context, ``Dockerfile``,
  ``accelplane_gpu_discovery.py`` (the script) and ``accelplane-gpu-discovery`` (its entry stub),
  that adds python3, nvidia-ml-py and the script to the pinned Flink base image and prepares the
  coordination directories of the Kubernetes clusters.
* ``node/`` (when YARN or standalone GPU pools exist): ``cloud-init.yaml`` (user data),
  ``provision.sh`` (idempotent shell provisioner with the same effect, e.g. for Packer) and
  ``tmpfiles.d/accelplane-gpu.conf`` (the rule both install: coordination directory owned by the
  Flink user, stale coordination file removed at boot).

How the script is installed everywhere on nodes (speed: Python compiles a script run as
``__main__`` on every call, which would double each call's cost): as the module
``MODULE_PATH`` (root-owned, 0644, in a root-owned 0755 directory), byte-compiled at build or
provision time by the node's own python3 into a checked-hash ``.pyc`` beside it, plus the entry
stub ``discovery.entry_stub`` at exactly ``discovery.script_path`` (what Flink's configuration
points at), which runs the module with ``python3 -I -S`` and never writes bytecode. Nothing
writes bytecode at run time. On Kubernetes the discovery ConfigMap mounts its own module over the
image's and its own stub over this one (`accelplane.builders.discovery_configmap`); that stub runs
the ``.pyc`` compiled here exactly when the ConfigMap carries the same script, and otherwise caches
the bytecode per pod (`accelplane.discovery_install.pod_entry_stub`).

Ownership rule (the discovery script refuses a coordination file that is a symlink or owned by
another uid): nothing here ever creates the coordination FILE. Its directory belongs to
``discovery.user:discovery.group`` with mode 2770, the first TaskManager creates the file as
itself, and the tmpfiles rule deletes it at boot (``r!``) instead of recreating it as root.
"""

from __future__ import annotations

import base64
import posixpath
import re
import shlex
from dataclasses import dataclass

import yaml

from accelplane.artifacts import Bundle, FileArtifact
from accelplane.derive.discovery_paths import (
    IMAGE_PLATFORMS,
    CoordinationFile,
    accelplane_base,
    coordination_files,
    flink_pid_root,
    gpu_clusters,
    node_gpu_pools,
    node_platforms,
)
from accelplane.derive.monitoring import host_textfile_directory
from accelplane.digests import sha256
from accelplane.discovery.gpu_discovery import LABELS_SUFFIX
from accelplane.discovery_install import (
    COMPILE_PROGRAM,
    COORDINATION_DIR_MODE,
    FLINK_UID,
    HOST_PYTHON,
    MODULE_NAME,
    MODULE_PATH,
    SCRIPT_NAME,
    entry_stub,
    script_text,
)
from accelplane.model import Spec
from accelplane.templating import render_template

FAMILY = "node-image"
IMAGE_DIR = "node-image"
NODE_DIR = "node"
TMPFILES_PATH = "/etc/tmpfiles.d/accelplane-gpu.conf"
DIR_MODE = COORDINATION_DIR_MODE
VENV = "/opt/accelplane/venv"
IMAGE_PYTHON = f"{VENV}/bin/python3"
MODULE_FILE = f"{MODULE_NAME}.py"
NOLOGIN_SHELL = "/usr/sbin/nologin"
OFFICIAL_FLINK_UID = FLINK_UID

# What may reach a Dockerfile, tmpfiles rule or comment unquoted. The schema's patterns already
# guarantee it for every spec value used; this is the second line of defence.
_SAFE_TOKEN = re.compile(r"[A-Za-z0-9_./:@+-]+")


@dataclass(frozen=True)
class CoordinationDir:
    """A coordination directory and the coordination files in it."""

    path: str
    files: tuple[str, ...]


@dataclass(frozen=True)
class WriteFile:
    """One cloud-init ``write_files`` entry, its content already formatted as a YAML value."""

    path: str
    permissions: str
    content: str
    encoding: str | None = None


def _safe(value: str) -> str:
    if not _SAFE_TOKEN.fullmatch(value):
        raise ValueError(f"unsafe value for a generated node file: {value!r}")
    return value


def docker_string(value: str) -> str:
    """A Dockerfile double-quoted string (LABEL values): escapes quotes, backslashes and ``$``."""
    if any(ord(c) < 0x20 for c in value):
        raise ValueError(f"control character in Dockerfile string: {value!r}")
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$") + '"'


def coordination_dirs(files: list[CoordinationFile]) -> list[CoordinationDir]:
    """Group coordination files by directory, sorted."""
    by_dir: dict[str, list[str]] = {}
    for f in files:
        by_dir.setdefault(_safe(f.directory), []).append(_safe(f.path))
    return [CoordinationDir(d, tuple(sorted(fs))) for d, fs in sorted(by_dir.items())]


def heredoc_delimiter(base: str, text: str) -> str:
    """A quoted-heredoc delimiter that no line of ``text`` equals."""
    lines = set(text.split("\n"))
    delimiter, n = base, 0
    while delimiter in lines:
        n += 1
        delimiter = f"{base}_{n}"
    return delimiter


def _checked_script() -> str:
    text = script_text()
    if not text.startswith("#!/usr/bin/env python3\n"):
        raise RuntimeError("components/accelplane/discovery/gpu_discovery.py must start with '#!/usr/bin/env python3'")
    if not text.endswith("\n"):
        raise RuntimeError("components/accelplane/discovery/gpu_discovery.py must end with a newline")
    return text


def compile_argv(python: str) -> list[str]:
    """Command that byte-compiles the installed module with ``python`` (``COMPILE_PROGRAM``)."""
    return [python, "-I", "-S", "-c", COMPILE_PROGRAM, MODULE_PATH]


def _pools_summary(spec: Spec) -> str:
    parts = [f"{p.name} ({p.platform}, {p.nodes} nodes)" for p in node_gpu_pools(spec)]
    return _one_line(", ".join(parts))


def _one_line(text: str) -> str:
    if any(ord(c) < 0x20 for c in text):
        raise ValueError(f"control character in a generated comment: {text!r}")
    return text


def dockerfile(spec: Spec) -> str:
    """The node image's Dockerfile."""
    assert spec.node_image is not None
    d = spec.discovery
    dirs = coordination_dirs(coordination_files(spec, IMAGE_PLATFORMS))
    labels = {
        "io.accelplane.cluster": spec.name,
        "io.accelplane.discovery-script.path": d.script_path,
        "io.accelplane.discovery-script.sha256": sha256(_checked_script()),
        "org.opencontainers.image.base.name": spec.node_image.base_image,
    }
    return render_template(
        "node-image/Dockerfile.j2",
        cluster=_safe(spec.name),
        base_image=_safe(spec.node_image.base_image),
        script_path=_safe(d.script_path),
        labels=[f"{k}={docker_string(v)}" for k, v in sorted(labels.items())],
        nvidia_ml_py_version=_safe(spec.node_image.nvidia_ml_py_version),
        user=_safe(d.user),
        group=_safe(d.group),
        default_uid=OFFICIAL_FLINK_UID,
        missing_account_message=(
            f"the base image has no user {d.user} with the uid in ACCELPLANE_FLINK_UID or no group {d.group}"
            " (discovery.user, discovery.group; --build-arg ACCELPLANE_FLINK_UID=<uid>)"
        ),
        venv=VENV,
        module_file=MODULE_FILE,
        module_path=MODULE_PATH,
        compile_argv=compile_argv(IMAGE_PYTHON),
        dir_mode=DIR_MODE,
        parent_dirs=parent_dirs([c.path for c in dirs]),
        coordination_dirs=[c.path for c in dirs],
    )


def parent_dirs(directories: list[str]) -> list[str]:
    """Directories to create (root-owned, 0755) before ``directories``, parents first: every
    ancestor below its allowlisted root that is not itself one of ``directories``."""
    wanted = set(directories)
    out: set[str] = set()
    for d in directories:
        base = accelplane_base(d)
        parent = posixpath.dirname(d)
        while len(parent) >= len(base) and parent not in wanted:
            out.add(parent)
            parent = posixpath.dirname(parent)
    return sorted(out)


PID_ROOT_MODE = "755"
"""The pid root (`flink_pid_root`): only the Flink user writes it, everyone may read pids."""


def pid_root(spec: Spec) -> str:
    """`flink_pid_root` when a standalone GPU cluster in coordination mode may run on the hosts
    (its start scripts keep their pid files below it), else ``""``."""
    if any(c.coordination for c in gpu_clusters(spec, ("standalone",))):
        return flink_pid_root(spec)
    return ""


METRICS_DIR_MODE = "2775"
"""node-exporter's textfile directory on hosts (`metrics_dir`), root-owned with the Flink group:
the discovery script writes the owner metrics through the group (temporary file, rename), every
user reads (node-exporter runs as its own user), nobody else writes; setgid, so the files get the
group too. Root owns it, not the Flink user, so job code cannot loosen its mode."""


def metrics_dir(spec: Spec) -> str:
    """node-exporter's textfile-collector directory ``provision.sh`` prepares (``""`` when no GPU
    cluster on YARN/standalone hosts writes owner metrics: monitoring off, or no coordination)."""
    directory = host_textfile_directory(spec)
    return _safe(directory) if directory else ""


def tmpfiles_rule(spec: Spec, dirs: list[CoordinationDir]) -> str:
    """The ``tmpfiles.d`` file: one ``d`` line per coordination directory, one ``r!`` per file
    (and its owner-labels side file), the pid root when standalone clusters need one, and
    node-exporter's textfile directory when host clusters write owner metrics (`metrics_dir`)."""
    return render_template(
        "node/accelplane-gpu.tmpfiles.j2",
        pid_root=pid_root(spec),
        pid_root_mode=PID_ROOT_MODE,
        metrics_dir=metrics_dir(spec),
        metrics_dir_mode=METRICS_DIR_MODE,
        labels_suffix=LABELS_SUFFIX,
        cluster=_safe(spec.name),
        tmpfiles_path=TMPFILES_PATH,
        coordination_dirs=dirs,
        dir_mode=DIR_MODE,
        user=_safe(spec.discovery.user),
        group=_safe(spec.discovery.group),
    )


def account_commands(spec: Spec) -> list[str]:
    """Shell commands that create the group and system user when missing (cloud-init ``runcmd``;
    ``provision.sh`` runs the same commands)."""
    user, group = shlex.quote(spec.discovery.user), shlex.quote(spec.discovery.group)
    return [
        f"getent group {group} >/dev/null || groupadd --system {group}",
        f"getent passwd {user} >/dev/null || useradd --system --gid {group} --no-create-home"
        f" --home-dir /nonexistent --shell {NOLOGIN_SHELL} {user}",
    ]


def literal_block(text: str, indent: int) -> str | None:
    """``text`` as a YAML literal block scalar (``|``) indented by ``indent`` spaces, or None when
    it cannot be written that way unchanged (then callers fall back to base64)."""
    if (
        not text.endswith("\n")
        or text.endswith("\n\n")
        or text.startswith((" ", "\n"))
        or any(not (c.isprintable() or c in "\t\n") for c in text)
    ):
        return None
    pad = " " * indent
    return "|\n" + "".join(f"{pad}{line}\n" if line else "\n" for line in text[:-1].split("\n")).rstrip("\n")


def cloud_init(spec: Spec, tmpfiles_text: str) -> str:
    """``#cloud-config`` user data equivalent to ``provision.sh``."""
    d = spec.discovery
    entries = []
    files = (
        (MODULE_PATH, "0644", _checked_script()),
        (d.script_path, "0755", entry_stub(HOST_PYTHON)),
        (TMPFILES_PATH, "0644", tmpfiles_text),
    )
    for path, mode, text in files:
        block = literal_block(text, 6)
        if block is None:
            entries.append(WriteFile(path, mode, base64.b64encode(text.encode()).decode(), "b64"))
        else:
            entries.append(WriteFile(path, mode, block))
    out = render_template(
        "node/cloud-init.yaml.j2",
        cluster=_safe(spec.name),
        pools_summary=_pools_summary(spec),
        script_path=_safe(d.script_path),
        tmpfiles_path=TMPFILES_PATH,
        user=_safe(d.user),
        group=_safe(d.group),
        dir_mode=DIR_MODE,
        metrics_dir=metrics_dir(spec),
        metrics_dir_mode=METRICS_DIR_MODE,
        write_files=entries,
        module_path=MODULE_PATH,
        python=HOST_PYTHON,
        runcmd=[
            *account_commands(spec),
            compile_argv(HOST_PYTHON),
            ["systemd-tmpfiles", "--create", TMPFILES_PATH],
        ],
    )
    parsed = yaml.safe_load(out)
    for entry, (_, _, text) in zip(parsed["write_files"], files, strict=True):
        got = entry["content"] if "encoding" not in entry else base64.b64decode(entry["content"]).decode()
        if got != text:
            raise RuntimeError(f"cloud-init write_files content for {entry['path']} does not round-trip")
    return out


def provision_script(spec: Spec, dirs: list[CoordinationDir], tmpfiles_text: str) -> str:
    """``provision.sh``: the same changes as the cloud-init user data, idempotent."""
    d = spec.discovery
    script = _checked_script()
    stub = entry_stub(HOST_PYTHON)
    if not tmpfiles_text.endswith("\n"):
        raise RuntimeError("tmpfiles rule must end with a newline")
    return render_template(
        "node/provision.sh.j2",
        cluster=_safe(spec.name),
        pools_summary=_pools_summary(spec),
        script_path=_safe(d.script_path),
        script_sha256=sha256(script),
        tmpfiles_path=TMPFILES_PATH,
        tmpfiles_sha256=sha256(tmpfiles_text),
        user=_safe(d.user),
        group=_safe(d.group),
        dir_mode=DIR_MODE,
        coordination_dirs=[c.path for c in dirs],
        coordination_files=[f for c in dirs for f in c.files],
        pid_root=pid_root(spec),
        pid_root_mode=PID_ROOT_MODE,
        metrics_dir=metrics_dir(spec),
        metrics_dir_mode=METRICS_DIR_MODE,
        script_text=script,
        script_delimiter=heredoc_delimiter("ACCELPLANE_SCRIPT_EOF", script),
        module_path=MODULE_PATH,
        python=HOST_PYTHON,
        stub_sha256=sha256(stub),
        stub_text=stub,
        stub_delimiter=heredoc_delimiter("ACCELPLANE_STUB_EOF", stub),
        compile_program=COMPILE_PROGRAM,
        tmpfiles_text=tmpfiles_text,
        tmpfiles_delimiter=heredoc_delimiter("ACCELPLANE_TMPFILES_EOF", tmpfiles_text),
    )


def build(spec: Spec) -> Bundle:
    """``node-image/`` when ``nodeImage`` is set; ``node/`` when YARN/standalone GPU pools exist."""
    bundle = Bundle()
    if spec.node_image is not None:
        bundle.files += [
            FileArtifact(f"{IMAGE_DIR}/Dockerfile", dockerfile(spec), 0o644, FAMILY),
            FileArtifact(f"{IMAGE_DIR}/{MODULE_FILE}", _checked_script(), 0o644, FAMILY),
            FileArtifact(f"{IMAGE_DIR}/{SCRIPT_NAME}", entry_stub(IMAGE_PYTHON), 0o755, FAMILY),
        ]
    platforms = node_platforms(spec)
    if platforms:
        dirs = coordination_dirs(coordination_files(spec, platforms))
        tmpfiles_text = tmpfiles_rule(spec, dirs)
        bundle.files += [
            FileArtifact(f"{NODE_DIR}/cloud-init.yaml", cloud_init(spec, tmpfiles_text), 0o644, FAMILY),
            FileArtifact(
                f"{NODE_DIR}/provision.sh", provision_script(spec, dirs, tmpfiles_text), 0o755, FAMILY
            ),
            FileArtifact(
                f"{NODE_DIR}/tmpfiles.d/{posixpath.basename(TMPFILES_PATH)}", tmpfiles_text, 0o644, FAMILY
            ),
        ]
    return bundle
