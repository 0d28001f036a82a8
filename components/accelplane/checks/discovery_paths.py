"""Checks that the directories accelplane hands to the Flink user are ones accelplane owns."""

from __future__ import annotations

import posixpath
from collections.abc import Iterator

from accelplane.derive.discovery_paths import coordination_dir_problem, used_coordination_files
from accelplane.errors import Problem
from accelplane.findings import ERROR, declare
from accelplane.model import Spec

DISCOVERY_INSTALL_ROOT = declare(
    'AP8001', ERROR, "discovery.installDir is '/'",
    fix='use a dedicated directory',
)
DISCOVERY_INSTALL_NOT_NORMAL = declare(
    'AP8002', ERROR, 'discovery.installDir is not a normalized path',
    fix='write the normalized path',
)
DISCOVERY_PATH_NOT_NORMAL = declare(
    'AP8003', ERROR, 'a coordination file path is not normalized',
    fix='write the normalized path',
)
COORDINATION_DIR_UNSAFE = declare(
    'AP8004', ERROR, "the coordination file's directory cannot be given to the Flink user",
    fix='use e.g. /var/lib/accelplane/<file>',
)
COORDINATION_DIR_HOLDS_SCRIPT = declare(
    'AP8005', ERROR, 'the coordination directory contains the discovery script',
    fix='use a separate directory',
)


def check(spec: Spec) -> Iterator[Problem]:
    """Every coordination file in use, on every platform, is in a directory accelplane owns
    (`accelplane.derive.discovery_paths.coordination_dir_problem`) that does not hold the script."""
    install_dir = spec.discovery.install_dir
    if install_dir == "/":
        yield Problem(
            ("discovery", "installDir"),
            "the discovery script cannot be installed into '/'; use a dedicated directory, e.g. "
            "/opt/flink/plugins/external-resource-gpu", DISCOVERY_INSTALL_ROOT,
        )
    elif posixpath.normpath(install_dir) != install_dir:
        yield Problem(
            ("discovery", "installDir"),
            f"{install_dir!r} is not a normalized path (no '.', '..', '//' or trailing '/'); "
            f"write {posixpath.normpath(install_dir)!r}", DISCOVERY_INSTALL_NOT_NORMAL,
        )
    for f in used_coordination_files(spec):
        if posixpath.normpath(f.path) != f.path:
            yield Problem(
                f.spec_path,
                f"{f.path!r} is not a normalized path (no '.', '..', '//' or trailing '/'); "
                f"write {posixpath.normpath(f.path)!r}", DISCOVERY_PATH_NOT_NORMAL,
            )
            continue
        d = f.directory
        problem = coordination_dir_problem(d)
        if problem is not None:
            yield Problem(
                f.spec_path,
                f"the coordination file's directory {problem}, but accelplane gives it to the Flink user "
                f"({spec.discovery.user}:{spec.discovery.group}, mode 2770) and mounts it into TaskManagers; "
                f"use e.g. /var/lib/accelplane/{posixpath.basename(f.path)}", COORDINATION_DIR_UNSAFE,
            )
        elif d == install_dir or install_dir.startswith(d + "/"):
            yield Problem(
                f.spec_path,
                f"the coordination file's directory {d} contains the discovery script's install directory "
                f"{install_dir}; the Flink user owns the coordination directory and could replace the script, "
                "so use a separate directory, e.g. /var/lib/accelplane/gpu-coordination", COORDINATION_DIR_HOLDS_SCRIPT,
            )
