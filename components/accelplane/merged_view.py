"""`accelplane merged`: the spec after ``extends`` (and ``flink.defaults`` merged under each Flink
cluster), each value annotated with the file it came from.

A reviewer asking "where does this value come from?" reads the answer off the line: every scalar
(and every empty list or map) ends with ``# <file>``, plus the path inside that file when it differs
from the merged path (an entry merged by name can sit at another index in its base; an inherited
Flink setting names its ``flink.defaults`` entry). A list or map
names its file on its own line when it comes from another file than its parent. The output is YAML
that loads back to exactly the merged document; strings are always double-quoted, so control
characters are escaped and nothing a spec contains can affect the terminal.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from accelplane.errors import PathTuple, format_path
from accelplane.spec_loader import LoadedSpec, Origin

_PLAIN_KEY = re.compile(r"[A-Za-z$][A-Za-z0-9_.\-/$]*")
_RESERVED = {"y", "n", "yes", "no", "on", "off", "true", "false", "null"}


def _key(key: str) -> str:
    if _PLAIN_KEY.fullmatch(key) and key.lower() not in _RESERVED:
        return key
    return json.dumps(key, ensure_ascii=True)


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return ".nan"
        if math.isinf(value):
            return ".inf" if value > 0 else "-.inf"
        return repr(value)
    return json.dumps(str(value), ensure_ascii=True)


class _Writer:
    def __init__(self, loaded: LoadedSpec) -> None:
        self.prov = loaded.provenance
        self.default = loaded.display_name
        self.lines: list[str] = []

    def origin(self, path: PathTuple) -> Origin:
        for cut in range(len(path), -1, -1):
            found = self.prov.get(path[:cut])
            if found is not None:
                file, original = found
                return file, original + path[cut:]
        return self.default, path

    def note(self, path: PathTuple) -> str:
        file, original = self.origin(path)
        return f"  # {file}" if original == path else f"  # {file} {format_path(original)}"

    def value(self, value: Any, path: PathTuple, indent: str, head: str, parent_file: str) -> None:
        """Emit ``head`` (``key:`` or ``-``) followed by ``value``."""
        if isinstance(value, dict | list) and value:
            file = self.origin(path)[0]
            self.lines.append(f"{indent}{head}" + (f"  # {file}" if file != parent_file else ""))
            if isinstance(value, dict):
                for k, v in value.items():
                    self.value(v, (*path, k), indent + "  ", f"{_key(str(k))}:", file)
            else:
                for i, v in enumerate(value):
                    self.value(v, (*path, i), indent + "  ", "-", file)
            return
        text = (
            ("{}" if isinstance(value, dict) else "[]") if isinstance(value, dict | list) else _scalar(value)
        )
        self.lines.append(f"{indent}{head} {text}{self.note(path)}")


def render_merged(loaded: LoadedSpec) -> str:
    """The merged document as annotated YAML (see the module docstring)."""
    writer = _Writer(loaded)
    writer.lines.append(f"# {loaded.display_name} after extends and flink.defaults; each value names the file it came from")
    for k, v in loaded.data.items():
        writer.value(v, (k,), "", f"{_key(str(k))}:", "")
    return "\n".join(writer.lines) + "\n"
