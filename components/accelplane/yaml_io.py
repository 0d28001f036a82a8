"""Strict, bounded YAML reading and deterministic YAML writing.

Reading rejects duplicate keys (PyYAML silently keeps the last one, which hides mistakes in a spec)
but lets keys override what a YAML merge key (``<<: *anchor``) brought in, as the merge-key spec
says. It is bounded, so hostile input fails fast with a located error instead of exhausting memory
or the stack: nesting deeper than `MAX_NESTING`, alias/merge expansion beyond `MAX_EXPANDED_NODES`
(the "billion laughs" bomb), integers longer than `MAX_INT_DIGITS` and mapping keys that are not
plain strings are rejected. Syntax errors carry line and column. Writing sorts keys and never emits
anchors, so the same data always gives the same bytes.

With libyaml, it reads the text (scanner, parser and, where libyaml bounds nesting itself, composer:
several times faster than PyYAML's pure-Python ones), and PyYAML's constructor, with the same bounds,
builds the document; anything refused is read again by the pure-Python loader, so messages and
positions do not depend on libyaml.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from accelplane.errors import SpecError
from accelplane.findings import ERROR, declare

YAML_INVALID = declare(
    "AP1202", ERROR, "a spec file is not valid YAML (or uses a YAML feature specs refuse)",
    fix="fix the YAML at the line and column named",
)

# A spec nests about 8 levels; 50 leaves room for free-form Flink config and stops RecursionError.
MAX_NESTING = 50
# Nodes after expanding every alias and merge key: a legitimate spec reuses anchors a few times, a
# bomb multiplies them. Over the floor, the expanded document may be at most RATIO × the written one.
MAX_EXPANDED_NODES = 100_000
MAX_EXPANSION_RATIO = 10
# Integers in a spec are counts and priorities; a few thousand digits only cost CPU to parse.
MAX_INT_DIGITS = 100


class _ExpansionBound:
    """Checks the composed node graph (`_check_expansion`: nesting, alias expansion) before anything
    is constructed from it, whichever composer built it."""

    def get_single_node(self) -> Node | None:
        node: Node | None = super().get_single_node()  # type: ignore[misc]
        if node is not None:
            _check_expansion(node)
        return node


class _Bounds(_ExpansionBound):
    """The bounds every spec loader on PyYAML's Python composer applies (whichever parser produces
    the events): nesting while composing, alias expansion (`_ExpansionBound`); the strict
    constructor bounds integer length."""

    _nesting: int

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        if self._nesting >= MAX_NESTING:
            event = self.peek_event()  # type: ignore[attr-defined]
            raise yaml.composer.ComposerError(
                None, None, f"nesting deeper than {MAX_NESTING} levels", event.start_mark
            )
        self._nesting += 1
        try:
            node: Node | None = super().compose_node(parent, index)  # type: ignore[misc]
            return node
        finally:
            self._nesting -= 1


_RESOLVED: dict[str, str] = {}
"""Plain scalar → its implicit tag, shared by the libyaml loaders (`_CachedResolve`)."""


class _CachedResolve:
    """`yaml.resolver.Resolver.resolve` remembering each plain scalar's tag: a spec repeats its
    values (``nvidia.com/gpu``, pool and queue names, ``true``), and each first-character lookup
    and regular-expression match was a Python call per scalar. With no path resolvers (none is
    ever added to these loaders) a plain scalar's tag depends on its text alone."""

    def resolve(self, kind: type[Node], value: Any, implicit: tuple[bool, bool]) -> str:
        if kind is ScalarNode and implicit[0]:
            tag = _RESOLVED.get(value)
            if tag is None:
                tag = super().resolve(kind, value, implicit)  # type: ignore[misc]
                if len(_RESOLVED) > 100_000:
                    _RESOLVED.clear()
                _RESOLVED[value] = tag
            return tag
        resolved: str = super().resolve(kind, value, implicit)  # type: ignore[misc]
        return resolved


def _construct_int(loader: _StrictLoader, node: ScalarNode) -> int:
    """An integer, refused with a located error when it has more than `MAX_INT_DIGITS` digits."""
    digits = sum(c.isdigit() for c in str(node.value))
    if digits > MAX_INT_DIGITS:
        raise yaml.constructor.ConstructorError(
            None, None, f"integer with {digits} digits (at most {MAX_INT_DIGITS})", node.start_mark
        )
    return loader.construct_yaml_int(node)


