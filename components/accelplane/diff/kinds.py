"""Per-kind differs: rendered file trees → artifact diffs with field/key-level changes.

Dispatch is by path, never by family, so every family's output is covered the day it lands:

* ``kubernetes/*.yaml`` – Kubernetes objects keyed by identity read from the content
  (API group, kind, namespace, name), deep field diff; lists of named dicts (containers, volumes,
  tolerations, env …) are matched by ``name``/``key``/… and other lists element by element.
* ``*.xml`` – Hadoop ``<configuration>`` properties by name (other XML: text diff).
* ``config.yaml`` (flat or nested, flattened to dotted keys) and legacy ``flink-conf.yaml``
  (``key: value`` lines, ``#`` comments) – key diff.
* ``*.cfg`` – INI style (``[section]`` + ``key=value``; keys before any section are global).
* other ``*.yaml`` / ``*.yml`` – structured YAML diff; everything else – unified text diff.

Multi-line strings inside objects (ConfigMap ``data`` entries) are dispatched the same way by their
key name, so a ``config.yaml`` inside a ConfigMap diffs key by key. Whenever a structured differ
finds nothing but the bytes differ (comments, formatting), the text diff is shown instead, so a
difference is never hidden.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import json
import posixpath
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

import yaml

from accelplane.yaml_io import dump_yaml

Op = Literal["added", "removed", "changed"]
Status = Literal["added", "removed", "changed", "renamed"]
FileEntry = tuple[str | bytes, int]
Tree = dict[str, FileEntry]

KIND_TITLES: dict[str, str] = {
    "kubernetes": "Kubernetes objects",
    "hadoop-xml": "Hadoop XML properties",
    "flink-config": "Flink / YAML config keys",
    "ini": "INI-style config",
    "yaml": "YAML documents",
    "text": "Text files",
    "binary": "Binary files",
}
KIND_ORDER = tuple(KIND_TITLES)
EMBED_SEPARATOR = " :: "
T = TypeVar("T")
NAME_SIMILARITY = 0.6
CONTENT_SIMILARITY = 0.5


class DiffInputError(Exception):
    """A side cannot be compared (e.g. two objects with the same identity): exit 2."""


@dataclass(frozen=True)
class Change:
    """One field/key-level change inside an artifact."""

    op: Op
    path: str
    leaf: str
    old: Any = None
    new: Any = None
    text_diff: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """Plain data for ``--format json``."""
        out: dict[str, Any] = {"op": self.op, "path": self.path, "key": self.leaf}
        if self.text_diff:
            out["text_diff"] = list(self.text_diff)
        else:
            if self.op != "added":
                out["old"] = _jsonable(self.old)
            if self.op != "removed":
                out["new"] = _jsonable(self.new)
        return out


@dataclass(frozen=True)
class ArtifactDiff:
    """Differences of one artifact: a Kubernetes object or a file."""

    kind: str
    ident: str
    status: Status
    old_path: str | None
    new_path: str | None
    old_ident: str | None = None
    api_version: str | None = None
    changes: tuple[Change, ...] = ()
    text_diff: tuple[str, ...] = ()
    note: str = ""
    old_data: Any = field(default=None, compare=False, repr=False)
    new_data: Any = field(default=None, compare=False, repr=False)
    sort_key: tuple[Any, ...] = field(default=(), compare=False, repr=False)

    @property
    def title(self) -> str:
        """One-line name: ``Queue streaming`` or ``old → new`` for renames."""
        if self.status == "renamed" and self.old_ident and self.old_ident != self.ident:
            return f"{self.old_ident} → {self.ident}"
        return self.ident

    def to_json(self) -> dict[str, Any]:
        """Plain data for ``--format json``."""
        out: dict[str, Any] = {
            "kind": self.kind,
            "id": self.ident,
            "status": self.status,
            "old_path": self.old_path,
            "new_path": self.new_path,
        }
        if self.old_ident is not None:
            out["old_id"] = self.old_ident
        if self.api_version is not None:
            out["api_version"] = self.api_version
        if self.note:
            out["note"] = self.note
        out["changes"] = [c.to_json() for c in self.changes]
        if self.text_diff:
            out["text_diff"] = list(self.text_diff)
        return out


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


# -- classification ---------------------------------------------------------------------------


def classify(path: str) -> str:
    """Artifact kind of a rendered file (or of a ConfigMap data key) from its path alone."""
    base = posixpath.basename(path)
    lower = base.lower()
    if path.startswith("kubernetes/") and lower.endswith((".yaml", ".yml")):
        return "kubernetes"
    if lower in ("config.yaml", "flink-conf.yaml"):
        return "flink-config"
    if lower.endswith(".xml"):
        return "hadoop-xml"
    if lower.endswith(".cfg"):
        return "ini"
    if lower.endswith((".yaml", ".yml")):
        return "yaml"
    return "text"


# -- canonical values and paths -----------------------------------------------------------------


def _canon(value: Any) -> Any:
    """Hashable, type-strict canonical form (``1`` ≠ ``True`` ≠ ``"1"``; dict order ignored)."""
    if isinstance(value, dict):
        return ("d", tuple(sorted((str(k), _canon(v)) for k, v in value.items())))
    if isinstance(value, list | tuple):
        return ("l", tuple(_canon(v) for v in value))
    return (
        type(value).__name__,
        value if isinstance(value, str | int | float | bool) or value is None else str(value),
    )


def same(a: Any, b: Any) -> bool:
    """Strict structural equality."""
    return bool(_canon(a) == _canon(b))


@dataclass(frozen=True)
class Sel:
    """A list element selector in a field path: ``[name=x]`` or ``[3]``."""

    label: str


Seg = str | Sel
_IDENT = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$-]*$")


def format_path(segs: Sequence[Seg]) -> str:
    """``spec.template.spec.containers[name=plugin].image``, ``spec.capability["nvidia.com/gpu"]``."""
    out = ""
    for s in segs:
        if isinstance(s, Sel):
            out += s.label
        elif _IDENT.match(s):
            out += f".{s}" if out else s
        else:
            out += f"[{json.dumps(s, ensure_ascii=False)}]"
    return out or "<root>"


def _leaf(segs: Sequence[Seg]) -> str:
    for s in reversed(segs):
        if isinstance(s, str):
            return s
    return ""


# -- deep structural diff -----------------------------------------------------------------------

_LIST_KEYS: tuple[tuple[str, ...], ...] = (
    ("name",),
    ("key",),
    ("key", "effect"),
    ("key", "operator", "value", "effect"),
    ("mountPath",),
    ("devicePath",),
    ("containerPort", "protocol"),
    ("containerPort",),
)


def _list_identity(old: list[Any], new: list[Any]) -> tuple[str, ...] | None:
    items = old + new
    if not items or not all(isinstance(i, dict) for i in items):
        return None
    for fields in _LIST_KEYS:
        if not all(all(isinstance(i.get(f), str | int) for f in fields) for i in items):
            continue
        if all(len({tuple(i[f] for f in fields) for i in side}) == len(side) for side in (old, new)):
            return fields
    return None


def _sel(fields: tuple[str, ...], values: tuple[Any, ...]) -> Sel:
    return Sel("[" + ",".join(f"{f}={v}" for f, v in zip(fields, values, strict=True)) + "]")


def diff_values(old: Any, new: Any, segs: Sequence[Seg] = ()) -> list[Change]:
    """Every change from ``old`` to ``new`` as field-level changes (deterministic order)."""
    out: list[Change] = []
    _diff(old, new, list(segs), out)
    return out


def _diff(old: Any, new: Any, segs: list[Seg], out: list[Change]) -> None:
    if same(old, new):
        return
    if isinstance(old, dict) and isinstance(new, dict):
        for k in list(old) + [k for k in new if k not in old]:
            key = k if isinstance(k, str) else str(k)
            if k not in new:
                out.append(Change("removed", format_path([*segs, key]), key, old=old[k]))
            elif k not in old:
                out.append(Change("added", format_path([*segs, key]), key, new=new[k]))
            else:
                _diff(old[k], new[k], [*segs, key], out)
        return
    if isinstance(old, list) and isinstance(new, list):
        _diff_list(old, new, segs, out)
        return
    if isinstance(old, str) and isinstance(new, str) and ("\n" in old or "\n" in new):
        _diff_embedded(old, new, segs, out)
        return
    out.append(Change("changed", format_path(segs), _leaf(segs), old=old, new=new))


def _diff_list(old: list[Any], new: list[Any], segs: list[Seg], out: list[Change]) -> None:
    fields = _list_identity(old, new)
    if fields is not None:
        om = {tuple(i[f] for f in fields): i for i in old}
        nm = {tuple(i[f] for f in fields): i for i in new}
        for k in list(om) + [k for k in nm if k not in om]:
            sel = _sel(fields, k)
            path = format_path([*segs, sel])
            if k not in nm:
                out.append(Change("removed", path, _leaf(segs), old=om[k]))
            elif k not in om:
                out.append(Change("added", path, _leaf(segs), new=nm[k]))
            else:
                _diff(om[k], nm[k], [*segs, sel], out)
        order_old = [_sel(fields, k).label for k in om if k in nm]
        order_new = [_sel(fields, k).label for k in nm if k in om]
        if order_old != order_new:
            out.append(
                Change("changed", format_path(segs) + " (order)", _leaf(segs), old=order_old, new=order_new)
            )
        return
    a = [_canon(x) for x in old]
    b = [_canon(x) for x in new]
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        paired = min(i2 - i1, j2 - j1) if tag == "replace" else 0
        for n in range(paired):
            _diff(old[i1 + n], new[j1 + n], [*segs, Sel(f"[{j1 + n}]")], out)
        for i in range(i1 + paired, i2):
            out.append(Change("removed", format_path([*segs, Sel(f"[{i}]")]), _leaf(segs), old=old[i]))
        for j in range(j1 + paired, j2):
            out.append(Change("added", format_path([*segs, Sel(f"[{j}]")]), _leaf(segs), new=new[j]))


def _diff_embedded(old: str, new: str, segs: list[Seg], out: list[Change]) -> None:
    """A multi-line string (a file inside a ConfigMap): structured by its key name when possible."""
    leaf = _leaf(segs)
    path = format_path(segs)
    changes, text = diff_content(classify(leaf), leaf, old, new, f"a/{leaf}", f"b/{leaf}")
    if changes:
        for c in changes:
            out.append(Change(c.op, f"{path}{EMBED_SEPARATOR}{c.path}", c.leaf, c.old, c.new, c.text_diff))
    else:
        out.append(Change("changed", path, leaf, text_diff=tuple(text)))


# -- text -----------------------------------------------------------------------------------------


def unified(old: str, new: str, old_name: str, new_name: str, context: int = 3) -> list[str]:
    """``diff -u`` lines (no trailing newlines), marking a missing final newline like git."""
    a = old.splitlines(keepends=True)
    b = new.splitlines(keepends=True)
    out: list[str] = []
    for i, line in enumerate(difflib.unified_diff(a, b, old_name, new_name, n=context, lineterm="")):
        if i < 2 or line.startswith("@@"):
            out.append(line.rstrip("\n"))
        elif line.endswith("\n"):
            out.append(line[:-1])
        else:
            out.append(line)
            out.append("\\ No newline at end of file")
    return out


# -- key/value kinds ------------------------------------------------------------------------------


def parse_hadoop_xml(text: str) -> dict[str, dict[str, str]] | None:
    """Hadoop ``<configuration>`` → ``{name: {"value": …, ["final", "description"]}}``; None otherwise."""
    try:
        root = ET.fromstring(text)
    except (ET.ParseError, ValueError):
        return None
    if root.tag != "configuration":
        return None
    props: dict[str, dict[str, str]] = {}
    for prop in root.iter("property"):
        name = (prop.findtext("name") or "").strip()
        if not name:
            continue
        entry = {"value": prop.findtext("value") or ""}
        for extra in ("final", "description"):
            t = prop.findtext(extra)
            if t is not None:
                entry[extra] = " ".join(t.split())
        props[name] = entry
    return props


def parse_flink_legacy(text: str) -> dict[str, str]:
    """Legacy ``flink-conf.yaml`` exactly as Flink reads it: ``key: value`` per line, everything
    after the first ``#`` is a comment, lines without ``": "`` or with an empty key/value are skipped."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        conf = line.split("#", 1)[0].strip()
        if not conf:
            continue
        kv = conf.split(": ", 1)
        if len(kv) != 2:
            continue
        key, value = kv[0].strip(), kv[1].strip()
        if key and value:
            out[key] = value
    return out


