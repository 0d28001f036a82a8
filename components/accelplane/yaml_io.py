"""Strict YAML reading and deterministic YAML writing.

Reading rejects duplicate keys (PyYAML silently keeps the last one, which hides mistakes in a spec)
and reports syntax errors with line and column. Writing sorts keys and never emits anchors, so the
same data always gives the same bytes.
"""

from __future__ import annotations

from typing import Any

import yaml

from accelplane.errors import SpecError


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses duplicate mapping keys."""


def _construct_mapping(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    loader.flatten_mapping(node)
    seen: dict[Any, yaml.Node] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            mark = key_node.start_mark
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r} (line {mark.line + 1}, column {mark.column + 1})", mark
            )
        seen[key] = key_node
    return loader.construct_mapping(node, deep=deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def load_yaml_text(text: str, display_name: str) -> Any:
    """Parse YAML text strictly; raise `SpecError`-carrying ValueError on syntax problems.

    Returns the parsed document (``None`` for an empty file).
    """
    try:
        return yaml.load(text, Loader=_StrictLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "<root>"
        problem = exc.problem or str(exc)
        raise YamlSyntaxError(SpecError(display_name, where, f"invalid YAML: {problem}")) from None
    except yaml.YAMLError as exc:
        raise YamlSyntaxError(SpecError(display_name, "<root>", f"invalid YAML: {exc}")) from None


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


def dump_yaml(data: Any) -> str:
    """Serialise plain data deterministically (sorted keys, block style, no aliases, final newline)."""
    return yaml.dump(
        data, Dumper=_Dumper, sort_keys=True, default_flow_style=False, allow_unicode=True, width=4096
    )


def dump_yaml_documents(docs: list[Any]) -> str:
    """Serialise several documents into one multi-document YAML stream."""
    return "---\n".join(dump_yaml(d) for d in docs)
