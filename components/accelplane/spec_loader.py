"""Load a cluster spec and the base specs it `extends`, merging them into one document.

Merge rules (documented in docs/reference.md, "Template reuse"):

* ``extends`` is a list of paths relative to the file that names them; bases are merged left to
  right, then the file itself on top. Bases may extend other bases.
* Maps deep-merge. Lists whose items are all maps with a ``name`` merge by name (inherited order
  first, new entries after). Any other list, and any scalar, is replaced by the later value.
* ``{name: x, $remove: true}`` in a named list removes the inherited entry ``x``; ``key: {$remove:
  true}`` removes an inherited map key. Removing something that is not inherited is an error.
* Missing bases, ``extends`` cycles, malformed YAML, duplicate keys and duplicate names inside one
  file are errors; all of them are collected before anything is reported.
* Top-level keys starting with ``x-`` are ignored (a place for YAML anchors, as in Compose files).
* ``flink.defaults`` is the same inheritance one level down: after ``extends``, it is merged under
  each ``flink.clusters[]`` entry by the same rules (`apply_flink_defaults`), so every Flink cluster of
  the merged document holds its full settings and an inherited value keeps the provenance of the
  ``flink.defaults`` entry that wrote it. ``flink.defaults`` itself stays in the document.

Reading is defensive, because a spec (or a pull request changing one) may be hostile: only regular
files are read (never a FIFO, device or directory, so nothing hangs or reads forever), at most
`MAX_SPEC_BYTES`; a base must be a ``.yaml``/``.yml`` file inside the spec's repository (`spec_root`);
and a file that is not an accelplane spec mapping is reported by what is wrong with it, never by
its content.

Files are named in messages as the user typed them: the cluster spec by the path given, a base by
that path's directory joined with the ``extends`` entry.

Every node of the merged document keeps its provenance (file, path inside that file) so later
errors can name where the user has to make the fix.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from accelplane.display import has_controls, short_repr
from accelplane.errors import PathTuple, Problem, SpecError, SpecErrors, format_path
from accelplane.findings import ERROR, Finding, declare
from accelplane.yaml_io import YamlSyntaxError, load_yaml_text

SPEC_FILE_UNREADABLE = declare(
    "AP1201", ERROR, "a spec file is missing, unreadable, too large or not UTF-8 text",
    fix="name an existing UTF-8 YAML file (at most 8 MiB)",
)
SPEC_NOT_A_SPEC = declare(
    "AP1203", ERROR, "a spec file is not a YAML mapping with accelplane sections",
    fix="write a mapping whose top-level keys are spec sections (see `accelplane schema --markdown`)",
)
EXTENDS_NOT_A_LIST = declare(
    "AP1204", ERROR, "extends is not a list of file paths", fix="write extends as a list of paths"
)
EXTENDS_CYCLE = declare(
    "AP1205", ERROR, "bases extend each other in a cycle", fix="remove one extends entry of the cycle"
)
BASE_NOT_YAML = declare(
    "AP1206", ERROR, "a base spec is not a .yaml or .yml file", fix="name a .yaml or .yml file"
)
BASE_OUTSIDE_REPOSITORY = declare(
    "AP1207", ERROR, "a base spec lies outside the spec's repository",
    fix="move the base into the same repository",
)
BASE_NOT_FOUND = declare("AP1208", ERROR, "a base spec does not exist", fix="fix the path in extends")
DUPLICATE_NAME = declare(
    "AP1209", ERROR, "two entries of one named list in one file have the same name",
    fix="rename or merge one of them",
)
REMOVE_NOTHING = declare(
    "AP1210", ERROR, "$remove removes nothing (no inherited entry or key of that name)",
    fix="remove the $remove entry or fix its name",
)

EXTENDS_CONTROL_CHARACTER = declare(
    "AP1260", ERROR, "an extends entry holds a control character (NUL, a line break, …), so it names no file",
    fix="write the base's path without control characters",
)

REMOVE_KEY = "$remove"
EXTENSION_PREFIX = "x-"
MAX_SPEC_BYTES = 8 * 1024 * 1024
SPEC_SUFFIXES = (".yaml", ".yml")
FLINK_DEFAULTS: PathTuple = ("flink", "defaults")
FLINK_CLUSTERS: PathTuple = ("flink", "clusters")
Origin = tuple[str, PathTuple]
Provenance = dict[PathTuple, Origin]


def display_path(path: Path) -> str:
    """Return ``path`` relative to the working directory when it lies below it, else absolute."""
    try:
        rel = os.path.relpath(path)
    except ValueError:  # pragma: no cover - other drive on Windows
        return str(path)
    return str(path) if rel == os.pardir or rel.startswith(os.pardir + os.sep) else rel


def spec_root(spec: Path) -> Path:
    """The directory bases must live in: the spec's git work tree, else the spec's own directory.

    ``spec`` is a resolved path. Bases outside it are refused (docs/reference.md, "Template reuse"): a spec
    under review cannot make accelplane read files elsewhere on the machine, and `diff REV:path`
    can materialise every base from the same revision.
    """
    for directory in spec.parents:
        if os.path.lexists(directory / ".git"):
            return directory
    return spec.parent


class SpecFileError(Exception):
    """A file that cannot be read as a spec; the message says why, never what it contains."""


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


_KEPT: ContextVar[dict[str, str] | None] = ContextVar("accelplane_spec_texts", default=None)


@contextmanager
def keeping_texts() -> Iterator[dict[str, str]]:
    """Yield a dict that collects the text of every spec file read inside the ``with`` block, by the
    name findings give the file (`SpecError.file`).

    `validate --format json|github` finds each finding's line in these texts instead of opening the
    file again: a path is opened once (a FIFO or a file replaced between two opens cannot make the
    second one hang or answer differently), and each file is composed once (`YamlLines`).
    """
    texts: dict[str, str] = {}
    token = _KEPT.set(texts)
    try:
        yield texts
    finally:
        _KEPT.reset(token)


def read_spec_text(path: str | os.PathLike[str], name: str | None = None) -> str:
    """Return the text of a spec file; raise `SpecFileError` (or FileNotFoundError) with a reason.

    Only regular files up to `MAX_SPEC_BYTES` are read. The file is opened non-blocking and checked
    again after opening, so a FIFO swapped in between cannot make the read hang. Inside
    `keeping_texts` the text is also kept under ``name`` (default: ``path``).
    """
    text = _read_spec_text(path)
    kept = _KEPT.get()
    if kept is not None:
        kept.setdefault(name if name is not None else os.fspath(path), text)
    return text


def _read_spec_text(path: str | os.PathLike[str]) -> str:
    try:
        before = os.stat(path)
        if not stat.S_ISREG(before.st_mode):
            raise SpecFileError(f"not a regular file ({_kind(before.st_mode)})")
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise SpecFileError("cannot read file: symlink loop") from None
        raise SpecFileError(f"cannot read file: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as fh:
        mode = os.fstat(fh.fileno()).st_mode
        if not stat.S_ISREG(mode):
            raise SpecFileError(f"not a regular file ({_kind(mode)})")
        try:
            data = fh.read(MAX_SPEC_BYTES + 1)
        except OSError as exc:
            raise SpecFileError(f"cannot read file: {exc.strerror or exc}") from None
    if len(data) > MAX_SPEC_BYTES:
        raise SpecFileError(f"file is larger than {MAX_SPEC_BYTES // (1024 * 1024)} MiB; not a cluster spec")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SpecFileError(f"not UTF-8 text (byte {exc.start})") from None


def _spec_sections() -> frozenset[str]:
    from accelplane.schema_document import load_schema

    return frozenset(load_schema().get("properties", {}))


@dataclass
class LoadedSpec:
    """A merged spec document plus where each part of it came from.

    ``load_errors`` are the problems the loader found that do not make the merged document
    incomplete (duplicate names, misplaced ``$remove``, an ``extends`` cycle), so validation can go
    on and report everything at once.
    """

    path: Path
    data: dict[str, Any]
    provenance: Provenance
    files: list[Path] = field(default_factory=list)
    display: str = ""
    load_errors: list[SpecError] = field(default_factory=list)
    reported: list[PathTuple] = field(default_factory=list)
    """Merged-document paths a load error already covers (a ``$remove`` marker with nothing to
    remove): validation leaves them out, so they are not reported again as schema errors."""

    @property
    def display_name(self) -> str:
        """The cluster spec's path as shown in messages (as the user typed it)."""
        return self.display or display_path(self.path)

    def locate(self, path: PathTuple, message: str, finding: Finding | None = None) -> SpecError:
        """Turn a problem at a merged-document path into an error naming file and original path."""
        for cut in range(len(path), -1, -1):
            origin = self.provenance.get(path[:cut])
            if origin is not None:
                file, original = origin
                return SpecError(file, format_path(original + path[cut:]), message, finding)
        return SpecError(self.display_name, format_path(path), message, finding)

    def inherited_defaults(self) -> dict[str, frozenset[tuple[str, ...]]]:
        """For each Flink cluster (by name), the key paths inside it whose value was written under
        ``flink.defaults`` (`_Merger.apply_flink_defaults`), not by the cluster itself — what
        `accelplane.model.build_model` records as ``FlinkCluster.from_defaults``."""
        keys: dict[int, set[tuple[str, ...]]] = {}
        for path, (_, original) in self.provenance.items():
            if len(path) > 3 and path[:2] == FLINK_CLUSTERS and original[:2] == FLINK_DEFAULTS:
                rest = path[3:]
                if all(isinstance(k, str) for k in rest):
                    keys.setdefault(int(path[2]), set()).add(tuple(str(k) for k in rest))
        clusters = self.data.get("flink", {}).get("clusters", []) if isinstance(self.data.get("flink"), dict) else []
        return {
            clusters[i]["name"]: frozenset(found)
            for i, found in keys.items()
            if i < len(clusters) and isinstance(clusters[i], dict) and isinstance(clusters[i].get("name"), str)
        }

    def errors(self, problems: list[Problem]) -> list[SpecError]:
        """Locate many problems at once."""
        return [self.locate(p.path, p.message, p.finding) for p in problems]


