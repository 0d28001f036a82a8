"""Finding the Flink distribution under test and a JDK, and what the distribution ships.

Order: ``$ACCELPLANE_FLINK_HOME`` (if set it must be valid), then ``<repo>/.venv/flink/pyflink``
(where ``make flink`` installs it); `require_flink_home` fails the test when ``$CI`` is set and
skips it otherwise.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping
from pathlib import Path

import yaml

from tests.support.paths import REPO_ROOT

FLINK_HOME_ENV = "ACCELPLANE_FLINK_HOME"
DEFAULT_FLINK_HOME_CANDIDATES: tuple[Path, ...] = (REPO_ROOT / ".venv" / "flink" / "pyflink",)
"""Where `find_flink_home` looks when ``$ACCELPLANE_FLINK_HOME`` is unset (``make flink`` installs there)."""

#: Install hint shown when Flink cannot be found.
FLINK_INSTALL_HINT = (
    "install it with `pip install --no-deps --target .venv/flink "
    "apache-flink==1.20.5 apache-flink-libraries==1.20.5` or point "
    f"${FLINK_HOME_ENV} at an unpacked distribution (the directory holding "
    "bin/, lib/flink-dist-*.jar and conf/)"
)


class FlinkHomeNotFound(LookupError):
    """No usable Flink distribution was found."""


def _flink_home_problem(path: Path) -> str | None:
    """Why ``path`` is not a usable Flink distribution, or ``None`` if it is."""
    if not path.is_dir():
        return f"{path} is not a directory"
    missing = [
        rel
        for rel in ("bin/jobmanager.sh", "bin/taskmanager.sh", "bin/flink", "conf")
        if not (path / rel).exists()
    ]
    if not list((path / "lib").glob("flink-dist*.jar")):
        missing.append("lib/flink-dist-*.jar")
    if missing:
        return f"{path} lacks {', '.join(missing)}"
    return None


def find_flink_home() -> Path:
    """Return the Flink distribution directory (``FLINK_HOME``) to test with.

    Order: ``$ACCELPLANE_FLINK_HOME`` (if set it must be valid -- no silent
    fallback), ``<repo>/.venv/flink/pyflink`` (where ``pip install --no-deps
    --target .venv/flink apache-flink==1.20.5 apache-flink-libraries==1.20.5``,
    i.e. ``make flink``, puts it).

    Raises :class:`FlinkHomeNotFound` naming everything that was tried.
    """
    explicit = os.environ.get(FLINK_HOME_ENV)
    if explicit:
        path = Path(explicit).expanduser().resolve()
        problem = _flink_home_problem(path)
        if problem:
            raise FlinkHomeNotFound(f"${FLINK_HOME_ENV}={explicit!r}: {problem}")
        return path
    problems = []
    for candidate in DEFAULT_FLINK_HOME_CANDIDATES:
        problem = _flink_home_problem(candidate)
        if problem is None:
            return candidate.resolve()
        problems.append(problem)
    raise FlinkHomeNotFound(
        f"no Flink distribution found (${FLINK_HOME_ENV} unset; "
        + "; ".join(problems)
        + f"); {FLINK_INSTALL_HINT}"
    )


def _missing_java_tools() -> list[str]:
    return [tool for tool in ("java", "javac", "jar") if shutil.which(tool) is None]


def require_flink_home() -> Path:
    """:func:`find_flink_home` for tests: fail in CI, skip elsewhere.

    Also requires ``java``, ``javac`` and ``jar`` on ``PATH``.  When something
    is missing the current test FAILS if ``$CI`` is set (non-empty) and is
    SKIPPED with the reason otherwise.  An explicitly set but broken
    ``$ACCELPLANE_FLINK_HOME`` always fails (it is a misconfiguration, not a
    missing optional dependency).  Usable from fixtures of any scope.
    """
    import pytest  # local: the module is importable without pytest

    try:
        home = find_flink_home()
    except FlinkHomeNotFound as exc:
        if os.environ.get("CI") or os.environ.get(FLINK_HOME_ENV):
            pytest.fail(f"real-Flink tests need Flink: {exc}", pytrace=False)
        pytest.skip(f"real-Flink tests need Flink: {exc}")
    missing = _missing_java_tools()
    if missing:
        message = f"real-Flink tests need a JDK (17): {', '.join(missing)} not on PATH"
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return home


def flink_version(flink_home: Path) -> str:
    """Version from ``lib/flink-dist-<version>.jar`` (e.g. ``1.20.5``)."""
    for jar in sorted((flink_home / "lib").glob("flink-dist*.jar")):
        match = re.fullmatch(r"flink-dist(?:_[0-9.]+)?-(.+)\.jar", jar.name)
        if match:
            return match.group(1)
    raise FlinkHomeNotFound(f"no lib/flink-dist-<version>.jar in {flink_home}")


def gpu_plugin_dir(flink_home: Path) -> Path:
    """``<flink>/plugins/external-resource-gpu`` (GPU driver jar + Flink's scripts)."""
    return flink_home / "plugins" / "external-resource-gpu"


def flink_gpu_discovery_script(flink_home: Path) -> Path:
    """Flink's own ``nvidia-gpu-discovery.sh``."""
    return gpu_plugin_dir(flink_home) / "nvidia-gpu-discovery.sh"


def _flatten_yaml(node: object, prefix: str = "") -> dict[str, object]:
    """Flatten nested mappings to dotted keys, later entries winning (like Flink)."""
    flat: dict[str, object] = {}
    if isinstance(node, Mapping):
        for key, value in node.items():
            full = f"{prefix}{key}"
            if isinstance(value, Mapping):
                flat.update(_flatten_yaml(value, full + "."))
            else:
                flat[full] = value
    return flat


def java_opts_from_distribution(flink_home: Path) -> str:
    """``env.java.opts.all`` of ``<flink>/conf/config.yaml`` (nested or flat).

    On Java 17 the Flink daemons *and* the ``flink`` CLI need this
    ``--add-exports/--add-opens`` list.  A hand-written (mapping) sandbox config
    gets it, as a user editing the distribution's file keeps it; a rendered file
    must carry it itself (accelplane writes it: `accelplane.derive.flink_java`,
    whose copy a test compares with this).  Returns ``""`` when the distribution
    does not set it.
    """
    conf = flink_home / "conf" / "config.yaml"
    if not conf.is_file():
        return ""
    data = yaml.safe_load(conf.read_text(encoding="utf-8")) or {}
    value = _flatten_yaml(data).get("env.java.opts.all", "")
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    return str(value or "")
