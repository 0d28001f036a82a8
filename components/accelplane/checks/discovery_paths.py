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
DISCOVERY_INSTALL_UNSAFE = declare(
    'AP8060', ERROR,
    'discovery.installDir is a directory other users can write or the system reads on its own '
    '(/tmp, /dev/shm, /etc/…, /proc/…)',
    fix='install into a root-owned directory of its own, e.g. /opt/flink/plugins/external-resource-gpu',
)

UNSAFE_INSTALL_TREES = (
    # any user can create entries here (1777), or re-create the path after a reboot clears it
    "/tmp", "/var/tmp", "/dev", "/run/shm", "/run/lock", "/var/lock", "/var/crash", "/run/user",
    "/var/run",
    # kernel interfaces, not directories
    "/proc", "/sys",
    # read on their own by the system: configuration, cron, sudoers, motd, profile, boot
    "/etc", "/boot", "/root", "/home", "/var/spool", "/var/mail", "/lost+found",
    # run or parsed by systemd, udev, the kernel, PAM or polkit without anyone calling them
    "/usr/lib/systemd", "/lib/systemd", "/usr/lib/udev", "/lib/udev", "/usr/lib/modules", "/lib/modules",
    "/usr/lib/modules-load.d", "/usr/lib/modprobe.d", "/usr/lib/sysctl.d", "/usr/lib/tmpfiles.d",
    "/usr/lib/binfmt.d", "/usr/lib/environment.d", "/usr/lib/kernel", "/usr/lib/NetworkManager",
    "/usr/lib/security", "/usr/lib/polkit-1", "/usr/share/polkit-1",
)  # fmt: skip
"""Trees the discovery script may not be installed in or below (docs/hardening.md, "Install
directory"). The script and its entry stub run as the Flink user on every TaskManager start;
installed where another local user can write (or re-create the directory after a reboot), that
user runs code as the Flink user; installed where the system reads files on its own, the files
become configuration (``/etc/sudoers.d``, ``/etc/cron.d``) or programs (systemd generators,
``/etc/update-motd.d``) of root. ``node/provision.sh`` checks the real directories at install
time as well (`check_install_path`: every directory on the path owned by root and writable by
nobody else)."""


def install_dir_problem(install_dir: str) -> str | None:
    """Why the discovery script may not be installed into ``install_dir`` (a normalized absolute
    path), or None when it may."""
    for tree in UNSAFE_INSTALL_TREES:
        if install_dir == tree or install_dir.startswith(tree + "/"):
            return f"{install_dir} is in {tree}"
    return None


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
    elif (unsafe := install_dir_problem(install_dir)) is not None:
        yield Problem(
            ("discovery", "installDir"),
            f"{unsafe}, which other local users can write (or re-create after a reboot) or the system "
            "reads on its own; the discovery script there would run their code as the Flink user, or "
            "become root's configuration; install it into a root-owned directory of its own, e.g. "
            "/opt/flink/plugins/external-resource-gpu", DISCOVERY_INSTALL_UNSAFE,
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