def _is_remove_marker(value: Any) -> bool:
    return isinstance(value, dict) and value.get(REMOVE_KEY) is True


def _is_named_list(value: Any) -> bool:
    return (
        isinstance(value, list)
        and len(value) > 0
        and all(isinstance(i, dict) and isinstance(i.get("name"), str) for i in value)
    )


def _walk(value: Any, path: PathTuple = ()) -> Iterator[tuple[PathTuple, Any]]:
    yield path, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _walk(v, (*path, str(k)))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _walk(v, (*path, i))


class _Merger:
    """Stateful helper that merges documents while tracking provenance and collecting errors."""

    def __init__(self, root: Path) -> None:
        self.keep_unmatched_markers = False
        """Leave a ``$remove`` marker with nothing under it to remove in place (for
        `_leftover_remove_markers` to report) instead of reporting it here."""
        self.errors: list[SpecError] = []
        self.files: list[Path] = []
        self.root = root
        self.fatal = False
        self.shown: dict[Path, str] = {}

    # -- loading -------------------------------------------------------------------------------
    def load(self, path: Path, name: str, stack: tuple[Path, ...]) -> tuple[Any, Provenance] | None:
        """Load ``path`` (resolved; shown as ``name``) and its bases; None when it cannot be used."""
        if path not in self.files:
            self.files.append(path)
        try:
            text = read_spec_text(path, name)
        except FileNotFoundError:
            return self._fatal(SpecError(name, "<root>", "file not found", SPEC_FILE_UNREADABLE))
        except SpecFileError as exc:
            return self._fatal(SpecError(name, "<root>", str(exc), SPEC_FILE_UNREADABLE))
        try:
            doc = load_yaml_text(text, name)
        except YamlSyntaxError as exc:
            return self._fatal(exc.error)
        if doc is None:
            doc = {}
        if not isinstance(doc, dict):
            return self._fatal(SpecError(name, "<root>", "a spec must be a YAML mapping", SPEC_NOT_A_SPEC))
        doc = {k: v for k, v in doc.items() if not k.startswith(EXTENSION_PREFIX)}
        sections = _spec_sections()
        if doc and not any(k in sections or k == "extends" for k in doc):
            return self._fatal(
                SpecError(name, "<root>", "not an accelplane spec: no top-level key is a spec section", SPEC_NOT_A_SPEC)
            )
        walked = list(_walk(doc))  # one walk: provenance and duplicate names
        own_prov: Provenance = {p: (name, p) for p, _ in walked}
        self._check_duplicate_names(walked, name)

        extends = doc.pop("extends", [])
        own_prov = {p: o for p, o in own_prov.items() if not (p and p[0] == "extends")}
        if isinstance(extends, str):
            extends = [extends]
        if not isinstance(extends, list) or not all(isinstance(e, str) for e in extends):
            self.errors.append(SpecError(name, "extends", "must be a list of file paths", EXTENDS_NOT_A_LIST))
            extends = []

        merged: Any = None
        merged_prov: Provenance = {}
        for i, ref in enumerate(extends):
            loaded = self._load_base(path, name, stack, i, ref)
            if loaded is None:
                continue
            base, base_prov = loaded
            if merged is None:
                merged, merged_prov = base, base_prov
            else:
                merged, merged_prov = self.merge(merged, merged_prov, base, base_prov)
        if merged is None:
            return doc, own_prov
        return self.merge(merged, merged_prov, doc, own_prov)

    def _fatal(self, error: SpecError) -> tuple[Any, Provenance] | None:
        """Record an error that makes the merged document incomplete; return None (nothing loaded)."""
        self.errors.append(error)
        self.fatal = True
        return None

    def _load_base(
        self, path: Path, name: str, stack: tuple[Path, ...], i: int, ref: str
    ) -> tuple[Any, Provenance] | None:
        where = f"extends[{i}]"
        if has_controls(ref) or "\n" in ref or "\t" in ref:
            return self._fatal(
                SpecError(
                    name, where,
                    f"{short_repr(ref)} holds a control character; no file name on any "
                    "system accepts a NUL, and a line break or tab is a typo; write the base's path",
                    EXTENDS_CONTROL_CHARACTER,
                )
            )
        base_name = ref if os.path.isabs(ref) else os.path.normpath(os.path.join(os.path.dirname(name), ref))
        base_path = Path(os.path.realpath(path.parent / ref))
        if base_path in stack or base_path == path:
            chain = " -> ".join([*self.names(stack), name, base_name])
            self.errors.append(SpecError(name, where, f"extends cycle: {chain}", EXTENDS_CYCLE))
            return None
        if not base_path.name.endswith(SPEC_SUFFIXES) or not ref.endswith(SPEC_SUFFIXES):
            return self._fatal(SpecError(name, where, f"base spec {ref!r} must be a .yaml or .yml file", BASE_NOT_YAML))
        if not base_path.is_relative_to(self.root):
            return self._fatal(
                SpecError(
                    name,
                    where,
                    f"base spec {ref!r} is outside the spec's repository {display_path(self.root)}; "
                    "bases must live in the same repository",
                    BASE_OUTSIDE_REPOSITORY,
                )
            )
        if not os.path.lexists(base_path):
            return self._fatal(SpecError(name, where, f"base spec {ref!r} not found ({base_name})", BASE_NOT_FOUND))
        self.shown[base_path] = base_name
        return self.load(base_path, base_name, (*stack, path))

    def names(self, paths: tuple[Path, ...]) -> list[str]:
        """Display names of already loaded files."""
        return [self.shown.get(p, display_path(p)) for p in paths]

    def _check_duplicate_names(self, walked: list[tuple[PathTuple, Any]], name: str) -> None:
        """Report each repeated ``name`` in a list of named entries; ``walked`` is `_walk` of the file's document."""
        for path, value in walked:
            if _is_named_list(value):
                first: dict[str, int] = {}
                for i, item in enumerate(value):
                    n = item["name"]
                    if n in first:
                        self.errors.append(
                            SpecError(
                                name,
                                format_path((*path, i, "name")),
                                f"duplicate name {n!r} (first defined at {format_path((*path, first[n]))})",
                                DUPLICATE_NAME,
                            )
                        )
                    else:
                        first[n] = i

    # -- merging -------------------------------------------------------------------------------
    def merge(self, a: Any, a_prov: Provenance, b: Any, b_prov: Provenance) -> tuple[Any, Provenance]:
        out_prov: Provenance = {}
        value = self._merge(a, b, (), (), (), a_prov, b_prov, out_prov)
        return value, out_prov

    @staticmethod
    def _copy(value: Any, src: PathTuple, dst: PathTuple, prov: Provenance, out: Provenance) -> Any:
        if src in prov:
            out[dst] = prov[src]
        if isinstance(value, dict):
            return {k: _Merger._copy(v, (*src, k), (*dst, k), prov, out) for k, v in value.items()}
        if isinstance(value, list):
            return [_Merger._copy(v, (*src, i), (*dst, i), prov, out) for i, v in enumerate(value)]
        return value

    def _merge(
        self,
        a: Any,
        b: Any,
        pa: PathTuple,
        pb: PathTuple,
        pm: PathTuple,
        a_prov: Provenance,
        b_prov: Provenance,
        out: Provenance,
    ) -> Any:
        if isinstance(a, dict) and isinstance(b, dict):
            if pb in b_prov:
                out[pm] = b_prov[pb]
            result: dict[str, Any] = {}
            for k, v in a.items():
                if k not in b:
                    result[k] = self._copy(v, (*pa, k), (*pm, k), a_prov, out)
            for k, v in b.items():
                if _is_remove_marker(v):
                    if k not in a and self.keep_unmatched_markers:
                        result[k] = self._copy(v, (*pb, k), (*pm, k), b_prov, out)
                    elif k not in a:
                        self._error(b_prov, (*pb, k), f"{REMOVE_KEY}: nothing inherited under key {k!r}", REMOVE_NOTHING)
                    continue
                if k in a:
                    result[k] = self._merge(a[k], v, (*pa, k), (*pb, k), (*pm, k), a_prov, b_prov, out)
                else:
                    result[k] = self._copy(v, (*pb, k), (*pm, k), b_prov, out)
            # keep a stable key order: inherited keys first in their order, then new ones
            order = [k for k in a if k in result] + [k for k in b if k in result and k not in a]
            return {k: result[k] for k in order}
        if _is_named_list(a) and (_is_named_list(b) or b == []):
            if pb in b_prov:
                out[pm] = b_prov[pb]
            b_by_name = {item["name"]: (i, item) for i, item in enumerate(b)}
            merged_items: list[Any] = []
            for i, item in enumerate(a):
                name = item["name"]
                if name in b_by_name:
                    j, over = b_by_name[name]
                    if over.get(REMOVE_KEY) is True:
                        continue
                    merged_items.append(
                        self._merge(
                            item, over, (*pa, i), (*pb, j), (*pm, len(merged_items)), a_prov, b_prov, out
                        )
                    )
                else:
                    merged_items.append(self._copy(item, (*pa, i), (*pm, len(merged_items)), a_prov, out))
            a_names = {item["name"] for item in a}
            for j, item in enumerate(b):
                if item["name"] in a_names:
                    continue
                if item.get(REMOVE_KEY) is True and not self.keep_unmatched_markers:
                    self._error(b_prov, (*pb, j), f"{REMOVE_KEY}: no inherited entry named {item['name']!r}", REMOVE_NOTHING)
                    continue
                merged_items.append(self._copy(item, (*pb, j), (*pm, len(merged_items)), b_prov, out))
            return merged_items
        return self._copy(b, pb, pm, b_prov, out)

    def _error(self, prov: Provenance, path: PathTuple, message: str, finding: Finding) -> None:
        file, original = prov.get(path, ("<unknown>", path))
        self.errors.append(SpecError(file, format_path(original), message, finding))


    def apply_flink_defaults(self, data: dict[str, Any], prov: Provenance) -> tuple[dict[str, Any], Provenance]:
        """``data`` with ``flink.defaults`` merged under each Flink cluster (the ``extends`` rules;
        a cluster's own value wins) and the provenance of every inherited value pointing at the
        defaults entry it came from. A ``$remove`` marker with nothing inherited is left for
        `_leftover_remove_markers`, as after ``extends``."""
        flink = data.get("flink")
        if not isinstance(flink, dict):
            return data, prov
        defaults, clusters = flink.get("defaults"), flink.get("clusters")
        if not isinstance(defaults, dict) or not defaults or not isinstance(clusters, list):
            return data, prov
        merged: list[Any] = []
        merged_prov: Provenance = {}
        self.keep_unmatched_markers = True
        try:
            for i, cluster in enumerate(clusters):
                path = (*FLINK_CLUSTERS, i)
                if not isinstance(cluster, dict) or _is_remove_marker(cluster):
                    merged.append(cluster)
                    continue
                entry = self._merge(defaults, cluster, FLINK_DEFAULTS, path, path, prov, prov, merged_prov)
                merged.append({"name": entry["name"], **entry} if "name" in entry else entry)  # name first, for `merged`
        finally:
            self.keep_unmatched_markers = False
        replaced = {i for i, c in enumerate(clusters) if isinstance(c, dict) and not _is_remove_marker(c)}
        out_prov = {
            p: o for p, o in prov.items() if not (len(p) > 2 and p[:2] == FLINK_CLUSTERS and p[2] in replaced)
        }
        out_prov.update(merged_prov)
        return {**data, "flink": {**flink, "clusters": merged}}, out_prov


