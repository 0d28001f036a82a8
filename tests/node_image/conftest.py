"""Fixtures the node provisioning tests share (provision.sh run against a fake root)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.node_provisioning import FULL_SPEC, write_rendered
from tests.support.render import files_for


@pytest.fixture
def rendered(write_spec: Callable[..., Path], tmp_path: Path) -> Path:
    """The FULL_SPEC render written to disk."""
    return write_rendered(files_for(write_spec(FULL_SPEC)), tmp_path / "out")


@pytest.fixture
def fake_root() -> Iterator[Path]:
    """An empty directory every user may traverse (the discovery script runs as another uid when we are root)."""
    root = Path(tempfile.mkdtemp(prefix="accelplane-root-"))
    root.chmod(0o755)
    yield root
    shutil.rmtree(root)
