"""Checks that the directories accelplane hands to the Flink user are dedicated ones."""

from __future__ import annotations

import posixpath
from collections.abc import Iterator

from accelplane.derive.discovery_paths import SHARED_DIRECTORIES, prepared_coordination_files
from accelplane.errors import Problem
from accelplane.model import Spec


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