def _leftover_remove_markers(markers: list[PathTuple], prov: Provenance) -> list[SpecError]:
    """One error per ``$remove`` marker left in the merged document (``markers``: their paths), located
    where the marker was written."""
    errors = []
    for path in markers:
        file, original = prov.get(path, ("<unknown>", path))
        errors.append(
            SpecError(file, format_path(original), f"{REMOVE_KEY}: nothing inherited to remove", REMOVE_NOTHING)
        )
    return errors


def load_document(path: str | os.PathLike[str], root: Path | None = None) -> LoadedSpec:
    """Load a cluster spec with all its bases merged, for validation to go on from.

    Raises `SpecErrors` when a file cannot be used (missing, unreadable, not YAML, not a spec), since
    validating what is left would only report the consequences. Problems that leave the merged
    document complete are returned in ``load_errors``. ``root`` overrides `spec_root` (``diff``
    passes the materialised revision).
    """
    name = os.fspath(path)
    top = Path(os.path.realpath(name))
    merger = _Merger(root if root is not None else spec_root(top))
    merger.shown[top] = name
    loaded = merger.load(top, name, ())
    if loaded is None or merger.fatal:
        raise SpecErrors(merger.errors or [SpecError(name, "<root>", "cannot load spec", SPEC_FILE_UNREADABLE)])
    data, prov = merger.apply_flink_defaults(*loaded)
    markers = [p for p, value in _walk(data) if _is_remove_marker(value)]  # one walk: errors and `reported`
    errors = merger.errors + _leftover_remove_markers(markers, prov)
    return LoadedSpec(
        path=top,
        data=data,
        provenance=prov,
        files=merger.files,
        display=name,
        load_errors=errors,
        reported=markers,
    )


def load_spec(path: str | os.PathLike[str], root: Path | None = None) -> LoadedSpec:
    """Load a cluster spec with all its bases merged; raise `SpecErrors` listing every problem.

    Returns the merged document (``extends`` removed) with provenance for error reporting.
    """
    loaded = load_document(path, root)
    if any(not e.is_warning for e in loaded.load_errors):
        raise SpecErrors(loaded.load_errors)
    return loaded
