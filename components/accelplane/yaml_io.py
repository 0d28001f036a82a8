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

import math
import re
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
    not parse. Keys may hold dots (``nvidia.com/gpu``): the longest key that fits is taken."""
    if path.startswith("line "):
        number = path[5:].split(",", 1)[0]
        return int(number) if number.isdigit() else None
    if path == "<root>":
        return None
    try:
        node: Node | None = yaml.compose(text, Loader=_StrictLoader)
    except yaml.YAMLError:
        return None
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


class _Dumper(yaml.SafeDumper):
    """SafeDumper without aliases, with block-style lists indented under their key."""

    def ignore_aliases(self, data: Any) -> bool:
        return True

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def _str_representer(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    style = "|" if "\n" in data else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(str, _str_representer)


def _pyyaml_dump(data: Any) -> str:
    return yaml.dump(
        data, Dumper=_Dumper, sort_keys=True, default_flow_style=False, allow_unicode=True, width=4096
    )


def dump_yaml(data: Any) -> str:
    """Serialise plain data deterministically (sorted keys, block style, no aliases, final newline).

    The bytes are PyYAML's (`_Dumper`, above): the layout is written here directly, because running
    PyYAML's pure-Python representer, serializer and emitter over every node was most of a render.
    Each distinct string is written once and remembered: plain, single-quoted or as a literal block
    by PyYAML's own rules where they are simple (`_plain_value`, `_single_quoted`, `_literal`: every
    string of the example renders), else rendered by PyYAML itself. Anything the direct writer does
    not cover (infinite floats, non-string keys, very long strings, top-level scalars) goes through
    PyYAML whole; ``tests/foundation/test_yaml_io.py`` compares both writers.
    """
    if isinstance(data, dict) and data:
        out: list[str] = []
        try:
            _emit_mapping(data, "", out, first_inline=False)
        except _Unsupported:
            return _pyyaml_dump(data)
        return "".join(out)
    return _pyyaml_dump(data)


class _Unsupported(Exception):
    """A value the direct writer leaves to PyYAML."""


# str -> (first line after "key:" or "-", block lines or None); PyYAML's own rendering of the string.
_SCALARS: dict[str, tuple[str, tuple[str, ...] | None]] = {}
_LONG = 2000  # PyYAML folds scalars past width=4096 columns; leave anything near that to it
_UNICODE_BREAK = re.compile("[\x85\u2028\u2029]")  # NEL, LS, PS: PyYAML indents after them by context


# Multi-line text PyYAML writes as a literal block without indentation indicator (`_literal`):
# printable ASCII and line breaks only (no tab, no control or Unicode line-break character), not
# starting with a space or a break; the caller also refuses a space before a break or at the end
# (PyYAML's ``analyze_scalar`` allows no block then).
_LITERAL_SAFE = re.compile(r"[\x21-\x7e][\x20-\x7e\n]*")


def _literal(text: str) -> tuple[str, tuple[str, ...]] | None:
    """PyYAML's literal block for multi-line ``text`` (see `_string`) without running PyYAML, for
    the text whose block PyYAML writes without indentation or keep indicator (`_LITERAL_SAFE`,
    ending with at most one line break); None for anything else, which PyYAML renders.

    A render's multi-line strings (Flink configuration and pod templates inside ConfigMaps,
    scripts) are long and nearly all distinct, and PyYAML's pure-Python emitter looks at every
    character: rendering them through it was most of a cold render (a new process's)."""
    if " \n" in text or text.endswith((" ", "\n\n")) or not _LITERAL_SAFE.fullmatch(text):
        return None
    if text.endswith("\n"):
        return " |", tuple(text[:-1].split("\n"))
    return " |-", tuple(text.split("\n"))


# Text PyYAML writes plain (unquoted) wherever it stands (`_plain`): names, paths, label keys,
# quantities. Nothing here is an indicator to PyYAML's ``analyze_scalar`` (no space, no ``:``/``#``,
# no leading ``-``/``.``); whether it would read back as another type is the resolver's call.
_PLAIN_SAFE = re.compile(r"[A-Za-z0-9_/][A-Za-z0-9_./-]{0,199}")
_STR_TAG = "tag:yaml.org,2002:str"


class _CachedResolver(_CachedResolve, yaml.resolver.Resolver):
    """PyYAML's resolver with the loaders' cache of plain scalars' tags (`_CachedResolve`)."""


_RESOLVER = _CachedResolver()


def _plain_tag(text: str) -> str:
    """The tag PyYAML's resolver gives ``text`` written plain (the emitter asks the same to decide
    whether a plain scalar reads back as what was written)."""
    return _RESOLVER.resolve(ScalarNode, text, (True, False))


def _reads_back_as_a_string(text: str) -> bool:
    """Whether PyYAML's resolver gives plain ``text`` the string tag."""
    return _plain_tag(text) == _STR_TAG


def _ends_a_plain_scalar(text: str) -> bool:
    """Whether one line of ``text`` holds what ends a plain scalar or starts a comment in block
    context (``": "``, ``" #"``, a final ``:`` or space): PyYAML never writes it plain."""
    return ": " in text or " #" in text or text.endswith((":", " "))


def _plain(text: str) -> bool:
    """Whether PyYAML writes ``text`` as it is, as a value or a simple key: it matches
    `_PLAIN_SAFE` and reads back as a string (PyYAML's own resolver, which decides it for the
    emitter too: ``yes``, ``null``, ``1e3`` or ``12:30`` are quoted)."""
    return (
        _PLAIN_SAFE.fullmatch(text) is not None
        and _reads_back_as_a_string(text)
    )


# One line of text PyYAML writes plain as a value (`_plain_value`): printable ASCII, at most 1999
# characters (far below the 4096 columns where PyYAML folds; Flink's JVM option list is ~1100), not starting with a space or a character PyYAML's ``analyze_scalar`` may take
# for an indicator there (``? : , [ ] { } # & * ! | > ' " % @ ```, and ``.``, which may start
# ``...``: all refused as first characters, even where PyYAML would accept them); a ``-`` only
# before another printable character and not as ``---`` (command-line flags such as ``-c``).
_PLAIN_VALUE_SAFE = re.compile(r"(?:[A-Za-z0-9_/$(=+;<^~\\]|-(?!--)[\x21-\x7e]|\.(?!\.\.))[\x20-\x7e]{0,1998}")


def _plain_value(text: str) -> bool:
    """Whether PyYAML writes one line of ``text`` as it is as a mapping value or a list item:
    `_plain` names, and prose such as the hardening annotations' reasons, unless it holds what
    would end the scalar or start a comment (``": "``, ``" #"``, a final ``:`` or space) or reads
    back as another type (the resolver's call, as for `_plain`)."""
    return (
        _PLAIN_VALUE_SAFE.fullmatch(text) is not None
        and not _ends_a_plain_scalar(text)
        and _reads_back_as_a_string(text)
    )


# One line of printable ASCII, short enough never to be folded: PyYAML writes it single-quoted
# wherever it does not write it plain (`_single_quoted`).
_QUOTABLE = re.compile(r"[\x20-\x7e]{0,2000}")
# First characters that are an indicator to PyYAML's ``analyze_scalar`` whatever follows them.
_INDICATORS = frozenset("#,[]{}&*!|>'\"%@`")


def _single_quoted(text: str) -> bool:
    """Whether PyYAML writes one line of ``text`` single-quoted as a value or a list item: printable
    ASCII (`_QUOTABLE`, so ``analyze_scalar`` allows single quotes) that PyYAML will not write plain,
    because it reads back as another type (``'1'``, ``''``, ``'yes'``: the resolver's call) or holds
    an indicator that forbids a plain scalar in block context: ``": "`` or ``" #"`` anywhere, a final
    ``:``, a leading or trailing space, a first character in `_INDICATORS`, or a start of ``- ``,
    ``? ``, ``---`` or ``...``. Anything else is left to PyYAML (which may still quote it)."""
    if _QUOTABLE.fullmatch(text) is None:
        return False
    return (
        _ends_a_plain_scalar(text)
        or text.startswith((" ", "- ", "? ", "---", "..."))
        or text[:1] in _INDICATORS
        or text in ("-", "?")
        or not _reads_back_as_a_string(text)
    )


def _string(text: str) -> tuple[str, tuple[str, ...] | None]:
    """How PyYAML writes ``text`` as a mapping value: ``(" plain", None)`` for one line, or
    ``(" |-", lines)`` for a literal block whose lines are relative to the block's indentation.

    Plain and single-quoted text and literal blocks (`_plain_value`, `_single_quoted`, `_literal`)
    are written directly; anything else is rendered by PyYAML once and remembered."""
    hit = _SCALARS.get(text)
    if hit is not None:
        return hit
    if _plain_value(text):
        plain = (f" {text}", None)
        _remember(text, plain)
        return plain
    if _single_quoted(text):
        quoted = (" '" + text.replace("'", "''") + "'", None)
        _remember(text, quoted)
        return quoted
    if "\n" in text:
        literal = _literal(text)
        if literal is not None:
            _remember(text, literal)
            return literal
    if len(text) > _LONG and "\n" not in text:
        raise _Unsupported
    if _UNICODE_BREAK.search(text):
        raise _Unsupported  # line breaks PyYAML indents what follows: context-dependent
    rendered = _pyyaml_dump({"k": text})
    head, _, rest = rendered.partition("\n")
    if not head.startswith("k:"):
        raise _Unsupported
    block: tuple[str, ...] | None = None
    if rest:
        if not head.endswith(("|", "|-", "|+")) and not (head[-2:-1] == "|" or head[-3:-2] == "|"):
            raise _Unsupported  # a folded or multi-line quoted scalar: context-dependent
        lines = rest.split("\n")
        if lines[-1] != "":
            raise _Unsupported
        lines.pop()
        if any(line and not line.startswith("  ") for line in lines):
            raise _Unsupported
        block = tuple(line[2:] for line in lines)
    elif len(head) > _LONG:
        raise _Unsupported
    result = (head[2:], block)
    _remember(text, result)
    return result


def _remember(text: str, rendered: tuple[str, tuple[str, ...] | None]) -> None:
    """Keep ``text``'s rendering for the next time (bounded)."""
    if len(_SCALARS) > 200_000:
        _SCALARS.clear()
    _SCALARS[text] = rendered


def clear_caches() -> None:
    """Forget every rendering and resolution remembered so far: what a new process starts with.

    The caches are keyed by the data (strings, keys, scalars), so rendering the same spec again in
    one process finds everything in them, which a user's process never does; the benchmarks call
    this before every sample so that they measure what a user's render costs."""
    _SCALARS.clear()
    _KEYS.clear()
    _RESOLVED.clear()


_KEYS: dict[str, str] = {}


def _key(key: Any) -> str:
    """How PyYAML writes ``key`` as a simple mapping key (its context differs from a value's)."""
    if not isinstance(key, str):
        raise _Unsupported
    hit = _KEYS.get(key)
    if hit is not None:
        return hit
    if _plain(key):
        _KEYS[key] = key
        return key
    if _UNICODE_BREAK.search(key):
        raise _Unsupported  # line breaks PyYAML indents what follows: context-dependent
    rendered = _pyyaml_dump({key: 0})
    if len(key) > 120 or rendered.startswith("?") or not rendered.endswith(": 0\n") or rendered.count("\n") != 1:
        raise _Unsupported  # PyYAML writes long or multi-line keys as complex keys
    text = rendered[: -len(": 0\n")]
    if len(_KEYS) > 200_000:
        _KEYS.clear()
    _KEYS[key] = text
    return text


_FLOAT_TAG = "tag:yaml.org,2002:float"


def _float(value: float) -> str:
    """How PyYAML writes a finite float (``SafeRepresenter.represent_float``: ``repr``, lower case,
    ``1e+20`` as ``1.0e+20``), plain because its resolver reads it back as a float; anything else
    (infinities, NaN, a repr the resolver would not take for a float) is left to PyYAML."""
    if not math.isfinite(value):
        raise _Unsupported
    text = repr(value).lower()
    if "." not in text and "e" in text:
        text = text.replace("e", ".0e", 1)
    if _plain_tag(text) != _FLOAT_TAG:
        raise _Unsupported
    return text


def _emit_scalar(value: Any, indent: str, out: list[str]) -> None:
    """Append `` value`` (with its leading space) and the line break; ``indent`` is the column of
    the entry the value belongs to (a literal block's lines go two spaces deeper)."""
    if value is None:
        out.append(" null\n")
    elif value is True:
        out.append(" true\n")
    elif value is False:
        out.append(" false\n")
    elif type(value) is int:
        out.append(f" {value}\n")
    elif type(value) is float:
        out.append(f" {_float(value)}\n")
    elif type(value) is str:
        text, block = _string(value)
        out.append(text)
        out.append("\n")
        if block is not None:
            deeper = indent + "  "
            for line in block:
                out.append(f"{deeper}{line}\n" if line else "\n")
    else:
        raise _Unsupported


def _emit_value(value: Any, indent: str, out: list[str]) -> None:
    """Append what follows ``key:`` or ``-`` for ``value``, whose entry is at ``indent``."""
    if type(value) is dict:
        if not value:
            out.append(" {}\n")
        else:
            out.append("\n")
            _emit_mapping(value, indent + "  ", out, first_inline=False)
    elif type(value) is list:
        if not value:
            out.append(" []\n")
        else:
            out.append("\n")
            _emit_sequence(value, indent + "  ", out, first_inline=False)
    else:
        _emit_scalar(value, indent, out)


def _emit_mapping(data: dict[Any, Any], indent: str, out: list[str], first_inline: bool) -> None:
    try:
        keys = sorted(data)
    except TypeError:
        raise _Unsupported from None
    known_keys = _KEYS
    known_scalars = _SCALARS
    for key in keys:
        if first_inline:
            first_inline = False
        else:
            out.append(indent)
        written = known_keys.get(key)  # only strings are remembered; any other key misses
        if written is None:
            written = _key(key)
        value = data[key]
        if type(value) is str:
            # the commonest entry, a one-line string written before, as one piece (`_emit_scalar`)
            hit = known_scalars.get(value)
            if hit is not None and hit[1] is None:
                out.append(f"{written}:{hit[0]}\n")
                continue
        out.append(written)
        out.append(":")
        _emit_value(value, indent, out)


def _emit_sequence(items: list[Any], indent: str, out: list[str], first_inline: bool) -> None:
    for i, item in enumerate(items):
        if not (first_inline and i == 0):
            out.append(indent)
        out.append("-")
        if type(item) is dict and item:
            out.append(" ")
            _emit_mapping(item, indent + "  ", out, first_inline=True)
        elif type(item) is list and item:
            out.append(" ")
            _emit_sequence(item, indent + "  ", out, first_inline=True)
        else:
            _emit_value(item, indent, out)


def dump_yaml_documents(docs: list[Any]) -> str:
    """Serialise several documents into one multi-document YAML stream."""
    return "---\n".join(dump_yaml(d) for d in docs)
