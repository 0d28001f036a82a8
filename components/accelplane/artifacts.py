"""Plain-data artifacts that builders return and both the renderer and Pulumi consume."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

CLUSTER_SCOPED = ""


@dataclass(frozen=True)
class K8sObject:
    """One Kubernetes object as a plain manifest dict, tagged with the family that built it."""

    manifest: dict[str, Any]
    family: str
    text: str | None = field(default=None, compare=False, repr=False)
    """The manifest as `accelplane.yaml_io.dump_yaml` serialises it, where the builder serialised it
    already (an operator cluster's FlinkDeployment, built with its pod templates represented once);
    None: `accelplane.render.bundle_files` serialises the manifest."""

    @property
    def api_version(self) -> str:
        """apiVersion of the manifest."""
        return str(self.manifest["apiVersion"])

    @property
    def kind(self) -> str:
        """kind of the manifest."""
        return str(self.manifest["kind"])

    @property
    def name(self) -> str:
        """metadata.name (always explicit: accelplane never lets Pulumi auto-name)."""
        return str(self.manifest["metadata"]["name"])

    @property
    def namespace(self) -> str | None:
        """metadata.namespace, or None for cluster-scoped objects."""
        ns = self.manifest["metadata"].get("namespace")
        return str(ns) if ns is not None else None

    @property
    def key(self) -> tuple[str, str, str, str]:
        """Identity: (apiVersion group, kind, namespace, name)."""
        return (self.api_version.split("/")[0], self.kind, self.namespace or "", self.name)

    @property
    def filename(self) -> str:
        """Deterministic file name under ``kubernetes/``: ``<kind>_<namespace>_<name>.yaml`` (namespace empty when cluster-scoped)."""
        return object_file_name(self.kind, self.namespace, self.name)


def object_file_name(kind: str, namespace: str | None, name: str) -> str:
    """The file a Kubernetes object is rendered to under ``kubernetes/``: ``<kind>_<namespace>_<name>.yaml``
    (namespace empty when cluster-scoped); checks ask it to keep file names within their limit."""
    return f"{kind.lower()}_{namespace or CLUSTER_SCOPED}_{name}.yaml"


@dataclass(frozen=True)
class FileArtifact:
    """A rendered file: POSIX path relative to the output directory, its text and mode.

    ``in_object``: the file's document is also embedded in one of the bundle's Kubernetes objects
    (an operator cluster's pod template in its FlinkDeployment, the rule file in the
    PrometheusRule), so a Kubernetes API receives it; the Pulumi program does not carry its text in
    the stack outputs a second time (a file whose text is a ConfigMap's data value is recognised
    without the flag)."""

    path: str
    text: str
    mode: int = 0o644
    family: str = ""
    in_object: bool = False


@dataclass
class Bundle:
    """Everything one family (or the whole spec) produces."""

    objects: list[K8sObject] = field(default_factory=list)
    files: list[FileArtifact] = field(default_factory=list)

    def extend(self, other: Bundle) -> None:
        """Append another bundle's artifacts."""
        self.objects.extend(other.objects)
        self.files.extend(other.files)

    def sorted(self) -> Bundle:
        """A copy in canonical order (objects by identity, files by path)."""
        return Bundle(sorted(self.objects, key=lambda o: o.key), sorted(self.files, key=lambda f: f.path))


def k8s_object(
    api_version: str,
    kind: str,
    name: str,
    *,
    family: str,
    labels: dict[str, str],
    namespace: str | None = None,
    annotations: dict[str, str] | None = None,
    body: dict[str, Any] | None = None,
) -> K8sObject:
    """Build a manifest with the standard metadata layout."""
    metadata: dict[str, Any] = {"name": name, "labels": dict(labels)}
    if namespace is not None:
        metadata["namespace"] = namespace
    if annotations:
        metadata["annotations"] = dict(annotations)
    manifest: dict[str, Any] = {"apiVersion": api_version, "kind": kind, "metadata": metadata}
    manifest.update(body or {})
    return K8sObject(manifest, family)


def bundle_of(objects: Iterable[K8sObject] = (), files: Iterable[FileArtifact] = ()) -> Bundle:
    """Convenience constructor."""
    return Bundle(list(objects), list(files))
