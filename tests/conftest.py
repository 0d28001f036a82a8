"""Shared fixtures: paths, spec writing and rendering helpers."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.paths import REFERENCE_DIR, REPO_ROOT
from tests.support.specs import SpecSource, WriteSpec
from tests.support.specs import write_spec as write_spec_file

STACKS_DIR = REPO_ROOT / "stacks"
EXAMPLE_SPECS = sorted(p for p in STACKS_DIR.glob("*.yaml") if not p.name.startswith("Pulumi."))


@pytest.fixture
def repo_root() -> Path:
    """The repository root."""
    return REPO_ROOT


@pytest.fixture
def reference_dir() -> Path:
    """../shared/reference (upstream data files byte for byte, with provenance); fails when missing."""
    assert REFERENCE_DIR.is_dir(), f"{REFERENCE_DIR} missing: tests need ../shared/reference beside the checkout"
    return REFERENCE_DIR


@pytest.fixture
def write_spec(tmp_path: Path) -> WriteSpec:
    """`tests.support.specs.write_spec` into ``tmp_path``: ``write_spec(spec, name="spec.yaml")``."""

    def _write(spec: SpecSource, name: str = "spec.yaml") -> Path:
        return write_spec_file(tmp_path, spec, name)

    return _write


# Fixtures that start a JVM (real Flink, or Hadoop's classes): a test using one carries the marker
# even if its module forgot it, so `make test-quick` (-m "not flink and not hadoop and not slow")
# never needs Java. Tests that run Java without these fixtures mark themselves.
JAVA_FIXTURES = {
    "flink_home": "flink",
    "flink_java_cache": "flink",
    "gpu_probe_jar": "flink",
    "config_probe_jar": "flink",
    "flink_cluster_factory": "flink",
    "hadoop_probe": "hadoop",
    "flink_yarn_probe": "hadoop",
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        used = getattr(item, "fixturenames", ())
        for fixture, marker in JAVA_FIXTURES.items():
            if fixture in used and item.get_closest_marker(marker) is None:
                item.add_marker(marker)