class _StrictLoader(_Bounds, yaml.SafeLoader):
    """SafeLoader that refuses duplicate keys, deep nesting, alias bombs, huge integers and non-string keys."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._nesting = 0


def _is_shallow_tree(root: Node) -> bool:
    """True when no node of the graph is reached twice (the document has no alias, so nothing
    expands) and it nests at most `MAX_NESTING` levels: what almost every spec is, checked a level
    at a time with C-speed set and list operations. False means `_check_expansion`'s full walk
    decides. A level whose nodes are all distinct has at most the written nodes' children, so
    this never expands a bomb: it stops at the first level holding a node twice."""
    level: list[Node] = [root]
    seen: set[int] = set()
    visits = 0
    for _ in range(MAX_NESTING):
        seen.update(map(id, level))
        visits += len(level)
        if len(seen) != visits:
            return False
        below: list[Node] = []
        for node in level:
            if type(node) is MappingNode:
                for pair in node.value:
                    below.extend(pair)
            elif type(node) is SequenceNode:
                below.extend(node.value)
        if not below:
            return True
        level = below
    return False


def _check_expansion(root: Node) -> None:
    """Raise a located error when expanding aliases would nest too deep or build too many nodes.

    Works on the composed node graph, where an alias is a second reference to the anchored node, so
    a bomb costs only its written size here. Each distinct node is measured once (memoised), unless
    the graph is a shallow tree (`_is_shallow_tree`), where there is nothing to find.
    """
    if _is_shallow_tree(root):
        return
    memo: dict[int, tuple[int, int]] = {}  # id(node) -> (expanded nodes, expanded height)

    def measure(node: Node, depth: int) -> tuple[int, int]:
        known = memo.get(id(node))
        if known is not None:
            size, height = known
        else:
            if depth > MAX_NESTING:
                raise yaml.composer.ComposerError(
                    None,
                    None,
                    f"nesting deeper than {MAX_NESTING} levels once aliases are expanded",
                    node.start_mark,
                )
            size, height = 1, 1
            if isinstance(node, SequenceNode):
                children: list[Node] = list(node.value)
            elif isinstance(node, MappingNode):
                children = [n for pair in node.value for n in pair]
            else:
                children = []
            for child in children:
                s, h = measure(child, depth + 1)
                size += s
                height = max(height, h + 1)
            memo[id(node)] = (size, height)
        if depth + height - 1 > MAX_NESTING:
            raise yaml.composer.ComposerError(
                None,
                None,
                f"nesting deeper than {MAX_NESTING} levels once aliases are expanded",
                node.start_mark,
            )
        if size > MAX_EXPANDED_NODES and size > MAX_EXPANSION_RATIO * len(memo):
            raise yaml.composer.ComposerError(
                None,
                None,
                f"aliases expand to more than {max(MAX_EXPANDED_NODES, MAX_EXPANSION_RATIO * len(memo)):,} "
                f"nodes ({MAX_EXPANSION_RATIO}× the {len(memo):,} written); refusing an alias bomb",
                node.start_mark,
            )
        return size, height

    measure(root, 1)


def _construct_mapping(loader: _StrictLoader, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
    seen: dict[Any, Node] = {}
    for key_node, _ in node.value:
        mark = key_node.start_mark
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue
        if not isinstance(key_node, ScalarNode):
            kind = "a list" if isinstance(key_node, SequenceNode) else "a mapping"
            raise yaml.constructor.ConstructorError(
                None, None, f"a mapping key must be a plain string, not {kind}", mark
            )
        key = loader.construct_object(key_node, deep=deep)
        if not isinstance(key, str):
            raise yaml.constructor.ConstructorError(
                None, None, f"mapping key {key_node.value!r} must be a string (quote it)", mark
            )
        if key in seen:
            first = seen[key].start_mark
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"duplicate key {key!r} (first at line {first.line + 1}, column {first.column + 1})",
                mark,
            )
        seen[key] = key_node
    # merge keys: keys written in this mapping override merged ones (flatten puts merges first)
    loader.flatten_mapping(node)
    return loader.construct_mapping(node, deep=deep)


def _strict_constructors(loader: type[Any]) -> None:
    """Give ``loader`` the strict constructors (duplicate and non-string keys, integer length)."""
    loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
    loader.add_constructor("tag:yaml.org,2002:int", _construct_int)


_strict_constructors(_StrictLoader)

_FastLoader: type[Any] | None = None
if getattr(yaml, "__with_libyaml__", False):
    from yaml._yaml import CParser

    class _CStrictLoader(
        _CachedResolve,
        _Bounds,
        yaml.composer.Composer,
        CParser,
        yaml.constructor.SafeConstructor,
        yaml.resolver.Resolver,
    ):
        """libyaml's scanner and parser (events), PyYAML's Python composer and strict constructor.

        The composer comes before `yaml.cyaml.CParser` in the method order, so `_Bounds` sees every node
        being composed (nesting) and the composed graph (alias expansion) exactly as in
        `_StrictLoader`; libyaml's own composer, which has no such bounds, is never called. The fast
        loader where libyaml does not bound nesting itself (`_libyaml_bounds_nesting`)."""

        def __init__(self, stream: str) -> None:
            CParser.__init__(self, stream)
            yaml.composer.Composer.__init__(self)
            yaml.constructor.SafeConstructor.__init__(self)
            yaml.resolver.Resolver.__init__(self)
            self._nesting = 0

    _strict_constructors(_CStrictLoader)

    class _CComposedLoader(_CachedResolve, _ExpansionBound, yaml.CSafeLoader):
        """libyaml's scanner, parser and composer (PyYAML's C loader), then `_check_expansion` on the
        composed graph and the strict constructor: the fast loader where libyaml bounds nesting.

        The composed graph holds every node once (an alias is a second reference), so checking it
        before anything is constructed refuses deep nesting and alias bombs as `_StrictLoader` does;
        libyaml's composer recurses in C once per level, which its own nesting limit keeps shallow.
        About a fifth of `_CStrictLoader`'s time, whose Python composer was most of a spec's load."""

    _strict_constructors(_CComposedLoader)

    def _libyaml_bounds_nesting() -> bool:
        """Whether libyaml refuses deep nesting itself (since 0.2.6: 1,000 levels by default), which
        keeps its recursive C composer off the C stack's limit; older releases compose any depth."""
        depth = 1_001
        try:
            yaml.compose("[" * depth + "]" * depth, Loader=yaml.CSafeLoader)
        except yaml.YAMLError:
            return True
        return False

    _FastLoader = _CComposedLoader if _libyaml_bounds_nesting() else _CStrictLoader


