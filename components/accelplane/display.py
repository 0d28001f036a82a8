"""How values and text are shown to people: short values in messages, Markdown escaping.

Every human-readable output (`validate` errors, `report`, `diff`) goes through these, so a spec
value can neither flood a message nor break the Markdown it lands in.
"""

from __future__ import annotations

import json
import re
from typing import Any

_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|~#&!])")


def short_repr(value: object, limit: int = 60) -> str:
    """``repr`` of a value, shortened so a huge value can't flood an error message."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[: limit - 15]}…' ({len(str(value))} chars)"


def show_value(value: Any) -> str:
    """A value as a reviewer reads it: ``unset``, ``true``/``false``, strings bare, lists and maps as
    compact JSON."""
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, list | dict):
        return json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str)
    return str(value)


def md_text(text: str) -> str:
    """Plain text safe in Markdown paragraphs and table cells (punctuation backslash-escaped)."""
    return _MD_SPECIAL.sub(r"\\\1", text.replace("\n", " "))


def md_code(text: str) -> str:
    """A code span safe in a GFM table cell: backtick fence longer than any run inside, ``|`` escaped."""
    text = text.replace("\n", " ")
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = (
        " "
        if text.startswith("`") or text.endswith("`") or (text.startswith(" ") and text.endswith(" "))
        else ""
    )
    return f"{fence}{pad}{text.replace('|', chr(92) + '|')}{pad}{fence}"


def md_fence(lines: list[str], lang: str = "diff") -> list[str]:
    """A fenced code block whose fence is longer than any backtick run in ``lines``."""
    longest = max((len(m) for line in lines for m in re.findall(r"`+", line)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}{lang}", *lines, fence]
