"""Where things are in the repository and beside it, for every test module and test support module."""

from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
SOURCE_ROOT = REPO_ROOT / "components"
"""Where the `accelplane` import package lives (``components/accelplane``)."""
REFERENCE_DIR = REPO_ROOT.parent / "shared" / "reference"
"""Upstream data files the tests validate against (``../shared/reference`` beside the checkout):
byte-for-byte copies of CRDs, manifests and example configs, each folder with a PROVENANCE.txt.
The project commits none of them (docs/testing.md, 'Reference data')."""


def reference(path: str) -> Path:
    """The file ``path`` (``<folder>/<file>``) under `REFERENCE_DIR`. Fails the calling test, never
    skips it, when the file or the whole ``../shared/reference`` folder is missing: every validation
    that reads it would otherwise pass vacuously."""
    assert REFERENCE_DIR.is_dir(), (
        f"upstream reference data {REFERENCE_DIR} is missing: tests need ../shared/reference beside the "
        "checkout (see docs/testing.md, 'Reference data')"
    )
    p = REFERENCE_DIR / path
    assert p.is_file(), f"reference file {p} missing (see {REFERENCE_DIR / 'README.md'})"
    return p
