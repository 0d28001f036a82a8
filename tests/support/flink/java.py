"""Compiling small Java jobs (the probes in ``java/``) against the Flink distribution's ``lib/*``."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from tests.support.flink.errors import HarnessError
from tests.support.flink.home import flink_version
from tests.support.flink.processes import run_checked

JAVA_SOURCES_DIR = Path(__file__).resolve().parent / "java"
GPU_PROBE_SOURCE = JAVA_SOURCES_DIR / "GpuProbe.java"
CONFIG_PROBE_SOURCE = JAVA_SOURCES_DIR / "ConfigProbe.java"

#: JVM flags that cut JVM CPU time by ~40% for short-lived test JVMs on small
#: machines (C1 only, no hsperfdata files).  Put into ``JAVA_TOOL_OPTIONS`` of
#: the sandbox (so Flink's BashJavaUtils helper JVMs, daemons and CLI get them)
#: and used for ConfigProbe; the daemons additionally get ``-XX:+UseSerialGC``
#: in ``env.java.opts.all``.  Disable with ``FlinkStandalone(fast_jvm=False)``.
FAST_JVM_FLAGS: tuple[str, ...] = ("-XX:TieredStopAtLevel=1", "-XX:-UsePerfData")
FAST_DAEMON_GC = "-XX:+UseSerialGC"


_PROCESS_CACHE_DIR: Path | None = None


def _process_cache_dir() -> Path:
    """A per-process scratch directory used when callers pass no cache dir."""
    global _PROCESS_CACHE_DIR
    if _PROCESS_CACHE_DIR is None:
        _PROCESS_CACHE_DIR = Path(tempfile.mkdtemp(prefix="accelplane-java-"))
    return _PROCESS_CACHE_DIR


def _java_sources(source: Path | str, class_name: str) -> dict[str, str]:
    """File name -> text for every source file of a job."""
    if isinstance(source, Path):
        if source.is_dir():
            files = sorted(source.rglob("*.java"))
            if not files:
                raise HarnessError(f"no .java files under {source}")
            return {str(f.relative_to(source)): f.read_text(encoding="utf-8") for f in files}
        return {source.name: source.read_text(encoding="utf-8")}
    simple = class_name.rsplit(".", 1)[-1]
    return {f"{simple}.java": source}


def build_java_job(
    source: Path | str,
    class_name: str,
    flink_home: Path,
    out_dir: Path | None = None,
    *,
    timeout: float = 180.0,
) -> Path:
    """Compile a Java job against ``<flink>/lib/*`` and package it as a jar.

    ``source`` is a ``.java`` file, a directory of ``.java`` files, or the
    source text of ``class_name`` (a ``str``).  The jar is content-addressed
    (``<Class>-<hash>.jar`` over sources, class name and Flink version) inside
    ``out_dir`` and reused when it already exists, so passing a session-wide
    directory (``tmp_path_factory.mktemp(...)``) compiles each job once per
    test session.  Compiled with ``--release 11`` (runs on Java 11 and 17).
    """
    out_dir = out_dir or _process_cache_dir()
    out_dir.mkdir(parents=True, exist_ok=True)
    sources = _java_sources(source, class_name)
    digest = hashlib.sha256()
    digest.update(class_name.encode())
    digest.update(flink_version(flink_home).encode())
    for name, text in sorted(sources.items()):
        digest.update(name.encode() + b"\0" + text.encode() + b"\0")
    jar = out_dir / f"{class_name.rsplit('.', 1)[-1]}-{digest.hexdigest()[:16]}.jar"
    if jar.is_file():
        return jar

    with tempfile.TemporaryDirectory(prefix="javac-", dir=out_dir) as tmp:
        src_dir = Path(tmp) / "src"
        cls_dir = Path(tmp) / "classes"
        cls_dir.mkdir()
        paths = []
        for name, text in sources.items():
            path = src_dir / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            paths.append(str(path))
        classpath = str(flink_home / "lib") + os.sep + "*"
        run_checked(
            [
                "javac",
                *(f"-J{flag}" for flag in FAST_JVM_FLAGS),
                "--release",
                "11",
                "-nowarn",
                "-cp",
                classpath,
                "-d",
                str(cls_dir),
                *paths,
            ],
            what=f"javac {class_name}",
            timeout=timeout,
        )
        tmp_jar = Path(tmp) / jar.name
        run_checked(
            ["jar", "cf", str(tmp_jar), "-C", str(cls_dir), "."],
            what=f"jar {class_name}",
            timeout=timeout,
        )
        os.replace(tmp_jar, jar)
    return jar


def build_gpu_probe_jar(flink_home: Path, out_dir: Path | None = None) -> Path:
    """Jar of ``tests/support/flink/java/GpuProbe.java`` (main class ``GpuProbe``)."""
    return build_java_job(GPU_PROBE_SOURCE, "GpuProbe", flink_home, out_dir)


def build_config_probe_jar(flink_home: Path, out_dir: Path | None = None) -> Path:
    """Jar of ``tests/support/flink/java/ConfigProbe.java`` (main class ``ConfigProbe``)."""
    return build_java_job(CONFIG_PROBE_SOURCE, "ConfigProbe", flink_home, out_dir)
