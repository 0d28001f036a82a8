"""Reading the CLI's finding lines in tests: ``file: path: severity code: message``."""

from __future__ import annotations

import re

FINDING_LINE = re.compile(r"^(?P<file>.+?): (?P<path>.+?): (?P<severity>error|warning)(?: (?P<code>AP\d{4}))?: ")
_TAG = re.compile(r": (?:error|warning)(?: AP\d{4})?: ")


def without_tags(text: str) -> str:
    """``text`` with each finding's ``severity code: `` removed (``file: path: message``), so a test
    can look for the message where it cares only about the message."""
    return _TAG.sub(": ", text)


def codes(text: str) -> list[str]:
    """The codes of the finding lines in ``text``, in order."""
    return [m.group("code") for line in text.splitlines() if (m := FINDING_LINE.match(line)) and m.group("code")]
