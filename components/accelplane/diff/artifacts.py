"""Per-artifact differs: rendered file trees → artifact diffs with field/key-level changes.

Dispatch is by path, never by family, so every family's output is covered the day it lands:

* ``kubernetes/*.yaml`` – Kubernetes objects keyed by identity read from the content
  (API group, kind, namespace, name), deep field diff (`accelplane.diff.values`).
* ``*.xml``, ``config.yaml``/``flink-conf.yaml``, ``*.cfg`` – key diffs (`accelplane.diff.parsers`
  reads them).
* other ``*.yaml`` / ``*.yml`` – structured YAML diff; everything else – unified text diff.

Multi-line strings inside objects (ConfigMap ``data`` entries) are dispatched the same way by their
key name. Whenever a structured differ finds nothing but the bytes differ (comments, formatting),
the text diff is shown instead, so a difference is never hidden. Renamed artifacts are paired by
`accelplane.diff.pairing`.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from accelplane.diff.changes import (
    KIND_ORDER,
    ArtifactDiff,
    Change,
    DiffInputError,
    FileEntry,
    Status,
    Tree,
    classify,
)
from accelplane.diff.pairing import hash_stem, pair_renames
from accelplane.diff.parsers import (
    flatten_yaml_config,
    parse_flink_legacy,
    parse_hadoop_xml,
    parse_ini,
    yaml_docs,
)
from accelplane.diff.values import diff_content, diff_values, unified
from accelplane.digests import short_sha256
from accelplane.lifecycle import group_of
from accelplane.yaml_io import dump_yaml

# -- trees ----------------------------------------------------------------------------------------

K8sId = tuple[str, str, str, str]


def k8s_identity(manifest: Any) -> K8sId | None:
    """(API group, kind, namespace, name) of a manifest, or None when it is not an object."""
    if not isinstance(manifest, dict):
        return None
    meta = manifest.get("metadata")
    api, kind = manifest.get("apiVersion"), manifest.get("kind")
    if not isinstance(meta, dict) or not isinstance(api, str) or not isinstance(kind, str):
        return None
    name = meta.get("name")
    if not isinstance(name, str):
        return None
    ns = meta.get("namespace")
    return (group_of(api), kind, str(ns) if ns is not None else "", name)


def k8s_title(ident: K8sId) -> str:
    """``Queue streaming`` / ``ConfigMap kube-system/nvidia-plugin``."""
    _, kind, ns, name = ident
    return f"{kind} {ns}/{name}" if ns else f"{kind} {name}"


@dataclass(frozen=True)
class _Obj:
    ident: K8sId
    manifest: dict[str, Any]
    path: str


def _split_tree(tree: Tree, label: str) -> tuple[dict[K8sId, _Obj], Tree]:
    """Kubernetes objects keyed by identity, and every other file."""
    objects: dict[K8sId, _Obj] = {}
    files: Tree = {}
    for path, (content, mode) in tree.items():
        if classify(path) == "kubernetes" and isinstance(content, str):
            docs = yaml_docs(content)
            idents = [k8s_identity(d) for d in docs] if docs is not None else []
            if docs and all(i is not None for i in idents):
                for doc, ident in zip(docs, idents, strict=True):
                    assert ident is not None
                    if ident in objects:
                        raise DiffInputError(
                            f"{label}: {k8s_title(ident)} ({ident[0] or 'core'}) is defined twice "
                            f"({objects[ident].path}, {path})"
                        )
                    objects[ident] = _Obj(ident, doc, path)
                continue
        files[path] = (content, mode)
    return objects, files


def _object_body_text(obj: _Obj) -> str:
    body = dict(obj.manifest)
    meta = dict(body.get("metadata", {}))
    meta.pop("name", None)
    meta.pop("namespace", None)
    body["metadata"] = meta
    return dump_yaml(body).replace(obj.ident[3], "")


def _k8s_artifacts(old: dict[K8sId, _Obj], new: dict[K8sId, _Obj]) -> list[ArtifactDiff]:
    out: list[ArtifactDiff] = []
    for ident in sorted(set(old) & set(new)):
        o, n = old[ident], new[ident]
        changes = diff_values(o.manifest, n.manifest)
        if changes:
            out.append(_k8s_diff("changed", o, n, changes))
    removed = [old[i] for i in sorted(set(old) - set(new))]
    added = [new[i] for i in sorted(set(new) - set(old))]
    pairs = pair_renames(
        removed,
        added,
        group=lambda o: (o.ident[0], o.ident[1]),
        name=lambda o: o.ident[3],
        text=_object_body_text,
    )
    paired_old = {id(o) for o, _ in pairs}
    paired_new = {id(n) for _, n in pairs}
    for o, n in pairs:
        out.append(_k8s_diff("renamed", o, n, diff_values(o.manifest, n.manifest)))
    for o in removed:
        if id(o) not in paired_old:
            out.append(_k8s_diff("removed", o, None, []))
    for n in added:
        if id(n) not in paired_new:
            out.append(_k8s_diff("added", None, n, []))
    return out


def _k8s_diff(status: Status, old: _Obj | None, new: _Obj | None, changes: list[Change]) -> ArtifactDiff:
    main = new or old
    assert main is not None
    text: list[str] = []
    if status == "added":
        text = unified("", dump_yaml(main.manifest), "/dev/null", f"b/{main.path}")
    elif status == "removed":
        text = unified(dump_yaml(main.manifest), "", f"a/{main.path}", "/dev/null")
    return ArtifactDiff(
        kind="kubernetes",
        ident=k8s_title(main.ident),
        status=status,
        old_path=old.path if old else None,
        new_path=new.path if new else None,
        old_ident=k8s_title(old.ident) if old and status == "renamed" else None,
        api_version=str(main.manifest["apiVersion"]),
        changes=tuple(changes),
        text_diff=tuple(text),
        old_data=old.manifest if old else None,
        new_data=new.manifest if new else None,
        sort_key=(main.ident[0], main.ident[1], main.ident[2], main.ident[3]),
    )


def _file_kind(path: str, old: FileEntry | None, new: FileEntry | None) -> str:
    contents = [e[0] for e in (old, new) if e is not None]
    if any(isinstance(c, bytes) for c in contents):
        return "binary"
    return classify(path)


def _parsed_data(kind: str, path: str, content: str | bytes | None) -> Any:
    """Parsed key map of a file (for the impact summary), or None."""
    if not isinstance(content, str):
        return None
    if kind == "hadoop-xml":
        props = parse_hadoop_xml(content)
        return {k: v["value"] for k, v in props.items()} if props is not None else None
    if kind == "flink-config":
        if posixpath.basename(path).lower() == "flink-conf.yaml":
            return parse_flink_legacy(content)
        return flatten_yaml_config(content)
    if kind == "ini":
        return parse_ini(content)
    return None


def _file_artifact(
    status: Status, old_path: str | None, new_path: str | None, old: FileEntry | None, new: FileEntry | None
) -> ArtifactDiff | None:
    path = new_path or old_path
    assert path is not None
    kind = _file_kind(path, old, new)
    changes: list[Change] = []
    text: list[str] = []
    note = ""
    old_label = f"a/{old_path}" if old_path else "/dev/null"
    new_label = f"b/{new_path}" if new_path else "/dev/null"
    if kind == "binary":
        if old is None or new is None or old[0] != new[0]:
            changes.append(
                Change(
                    "added" if old is None else "removed" if new is None else "changed",
                    "(content)",
                    "content",
                    old=f"sha256:{short_sha256(old[0], 16)} ({len(old[0])} bytes)" if old else None,
                    new=f"sha256:{short_sha256(new[0], 16)} ({len(new[0])} bytes)" if new else None,
                )
            )
    else:
        o_text = str(old[0]) if old else ""
        n_text = str(new[0]) if new else ""
        if old is None or new is None:
            text = unified(o_text, n_text, old_label, new_label)
        else:
            changes, text = diff_content(kind, path, o_text, n_text, old_label, new_label)
            if text and kind != "text":
                note = "no key-level changes: comments or formatting only, or not parseable as this kind"
    if old is not None and new is not None and old[1] != new[1]:
        changes.append(Change("changed", "(file mode)", "mode", old=f"{old[1]:04o}", new=f"{new[1]:04o}"))
    if status == "changed" and not changes and not text:
        return None
    return ArtifactDiff(
        kind=kind,
        ident=path,
        status=status,
        old_path=old_path,
        new_path=new_path,
        old_ident=old_path if status == "renamed" else None,
        changes=tuple(changes),
        text_diff=tuple(text),
        note=note,
        old_data=_parsed_data(kind, old_path or path, old[0] if old else None),
        new_data=_parsed_data(kind, path, new[0] if new else None),
        sort_key=(path,),
    )


def _file_artifacts(old: Tree, new: Tree) -> list[ArtifactDiff]:
    out: list[ArtifactDiff] = []
    for path in sorted(set(old) & set(new)):
        a = _file_artifact("changed", path, path, old[path], new[path])
        if a is not None:
            out.append(a)
    removed = sorted(set(old) - set(new))
    added = sorted(set(new) - set(old))

    def text_of(p: str) -> str:
        content = old[p][0] if p in old else new[p][0]
        return content if isinstance(content, str) else short_sha256(content, 16)

    pairs = pair_renames(
        removed,
        added,
        group=lambda p: (classify(p), posixpath.basename(hash_stem(p))),
        name=lambda p: p,
        text=text_of,
    )
    for o, n in pairs:
        a = _file_artifact("renamed", o, n, old[o], new[n])
        assert a is not None
        out.append(a)
    paired_old = {o for o, _ in pairs}
    paired_new = {n for _, n in pairs}
    for p in removed:
        if p not in paired_old:
            r = _file_artifact("removed", p, None, old[p], None)
            assert r is not None
            out.append(r)
    for p in added:
        if p not in paired_new:
            r = _file_artifact("added", None, p, None, new[p])
            assert r is not None
            out.append(r)
    return out


def diff_trees(old: Tree, new: Tree, old_label: str = "OLD", new_label: str = "NEW") -> list[ArtifactDiff]:
    """Every artifact that differs between two rendered trees, grouped by kind, in stable order."""
    old_objs, old_files = _split_tree(old, old_label)
    new_objs, new_files = _split_tree(new, new_label)
    artifacts = _k8s_artifacts(old_objs, new_objs) + _file_artifacts(old_files, new_files)
    return sorted(artifacts, key=lambda a: (KIND_ORDER.index(a.kind), a.sort_key, a.status))


def iter_changes(artifacts: Iterable[ArtifactDiff]) -> Iterable[tuple[ArtifactDiff, Change]]:
    """Every (artifact, change) pair."""
    for a in artifacts:
        for c in a.changes:
            yield a, c


def k8s_manifests(tree: Tree) -> list[dict[str, Any]]:
    """Every Kubernetes object of a tree (files that do not parse as objects are skipped)."""
    objects, _ = _split_tree(tree, "")
    return [o.manifest for o in objects.values()]
