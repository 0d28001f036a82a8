"""The Flink user and group on hosts and images must not be root or a group worth root (issue 37).

``discovery.user`` and ``discovery.group`` become the account the node image, cloud-init and
``node/provision.sh`` create (``useradd --system --gid <group> <user>``), own the coordination
directories, and run TaskManagers and the discovery script. A Flink job's code runs as that
account, so any job could become root on the host with ``user: root``, or with a group that can
reach root: ``docker``/``lxd``/``incus-admin``/``libvirt`` (start a privileged container or VM with
the host's disks), ``disk``/``kvm``/``kmem`` (raw block devices, virtual machines, kernel memory),
``shadow`` (password hashes), ``sudo``/``wheel``/``admin`` (sudo rules on common
distributions), ``adm``/``systemd-journal`` (every log, including other users' secrets), ``staff``
(Debian: writes /usr/local, which is on root's PATH), ``sys``/``tty``/``root``. ``video`` and
``render`` stay allowed: AMD GPUs (``/dev/kfd``, ``/dev/dri/renderD*``) need them, and they give
access to GPUs only. docs/hardening.md, "Privileged accounts", lists the reasons.

``provision.sh`` also refuses an existing account with uid 0 or a group with gid 0 at install time
(an alias of root under another name, which no list of names catches).
"""

from __future__ import annotations

from collections.abc import Iterator

from accelplane.errors import Problem
from accelplane.findings import ERROR, declare
from accelplane.model import Spec

PRIVILEGED_USERS = frozenset({"root", "toor"})
"""User names that are root (uid 0) on Linux and the BSD-derived images that keep ``toor``."""

PRIVILEGED_GROUPS = frozenset(
    {
        "root", "wheel", "sudo", "admin", "adm", "systemd-journal", "docker", "lxd", "incus-admin",
        "libvirt", "kvm", "disk", "kmem", "shadow", "staff", "sys", "tty",
    }
)  # fmt: skip
"""Groups whose members can become root or read every secret on a host (see the module text)."""

PRIVILEGED_USER = declare(
    "AP6160", ERROR, "discovery.user is root: every Flink job would run as root on the hosts",
    fix="use an unprivileged account such as flink",
)
PRIVILEGED_GROUP = declare(
    "AP6161", ERROR,
    "discovery.group is a group whose members can become root (docker, disk, sudo, …)",
    fix="use a dedicated group such as flink (video and render are fine for AMD GPUs)",
)  # fmt: skip


def check(spec: Spec) -> Iterator[Problem]:
    """The Flink user is not root and its group is not a privileged one."""
    d = spec.discovery
    if d.user in PRIVILEGED_USERS:
        yield Problem(
            ("discovery", "user"),
            f"{d.user!r} is root: the node image, cloud-init and provision.sh would run TaskManagers and "
            "the discovery script, and so every Flink job's code, as root on every GPU host; use an "
            "unprivileged account such as flink",
            PRIVILEGED_USER,
        )
    if d.group in PRIVILEGED_GROUPS:
        yield Problem(
            ("discovery", "group"),
            f"{d.group!r} is a privileged group: it becomes the Flink user's primary group, and its members "
            "can become root or read every secret on the host (docs/hardening.md, \"Privileged accounts\"), "
            "so every Flink job could; use a dedicated group such as flink",
            PRIVILEGED_GROUP,
        )
