"""The file names a spec's own names become, and the limit a file name has.

`accelplane render` writes one file per artifact, and a path component longer than the file
system's limit (``NAME_MAX``: 255 bytes on Linux's ext4/xfs/btrfs and on macOS) makes the write fail
with "File name too long". Most rendered names are fixed, or built from names the schema bounds well
below that (Flink cluster names ≤ 45 characters, pools, queues and namespaces ≤ 63). Three kinds of
name are DNS subdomains (≤ 253 characters) and become a file name with a prefix or suffix:

* a pool's host name: the standalone start script ``flink/<cluster>/taskmanagers/<host>.sh``;
* a PriorityClass name: ``kubernetes/priorityclass__<name>.yaml``;
* a native-Kubernetes cluster's service account, with its Role and RoleBinding:
  ``kubernetes/serviceaccount_<namespace>_<account>.yaml`` and the like.

`named_files` lists each of those with the spec path of the name, so a check can refuse a name at
validate time instead of `render` failing half-way through writing the tree.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from accelplane.artifacts import object_file_name
from accelplane.derive.flink_rbac import native_service_accounts
from accelplane.derive.slot_groups import host_script_name
from accelplane.errors import PathTuple
from accelplane.model import Spec

NAME_MAX = 255
"""Bytes in one path component (POSIX ``NAME_MAX`` of the file systems a tree is rendered to)."""

RBAC_KINDS = ("ServiceAccount", "Role", "RoleBinding")
"""The objects accelplane names after a native cluster's service account (`builders.flink_rbac`)."""


@dataclass(frozen=True)
class NamedFile:
    """A file name made from a name in the spec: the name, where it is written, the file name."""

    path: PathTuple
    name: str
    file_name: str

    @property
    def too_long(self) -> bool:
        """True when the file name exceeds ``NAME_MAX`` bytes (UTF-8, as the file system counts)."""
        return len(self.file_name.encode("utf-8")) > NAME_MAX


def named_files(spec: Spec) -> Iterator[NamedFile]:
    """Every rendered file name built from a DNS-subdomain name of the spec (see the module doc)."""
    for pool in spec.node_pools:
        for host in pool.hosts:
            yield NamedFile((*pool.path, "hosts"), host, host_script_name(host))
    if spec.has_platform("kubernetes"):
        for pc in spec.priority_classes:
            yield NamedFile((*pc.path, "name"), pc.name, object_file_name("PriorityClass", None, pc.name))
    for (namespace, account), clusters in native_service_accounts(spec).items():
        for kind in RBAC_KINDS:
            path = clusters[0].field_path("serviceAccount")
            yield NamedFile(path, account, object_file_name(kind, namespace, account))