def flatten_yaml_config(text: str) -> dict[str, Any] | None:
    """Standard-YAML Flink ``config.yaml`` (flat or nested) → dotted keys; None if not a mapping."""
    docs = _yaml_docs(text)
    if docs is None or len(docs) > 1:
        return None
    data = docs[0] if docs else None
    if data is None:
        return {}
    if not isinstance(data, dict):
        return None
    out: dict[str, Any] = {}

    def walk(d: dict[Any, Any], prefix: str) -> None:
        for k, v in d.items():
            key = f"{prefix}{k}"
            if isinstance(v, dict) and v:
                walk(v, f"{key}.")
            else:
                out[key] = v

    walk(data, "")
    return out


def parse_ini(text: str) -> dict[str, dict[str, str | None]]:
    """``container-executor.cfg`` style: ``[section]`` headers, ``key=value`` lines, ``#``/``;``
    comments; keys before any section belong to the global section ``""``."""
    sections: dict[str, dict[str, str | None]] = {"": {}}
    current = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = line[1:-1].strip()
            sections.setdefault(current, {})
            continue
        if "=" in line:
            k, v = line.split("=", 1)
            sections[current][k.strip()] = v.strip()
        else:
            sections[current][line] = None
    if not sections[""]:
        del sections[""]
    return sections


