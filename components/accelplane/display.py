"""How values and text are shown to people: short values in messages, Markdown escaping, and
control characters escaped.

Every human-readable output (`validate` errors, `report`, `diff`) goes through these, so a spec
value can neither flood a message nor break the Markdown it lands in, nor reach a terminal raw:
a value such as ``"\\x1b]0;owned\\x07"`` or ``"\\x1b[2J"`` printed verbatim would retitle or clear
the reader's terminal, and a bidirectional override (``U+202E``) can make a diff line read
differently from what it is (`escape_controls`; JSON output uses `escape_controls_json`).
"""

from __future__ import annotations

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
        import json  # not at import: `validate` of a valid spec never shows a value

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


_UNSAFE = re.compile(
    "["
    "\x00-\x08\x0b-\x1f\x7f"  # C0 controls except tab and newline, DEL
    "\x80-\x9f"  # C1 controls (0x9b is CSI on 8-bit terminals)
    "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"  # bidirectional marks, embeddings, overrides, isolates
    "\u2028\u2029"  # line and paragraph separators
    "\ud800-\udfff"  # lone surrogates (not text)
    "\ufeff\ufff9-\ufffb\ufffe\uffff"  # BOM, interlinear annotations, noncharacters
    "]"
)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape_controls(text: str, *, newlines: bool = True) -> str:
    """``text`` with every control or invisible direction/format character written as ``\\xNN`` or
    ``\\uNNNN``, so what a terminal shows is exactly what is there. Tabs stay; newlines stay unless
    ``newlines`` is False (then ``\\n``). Text without such characters is returned unchanged."""
    out = _UNSAFE.sub(_escape, text)
    return out if newlines else out.replace("\n", "\\n")


def has_controls(text: str) -> bool:
    """True when `escape_controls` would change ``text`` (newlines and tabs excepted)."""
    return _UNSAFE.search(text) is not None


def escape_controls_json(text: str) -> str:
    """A JSON document with the same characters escaped as ``\\uNNNN`` (the encoder already escapes
    C0 controls; DEL, C1 controls and direction overrides it leaves raw). Same data, safe on a
    terminal."""
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


_COMMAND_START = re.compile(r"^([ \t]*):(?=:)")


def plain_line(text: str) -> str:
    """``text`` on one line (`escape_controls` with newlines escaped) that GitHub Actions cannot
    read as a workflow command: a leading ``::`` (after blanks) is written ``\\x3a:`` and every
    ``##[`` ``#\\x23[``. The runner parses a line whose trimmed start is ``::`` (actions/runner
    ``ActionCommand.TryParseV2``) and, in its older syntax, ``##[`` anywhere in a line
    (``ActionCommand.TryParse``), so a spec file name, key or value could otherwise make text
    output annotate files or set outputs in a CI log. Only ``--format github`` writes commands."""
    line = escape_controls(text, newlines=False).replace("##[", "#\\x23[")
    return _COMMAND_START.sub(lambda m: f"{m.group(1)}\\x3a", line)