def load_yaml_text(text: str, display_name: str) -> Any:
    """Parse YAML text strictly; raise `SpecError`-carrying ValueError on syntax problems.

    Returns the parsed document (``None`` for an empty file). libyaml's parser reads the text
    when PyYAML has it; any problem is reported by the pure-Python parser, so the messages, lines
    and columns are the same with and without libyaml.
    """
    # the fast loader has `_StrictLoader`'s bounds; whatever it refuses, the strict loader reads
    # again to report the problem
    if _FastLoader is not None:
        try:
            return yaml.load(text, Loader=_FastLoader)
        except yaml.YAMLError:
            pass
    try:
        return yaml.load(text, Loader=_StrictLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "<root>"
        problem = exc.problem or str(exc)
        raise YamlSyntaxError(SpecError(display_name, where, f"invalid YAML: {problem}", YAML_INVALID)) from None
    except yaml.YAMLError as exc:
        raise YamlSyntaxError(SpecError(display_name, "<root>", f"invalid YAML: {exc}", YAML_INVALID)) from None


def line_of(text: str, path: str) -> int | None:
    """The 1-based line where ``path`` (as `accelplane.errors.format_path` writes it) is in the YAML
    ``text``: the key of the deepest node the path reaches (a missing field points at its parent),
    the line a syntax error names (``line L, column C``), None for the whole file or text that does
    not parse. Keys may hold dots (``nvidia.com/gpu``): the longest key that fits is taken.

    Composes ``text`` each call; for many paths of one file use `YamlLines` (composes once)."""
    return YamlLines(text).line(path)


class YamlLines:
    """The lines of paths in one YAML text, composed once, on the first path that needs the tree:
    `line` for 2,000 findings of one file costs one compose, not 2,000 (issue 37)."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._root: Node | None = None
        self._composed = False

    def _tree(self) -> Node | None:
        if not self._composed:
            self._composed = True
            try:  # libyaml where present (the loader read this text with it already), same bounds
                self._root = yaml.compose(self._text, Loader=_FastLoader or _StrictLoader)
            except yaml.YAMLError:
                self._root = None
        return self._root

    def line(self, path: str) -> int | None:
        """The line of ``path`` as `line_of` finds it."""
        if path.startswith("line "):
            number = path[5:].split(",", 1)[0]
            return int(number) if number.isdigit() else None
        if path == "<root>":
            return None
        return _line_in(self._tree(), path)


def _line_in(node: Node | None, path: str) -> int | None:
    line: int | None = None
    rest = path
    while rest and node is not None:
        found: tuple[str, Node, Node] | None = None
        if isinstance(node, MappingNode):
            for key, value in node.value:
                k = str(key.value) if isinstance(key, ScalarNode) else ""
                fits = k and rest.startswith(k) and rest[len(k) : len(k) + 1] in ("", ".", "[")
                if fits and (found is None or len(k) > len(found[0])):
                    found = (k, key, value)
        elif isinstance(node, SequenceNode) and rest.startswith("["):
            index = rest[1:].partition("]")[0]
            if index.isdigit() and int(index) < len(node.value):
                item = node.value[int(index)]
                found = (f"[{index}]", item, item)
        if found is None:
            break
        taken, key_node, node = found
        line = key_node.start_mark.line + 1
        rest = rest[len(taken) :].removeprefix(".")
    return line


class YamlSyntaxError(ValueError):
    """A YAML document that does not parse; carries the located error."""

    def __init__(self, error: SpecError):
        super().__init__(str(error))
        self.error = error


class _Dumper(yaml.CSafeDumper):
    """libyaml's emitter (`yaml.CSafeDumper`) with PyYAML's safe representer, never writing aliases.

    Lists are written as libyaml writes them, not indented under their key (``key:\n- a``): the C
    emitter does not consult PyYAML's ``increase_indent``, so the override other tools use with the
    pure-Python dumper would change nothing here. Every YAML reader reads both layouts alike."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _str_representer(dumper: _Dumper, data: str) -> yaml.Node:
    """A string with a line break as a literal block (``|``, where libyaml allows one), else as
    libyaml chooses (plain, or quoted where plain would read back as something else)."""
    style = "|" if "\n" in data else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", str(data), style=style)


_Dumper.add_representer(str, _str_representer)
_Dumper.add_multi_representer(str, _str_representer)  # str subclasses (a StrEnum) as their text


_DUMP_OPTIONS: dict[str, Any] = {"sort_keys": True, "default_flow_style": False, "allow_unicode": True, "width": 4096}


def dump_yaml(data: Any) -> str:
    """Serialise plain data deterministically: sorted keys, block style, no aliases, literal blocks
    for multi-line strings, one final newline (libyaml's emitter, `_Dumper`). A `Represented`
    mapping inside ``data`` contributes the node it was represented as once."""
    text: str = yaml.dump(data, Dumper=_Dumper, **_DUMP_OPTIONS)
    return text


class Represented(dict[str, Any]):
    """A mapping represented as a YAML node once (`represented`), which every `dump_yaml` of data
    containing it reuses instead of representing it again — PyYAML's Python representer is the
    costly part of a dump, libyaml's emitter is not. The same object appears in several documents
    (an operator cluster's pod template: its own file and the FlinkDeployment embedding it), so it
    must not be modified after `represented` (the node would no longer match). Once the documents
    sharing it are serialised, `release` drops the node (a node tree kept alive costs every later
    garbage collection more than representing the mapping again would); later dumps then
    represent it as a plain mapping."""

    __slots__ = ("node",)
    node: yaml.Node | None

    def release(self) -> None:
        """Drop the node (see the class docstring)."""
        self.node = None


def represented(data: Mapping[str, Any]) -> Represented:
    """A `Represented` copy of ``data`` (its nested values shared), with its node built as
    `dump_yaml` builds one (same representers, same options)."""
    copy = Represented(data)
    dumper = _Dumper(io.StringIO(), **_DUMP_OPTIONS)
    try:
        copy.node = dumper.represent_data(dict(copy))
    finally:
        dumper.dispose()
    return copy


def _represented_representer(dumper: _Dumper, data: Represented) -> yaml.Node:
    if data.node is None:
        node: yaml.Node = dumper.represent_dict(data)
        return node
    return data.node


_Dumper.add_representer(Represented, _represented_representer)


def clear_caches() -> None:
    """Forget the loaders' remembered tags of plain scalars (`_CachedResolve`): what a new process
    starts with (the benchmarks call it before each sample)."""
    _RESOLVED.clear()


def dump_yaml_documents(docs: list[Any]) -> str:
    """Serialise several documents into one multi-document YAML stream."""
    return "---\n".join(dump_yaml(d) for d in docs)
