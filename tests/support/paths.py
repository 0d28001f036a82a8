"""Where things are in the repository, for every test module and test support module."""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
SOURCE_ROOT = REPO_ROOT / "components"
"""Where the `accelplane` import package lives (``components/accelplane``)."""
REFERENCE_DIR = REPO_ROOT / "tests" / "upstream"
"""Upstream files the tests validate against, byte for byte, with provenance."""

SHARED_REFERENCE_DIR = Path(os.environ.get("ACCELPLANE_SHARED_REFERENCE", REPO_ROOT.parent / "shared" / "reference"))
"""Upstream data files tests read but the repository never commits (``../shared/reference``, read-only;
``ACCELPLANE_SHARED_REFERENCE`` names another copy)."""