def _structured(value: Any) -> bool:
    return isinstance(value, dict) or (isinstance(value, list) and any(isinstance(v, dict) for v in value))


def _diff_keys(old: dict[str, Any], new: dict[str, Any], path_of: Callable[[str], str]) -> list[Change]:
    out: list[Change] = []
    for k in sorted(set(old) | set(new)):
        if k not in new:
            out.append(Change("removed", path_of(k), k, old=old[k]))
        elif k not in old:
            out.append(Change("added", path_of(k), k, new=new[k]))
        elif same(old[k], new[k]):
            continue
        elif _structured(old[k]) and _structured(new[k]):
            # e.g. sharing.timeSlicing.resources[name=nvidia.com/gpu].replicas
            for c in diff_values(old[k], new[k], [Sel(path_of(k))]):
                out.append(Change(c.op, c.path, c.leaf or k, c.old, c.new, c.text_diff))
        else:
            out.append(Change("changed", path_of(k), k, old=old[k], new=new[k]))
    return out


def _diff_hadoop(old: dict[str, dict[str, str]], new: dict[str, dict[str, str]]) -> list[Change]:
    out: list[Change] = []
    for name in sorted(set(old) | set(new)):
        o, n = old.get(name), new.get(name)
        if n is None:
            out.append(Change("removed", name, name, old=o["value"] if o else None))
        elif o is None:
            out.append(Change("added", name, name, new=n["value"]))
        else:
            if o["value"] != n["value"]:
                out.append(Change("changed", name, name, old=o["value"], new=n["value"]))
            for extra in ("final", "description"):
                if o.get(extra) != n.get(extra):
                    op: Op = "added" if extra not in o else "removed" if extra not in n else "changed"
                    out.append(Change(op, f"{name} ({extra})", name, old=o.get(extra), new=n.get(extra)))
    return out


