"""Load a cluster spec and the base specs it `extends`, merging them into one document.

Merge rules (documented in the README, "Template reuse"):

* ``extends`` is a list of paths relative to the file that names them; bases are merged left to
  right, then the file itself on top. Bases may extend other bases.
* Maps deep-merge. Lists whose items are all maps with a ``name`` merge by name (inherited order
  first, new entries after). Any other list, and any scalar, is replaced by the later value.
* ``{name: x, $remove: true}`` in a named list removes the inherited entry ``x``; ``key: {$remove:
  true}`` removes an inherited map key. Removing something that is not inherited is an error.
* Missing bases, ``extends`` cycles, malformed YAML, duplicate keys and duplicate names inside one
  file are errors; all of them are collected before anything is reported.

Every node of the merged document keeps its provenance (file, path inside that file) so later
errors can name where the user has to make the fix.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from accelplane.errors import PathTuple, Problem, SpecError, SpecErrors, format_path
from accelplane.yaml_io import YamlSyntaxError, load_yaml_text

REMOVE_KEY = "$remove"
Origin = tuple[str, PathTuple]
Provenance = dict[PathTuple, Origin]


def display_path(path: Path) -> str:
    """Return ``path`` relative to the working directory when it lies below it, else absolute."""
    try:
        return os.path.relpath(path)
    except ValueError:  # pragma: no cover - other drive on Windows
        return str(path)


@dataclass
class LoadedSpec:
    """A merged spec document plus where each part of it came from."""

    path: Path
    data: dict[str, Any]
    provenance: Provenance
    files: list[Path] = field(default_factory=list)

    @property
    def display_name(self) -> str:
        """The cluster spec's path as shown in messages."""
        return display_path(self.path)

    def locate(self, path: PathTuple, message: str) -> SpecError:
        """Turn a problem at a merged-document path into an error naming file and original path."""
        for cut in range(len(path), -1, -1):
            origin = self.provenance.get(path[:cut])
            if origin is not None:
                file, original = origin
                return SpecError(file, format_path(original + path[cut:]), message)
        return SpecError(self.display_name, format_path(path), message)

    def errors(self, problems: list[Problem]) -> list[SpecError]:
        """Locate many problems at once."""
        return [self.locate(p.path, p.message) for p in problems]


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

    def __init__(self) -> None:
        self.errors: list[SpecError] = []
        self.files: list[Path] = []

    # -- loading -------------------------------------------------------------------------------
    def load(self, path: Path, stack: tuple[Path, ...]) -> tuple[Any, Provenance] | None:
        name = display_path(path)
        if path not in self.files:
            self.files.append(path)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            self.errors.append(SpecError(name, "<root>", "file not found"))
            return None
        except (OSError, UnicodeDecodeError) as exc:
            self.errors.append(SpecError(name, "<root>", f"cannot read file: {exc}"))
            return None
        try:
            doc = load_yaml_text(text, name)
        except YamlSyntaxError as exc:
            self.errors.append(exc.error)
            return None
        if doc is None:
            doc = {}
        if not isinstance(doc, dict):
            self.errors.append(SpecError(name, "<root>", "a spec must be a YAML mapping"))
            return None
        own_prov: Provenance = {p: (name, p) for p, _ in _walk(doc)}
        self._check_duplicate_names(doc, name)

        extends = doc.pop("extends", [])
        own_prov = {p: o for p, o in own_prov.items() if not (p and p[0] == "extends")}
        if isinstance(extends, str):
            extends = [extends]
        if not isinstance(extends, list) or not all(isinstance(e, str) for e in extends):
            self.errors.append(SpecError(name, "extends", "must be a list of file paths"))
            extends = []

        merged: Any = None
        merged_prov: Provenance = {}
        for i, ref in enumerate(extends):
            base_path = (path.parent / ref).resolve()
            if base_path in stack or base_path == path:
                chain = " -> ".join(display_path(p) for p in (*stack, path, base_path))
                self.errors.append(SpecError(name, f"extends[{i}]", f"extends cycle: {chain}"))
                continue
            if not base_path.is_file():
                self.errors.append(
                    SpecError(
                        name, f"extends[{i}]", f"base spec {ref!r} not found ({display_path(base_path)})"
                    )
                )
                continue
            loaded = self.load(base_path, (*stack, path))
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

    def _check_duplicate_names(self, doc: Any, name: str) -> None:
        for path, value in _walk(doc):
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
                    if k not in a:
                        self._error(b_prov, (*pb, k), f"{REMOVE_KEY}: nothing inherited under key {k!r}")
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
                if item.get(REMOVE_KEY) is True:
                    self._error(b_prov, (*pb, j), f"{REMOVE_KEY}: no inherited entry named {item['name']!r}")
                    continue
                merged_items.append(self._copy(item, (*pb, j), (*pm, len(merged_items)), b_prov, out))
            return merged_items
        return self._copy(b, pb, pm, b_prov, out)

    def _error(self, prov: Provenance, path: PathTuple, message: str) -> None:
        file, original = prov.get(path, ("<unknown>", path))
        self.errors.append(SpecError(file, format_path(original), message))


def _leftover_remove_markers(data: Any, prov: Provenance) -> list[SpecError]:
    errors = []
    for path, value in _walk(data):
        if _is_remove_marker(value):
            file, original = prov.get(path, ("<unknown>", path))
            errors.append(
                SpecError(file, format_path(original), f"{REMOVE_KEY}: nothing inherited to remove")
            )
    return errors


def load_spec(path: str | os.PathLike[str]) -> LoadedSpec:
    """Load a cluster spec with all its bases merged; raise `SpecErrors` listing every problem.

    Returns the merged document (``extends`` removed) with provenance for error reporting.
    """
    top = Path(path).resolve()
    merger = _Merger()
    loaded = merger.load(top, ())
    if loaded is None or merger.errors:
        raise SpecErrors(merger.errors or [SpecError(display_path(top), "<root>", "cannot load spec")])
    data, prov = loaded
    leftovers = _leftover_remove_markers(data, prov)
    if leftovers:
        raise SpecErrors(leftovers)
    return LoadedSpec(path=top, data=data, provenance=prov, files=merger.files)
