"""Content digests: the one sha256 of the package.

A text is hashed as it is written (UTF-8), so `sha256` of a rendered file's text is what `sha256sum`
prints for the file; the short form names content-addressed objects (a new content, a new name).
"""

from __future__ import annotations

import hashlib


def sha256(content: str | bytes) -> str:
    """Hex sha256 of ``content`` (a text as UTF-8): the digest `sha256sum` prints for the file."""
    return hashlib.sha256(content.encode("utf-8") if isinstance(content, str) else content).hexdigest()


def short_sha256(content: str | bytes, length: int = 10) -> str:
    """The first ``length`` hex digits of `sha256`, for content-addressed names and short labels."""
    return sha256(content)[:length]