def _prefixer(prefix: str) -> Callable[[str], str]:
    return lambda k: f"{prefix}{k}"


def _diff_ini(old: dict[str, dict[str, str | None]], new: dict[str, dict[str, str | None]]) -> list[Change]:
    out: list[Change] = []
    for section in sorted(set(old) | set(new)):
        o, n = old.get(section, {}), new.get(section, {})
        prefix = f"[{section}] " if section else ""
        if section not in new and not o:
            out.append(Change("removed", f"[{section}]", section, old={}))
        elif section not in old and not n:
            out.append(Change("added", f"[{section}]", section, new={}))
        out.extend(_diff_keys(o, n, _prefixer(prefix)))
    return out


_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@functools.lru_cache(maxsize=4096)
def _yaml_docs_cached(text: str) -> tuple[Any, ...] | None:
    try:
        return tuple(d for d in yaml.load_all(text, Loader=_LOADER) if d is not None)
    except yaml.YAMLError:
        return None


def _yaml_docs(text: str) -> list[Any] | None:
    """Non-empty YAML documents of a text (shared parsed objects: never mutate them)."""
    docs = _yaml_docs_cached(text)
    return list(docs) if docs is not None else None


def diff_content(
    kind: str, name: str, old: str, new: str, old_label: str, new_label: str
) -> tuple[list[Change], list[str]]:
    """Structured changes of one text artifact, or (when it has none but differs, or cannot be
    parsed as its kind) a unified text diff."""
    if old == new:
        return [], []
    changes: list[Change] | None = None
    base = posixpath.basename(name).lower()
    if kind == "hadoop-xml":
        po, pn = parse_hadoop_xml(old), parse_hadoop_xml(new)
        if po is not None and pn is not None:
            changes = _diff_hadoop(po, pn)
    elif kind == "flink-config" and base == "flink-conf.yaml":
        changes = _diff_keys(parse_flink_legacy(old), parse_flink_legacy(new), lambda k: k)
    elif kind == "flink-config":
        fo, fn = flatten_yaml_config(old), flatten_yaml_config(new)
        if fo is not None and fn is not None:
            changes = _diff_keys(fo, fn, lambda k: k)
    elif kind == "ini":
        changes = _diff_ini(parse_ini(old), parse_ini(new))
    elif kind in ("yaml", "kubernetes"):
        do, dn = _yaml_docs(old), _yaml_docs(new)
        if do is not None and dn is not None:
            if len(do) == 1 and len(dn) == 1:
                changes = diff_values(do[0], dn[0])
            else:
                changes = diff_values(do, dn, ["documents"])
    if changes:
        return changes, []
    return [], unified(old, new, old_label, new_label)


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
    group = api.split("/")[0] if "/" in api else ""
    ns = meta.get("namespace")
    return (group, kind, str(ns) if ns is not None else "", name)


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
            docs = _yaml_docs(content)
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


