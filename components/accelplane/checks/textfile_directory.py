"""node-exporter's textfile directory on GPU hosts (``monitoring.textfileDirectory``): ``node/provision.sh``
makes it root-owned with the Flink group writing (mode 2775) so the discovery script can write the
GPU-owner metrics (docs/monitoring.md, docs/hardening.md). That hands the directory to every Flink
job's code, so it must be a directory of its own: never a system or shared directory (``/etc``,
``/var/lib``, ``/tmp``, ``/usr/bin``), nor one of accelplane's own (a coordination directory, the
pid root, the discovery script's directories), which have owners and modes of their own.

With YARN's Docker runtime the same directory is also a read-write container mount, which
`accelplane.checks.yarn_docker` already checks with the same system-directory rules (AP6075,
AP6076, AP6078): a path it refuses is reported there only (one root cause, one finding).
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator

from accelplane.checks.discovery_paths import install_dir_problem
from accelplane.checks.yarn_docker import SYSTEM_DIRECTORIES, is_normalised, mount_problem, within
from accelplane.derive.discovery_paths import flink_pid_root, used_coordination_files
from accelplane.derive.monitoring import exports_owner_metrics, host_textfile_directory
from accelplane.derive.yarn_docker import docker_clusters
from accelplane.discovery_install import MODULE_DIR
from accelplane.errors import Problem
from accelplane.findings import ERROR, declare
from accelplane.model import Spec

TEXTFILE_DIRECTORY_UNSAFE = declare(
    "AP7075", ERROR,
    "monitoring.textfileDirectory, which provision.sh makes writable for the Flink group, is a system, "
    "shared or accelplane directory",
    fix="use a directory of node-exporter's own, e.g. /var/lib/prometheus/node-exporter (and pass it to "
    "node-exporter as --collector.textfile.directory)",
)

SHARED_PARENTS = ("/var", "/var/lib", "/var/cache", "/var/log", "/opt", "/srv", "/usr/local", "/mnt", "/media")
"""Directories other software keeps its own directories in: group-writable, their entries could be
replaced (``/var/lib/dpkg``)."""


def directory_problem(spec: Spec, directory: str) -> str | None:
    """Why ``directory`` may not become node-exporter's textfile directory on the hosts, or None."""
    if not is_normalised(directory):
        return f"{directory} is not a normalised path (no '.', '..', '//' or trailing '/')"
    system = next((d for d in SYSTEM_DIRECTORIES if within(directory, d) or within(d, directory)), None)
    if system is not None:
        return f"{directory} is or holds the system directory {system}" if within(system, directory) else (
            f"{directory} is under the system directory {system}"
        )
    unsafe = install_dir_problem(directory)
    if unsafe is not None:
        return f"{unsafe}, which other users can write or the system reads on its own"
    if directory == "/" or directory in SHARED_PARENTS:
        return f"{directory} holds other software's directories"
    own = {posixpath.dirname(f.path) for f in used_coordination_files(spec)}
    own |= {flink_pid_root(spec), spec.discovery.install_dir, MODULE_DIR}
    clash = next((d for d in sorted(own) if within(directory, d) or within(d, directory)), None)
    if clash is not None:
        return f"{directory} is, holds or lies in accelplane's own directory {clash} (another owner and mode)"
    return None


def check(spec: Spec) -> Iterator[Problem]:
    """AP7075 for a textfile directory provision.sh may not take over (nothing without host metrics)."""
    directory = host_textfile_directory(spec)
    if not directory:
        return
    if any(exports_owner_metrics(spec, c) for c in docker_clusters(spec)) and mount_problem(directory, "rw"):
        return  # the YARN Docker mount check reports this path (AP6075/AP6076/AP6078)
    problem = directory_problem(spec, directory)
    if problem is not None:
        yield Problem(
            ("monitoring", "textfileDirectory"),
            f"{problem}; node/provision.sh makes node-exporter's textfile directory root:{spec.discovery.group} "
            "mode 2775 so the discovery script can write the GPU-owner metrics there, which would let every "
            "Flink job's code change it; use a directory of node-exporter's own, e.g. "
            "/var/lib/prometheus/node-exporter (node-exporter's --collector.textfile.directory)",
            TEXTFILE_DIRECTORY_UNSAFE,
        )
