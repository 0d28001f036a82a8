"""Fixtures for tests that run real Apache Flink (see tests/support/flink/).

* ``flink_home`` (session): the distribution; fails in CI / skips elsewhere when missing.
* ``flink_java_cache`` (session): where Java jobs are compiled once per session.
* ``gpu_probe_jar`` / ``config_probe_jar`` (session): the probe jobs.
* ``flink_cluster_factory`` (function): builds :class:`FlinkStandalone` sandboxes
  under ``tmp_path`` and stops every one of them in a finalizer, also when the
  test fails.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.flink.errors import HarnessError
from tests.support.flink.home import require_flink_home
from tests.support.flink.java import build_config_probe_jar, build_gpu_probe_jar
from tests.support.flink.standalone import FlinkClusterFactory, FlinkStandalone


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "flink: runs real Apache Flink daemons or Flink's own config parser "
        "(needs Java 17 and the Flink distribution; see tests/support/flink/)",
    )


@pytest.fixture(scope="session")
def flink_home() -> Path:
    """FLINK_HOME of the distribution under test (fails in CI / skips elsewhere if missing)."""
    return require_flink_home()


@pytest.fixture(scope="session")
def flink_java_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Session-wide directory for compiled Java jobs (content-addressed jars)."""
    return tmp_path_factory.mktemp("flink-java-jobs")


@pytest.fixture(scope="session")
def gpu_probe_jar(flink_home: Path, flink_java_cache: Path) -> Path:
    return build_gpu_probe_jar(flink_home, flink_java_cache)


@pytest.fixture(scope="session")
def config_probe_jar(flink_home: Path, flink_java_cache: Path) -> Path:
    return build_config_probe_jar(flink_home, flink_java_cache)


@pytest.fixture
def flink_cluster_factory(
    flink_home: Path, flink_java_cache: Path, tmp_path: Path
) -> Iterator[FlinkClusterFactory]:
    """``make(**FlinkStandalone kwargs) -> FlinkStandalone``; all stopped at teardown.

    ``work_dir`` defaults to ``tmp_path/flink-<n>``; ``flink_home`` and
    ``java_cache_dir`` default to the session fixtures.
    """
    clusters: list[FlinkStandalone] = []

    def make(**kwargs: Any) -> FlinkStandalone:
        kwargs.setdefault("flink_home", flink_home)
        kwargs.setdefault("work_dir", tmp_path / f"flink-{len(clusters)}")
        kwargs.setdefault("java_cache_dir", flink_java_cache)
        cluster = FlinkStandalone(**kwargs)
        clusters.append(cluster)
        return cluster

    yield make

    errors = []
    for cluster in reversed(clusters):
        try:
            cluster.stop()
        except HarnessError as exc:
            errors.append(str(exc))
    if errors:
        pytest.fail("Flink cleanup failed:\n" + "\n".join(errors), pytrace=False)