_HASH_SUFFIX = re.compile(r"[-_.]?[0-9a-f]{6,}(?=(\.[A-Za-z0-9]+)?$)")


def hash_stem(name: str) -> str:
    """``name`` without a trailing content hash (``cm-3f9a2c41d0`` → ``cm``)."""
    return _HASH_SUFFIX.sub("", name)


def _rename_score(old_name: str, new_name: str, old_text: str, new_text: str) -> float | None:
    stem_o, stem_n = hash_stem(old_name), hash_stem(new_name)
    if stem_o == stem_n and stem_o and stem_o != old_name:
        return 3.0
    name_ratio = difflib.SequenceMatcher(None, old_name, new_name, autojunk=False).ratio()
    if name_ratio < NAME_SIMILARITY:
        return None
    content_ratio = difflib.SequenceMatcher(
        None, old_text.splitlines(), new_text.splitlines(), autojunk=False
    ).ratio()
    return name_ratio + content_ratio if content_ratio >= CONTENT_SIMILARITY else None


def _pair(
    removed: Sequence[T],
    added: Sequence[T],
    group: Callable[[T], Any],
    name: Callable[[T], str],
    text: Callable[[T], str],
) -> list[tuple[T, T]]:
    """Greedy best-first pairing of removed and added artifacts that look like renames."""
    scored: list[tuple[float, int, int]] = []
    for i, r in enumerate(removed):
        for j, a in enumerate(added):
            if group(r) != group(a):
                continue
            score = _rename_score(name(r), name(a), text(r), text(a))
            if score is not None:
                scored.append((-score, i, j))
    used_r: set[int] = set()
    used_a: set[int] = set()
    pairs: list[tuple[T, T]] = []
    for _, i, j in sorted(scored):
        if i in used_r or j in used_a:
            continue
        used_r.add(i)
        used_a.add(j)
        pairs.append((removed[i], added[j]))
    return pairs


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
    pairs = _pair(
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


def _sha(content: str | bytes) -> str:
    data = content.encode("utf-8") if isinstance(content, str) else content
    return hashlib.sha256(data).hexdigest()[:16]


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
                    old=f"sha256:{_sha(old[0])} ({len(old[0])} bytes)" if old else None,
                    new=f"sha256:{_sha(new[0])} ({len(new[0])} bytes)" if new else None,
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
        return content if isinstance(content, str) else _sha(content)

    pairs = _pair(
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
