"""Where things are in the repository, for every test module and test support module."""

from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
SOURCE_ROOT = REPO_ROOT / "components"
"""Where the `accelplane` import package lives (``components/accelplane``)."""
REFERENCE_DIR = REPO_ROOT / "tests" / "upstream"
"""Upstream files the tests validate against, byte for byte, with provenance."""
