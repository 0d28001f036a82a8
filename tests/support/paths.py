"""Where things are in the repository and beside it, for every test module and test support module."""

from __future__ import annotations

import os
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


def host_dirs(tmp_path: Path, coordination_name: str = "coord") -> tuple[Path, Path]:
    """A discovery install directory and a coordination file for a test that runs rendered host
    scripts, unique per test: both in ``/run`` (root-owned, cleared at reboot, never below the
    world-writable ``/tmp`` that AP8060 refuses for the install directory), the coordination file
    in a directory accelplane owns (``/run/accelplane-t…``), the install directory beside it
    (``…-bin``, outside the coordination directory as AP8005 requires). Returns (install
    directory, created; coordination file, its directory created)."""
    base = f"/run/accelplane-t{os.getpid()}{abs(hash(str(tmp_path))) % 10**8}"
    install, coordination = Path(f"{base}-bin"), Path(base) / coordination_name
    install.mkdir(parents=True, exist_ok=True)
    coordination.parent.mkdir(parents=True, exist_ok=True)  # as node/provision.sh prepares it
    return install, coordination
