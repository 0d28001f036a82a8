"""Helpers to validate and render specs in-process for tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from accelplane.artifacts import Bundle
from accelplane.pipeline import render_spec


def bundle_for(spec_path: Path | str) -> Bundle:
    """Validated spec → the bundle every consumer sees."""
    return render_spec(spec_path).bundle


def files_for(spec_path: Path | str) -> dict[str, tuple[str, int]]:
    """Validated spec → ``{relative path: (text, mode)}`` exactly as `render` writes it."""
    return render_spec(spec_path).files


def objects_for(spec_path: Path | str) -> list[dict[str, Any]]:
    """Validated spec → every Kubernetes manifest, parsed back from the rendered YAML text."""
    return [
        yaml.safe_load(text)
        for path, (text, _) in files_for(spec_path).items()
        if path.startswith("kubernetes/")
    ]
