"""Locate the data directories (`templates/`, `schemas/`) in a clone and in an installed wheel.

In a wheel they are packaged as ``accelplane/_data/<name>`` (see ``pyproject.toml``); in a clone or an
editable install they are the repository's top-level directories (the package lives in
``components/accelplane``).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


@cache
def data_dir(name: str) -> Path:
    """Return the directory holding ``name`` (``"templates"`` or ``"schemas"``); raise if missing."""
    for candidate in (_PACKAGE_DIR / "_data" / name, _PACKAGE_DIR.parent.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"accelplane data directory {name!r} not found (broken installation?)")


def schema_path() -> Path:
    """Path of the spec JSON Schema."""
    return data_dir("schemas") / "spec.schema.json"
