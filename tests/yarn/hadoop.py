"""Run Hadoop's own YARN classes (from PyPI pyspark's jars) on rendered files.

`hadoop_classpath` is the one place that finds the jars: ``$ACCELPLANE_PYSPARK_JARS`` (a
``pyspark/jars`` directory) or else the installed ``pyspark`` package (extra ``hadoop``).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

JARS_ENV = "ACCELPLANE_PYSPARK_JARS"
JAR_PATTERNS = ("hadoop-client-api-*.jar", "hadoop-client-runtime-*.jar", "slf4j-api-*.jar")
HARNESS = Path(__file__).parent / "java" / "YarnConfProbe.java"
FLINK_HARNESS = Path(__file__).parent / "java" / "org" / "apache" / "flink" / "yarn" / "FlinkYarnRequestProbe.java"
FLINK_HARNESS_CLASS = "org.apache.flink.yarn.FlinkYarnRequestProbe"
MIN_HADOOP = (3, 5)  # cgroups v2 keys and built-in yarn.io/gpu as asserted by the tests


def hadoop_classpath() -> tuple[list[Path] | None, str]:
    """The Hadoop client jars (api, runtime, slf4j-api) and where they came from, or None and why."""
    env = os.environ.get(JARS_ENV)
    if env:
        jars_dir = Path(env)
        origin = f"${JARS_ENV}={env}"
    else:
        spec = importlib.util.find_spec("pyspark")
        if spec is None or spec.origin is None:
            return None, f"pyspark is not installed (pip install '.[hadoop]') and ${JARS_ENV} is not set"
        jars_dir = Path(spec.origin).parent / "jars"
        origin = f"pyspark at {jars_dir.parent}"
    jars = []
    for pattern in JAR_PATTERNS:
        found = sorted(jars_dir.glob(pattern))
        if not found:
            return None, f"{origin}: no {pattern} in {jars_dir}"
        jars.append(found[-1])
    version = re.search(r"hadoop-client-api-(\d+)\.(\d+)", jars[0].name)
    if version is None or (int(version[1]), int(version[2])) < MIN_HADOOP:
        return None, f"{origin}: {jars[0].name} is older than Hadoop {'.'.join(map(str, MIN_HADOOP))}"
    return jars, f"{origin} ({jars[0].name})"


@dataclass(frozen=True)
class Probe:
    """The compiled harness and how to run it."""

    classes: Path
    jars: list[Path]
    java: str

    def run(self, *args: str, conf_dir: Path | None = None) -> list[list[str]]:
        """Run the harness with ``args``; ``conf_dir`` goes first on the classpath (like
        ``$HADOOP_CONF_DIR``). Returns the tab-separated records it printed."""
        classpath = [*([str(conf_dir)] if conf_dir else []), str(self.classes), *map(str, self.jars)]
        proc = subprocess.run(
            [self.java, "-cp", os.pathsep.join(classpath), "YarnConfProbe", *args],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        return [line.split("\t") for line in proc.stdout.splitlines()]


def compiled_java_probe(source: Path, out_dir: Path) -> str:
    """Compile the one-file probe ``source`` against the Hadoop jars into ``out_dir``; return the
    classpath that runs it (``out_dir`` and the jars). A missing jar or JDK fails the test under CI
    (``$CI`` set) and skips it elsewhere, as every Hadoop test here does."""
    import pytest

    jars, reason = hadoop_classpath()
    if jars is None:
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    classpath = os.pathsep.join(map(str, jars))
    subprocess.run(["javac", "-d", str(out_dir), "-cp", classpath, str(source)], check=True, timeout=300)
    return os.pathsep.join([str(out_dir), classpath])


def compile_probe(out_dir: Path) -> tuple[Probe | None, str]:
    """Compile the harness against the Hadoop jars; None and the reason when something is missing."""
    jars, origin = hadoop_classpath()
    if jars is None:
        return None, origin
    javac, java = shutil.which("javac"), shutil.which("java")
    if javac is None or java is None:
        return None, "a JDK (java and javac on PATH) is required"
    subprocess.run(
        [javac, "-d", str(out_dir), "-cp", os.pathsep.join(map(str, jars)), str(HARNESS)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return Probe(out_dir, jars, java), origin


@dataclass(frozen=True)
class FlinkProbe:
    """The compiled Flink harness (`FlinkYarnRequestProbe`): Flink's own YARN request path."""

    classes: Path
    jars: list[Path]
    java: str

    def requests(
        self, conf_dir: Path, *flink_conf_dirs: Path, rm_site: Path | str | None = None
    ) -> dict[str, dict[str, str]]:
        """For each Flink configuration directory: the TaskManager container request Flink's
        YarnResourceManagerDriver would send, ``{"resource:<name>": value, "label": label}``, the
        ApplicationMaster's container (``am:memory-mb``, ``am:vcores``), and the shell command Flink
        gives each container kind (``command:taskmanager``, ``command:jobmanager``); ``error`` when
        Flink computes no container (above the maximum allocation).
        ``conf_dir`` (the rendered ``yarn/`` with ``resource-types.xml``) goes first on the classpath.
        ``rm_site``: the ResourceManager yarn-site fragment whose maximum allocation bounds the
        container (``"-"``: Hadoop's defaults); None: memory and vcores unbounded."""
        classpath = [str(conf_dir), str(self.classes), *map(str, self.jars)]
        site = ["--rm-site", str(rm_site)] if rm_site is not None else []
        proc = subprocess.run(
            [self.java, "-cp", os.pathsep.join(classpath), FLINK_HARNESS_CLASS, *site, *map(str, flink_conf_dirs)],
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        out: dict[str, dict[str, str]] = {str(d): {} for d in flink_conf_dirs}
        for line in proc.stdout.splitlines():
            rec = line.split("\t")
            if rec[0] == "error":
                out[rec[1]]["error"] = rec[2]
            elif rec[0] == "request" and rec[2] == "resource":
                out[rec[1]][f"resource:{rec[3]}"] = rec[4]
            elif rec[0] == "request" and rec[2] == "label":
                out[rec[1]]["label"] = rec[3]
            elif rec[0] == "command":
                out[rec[1]][f"command:{rec[2]}"] = rec[3]
            elif rec[0] == "am":
                out[rec[1]][f"am:{rec[2]}"] = rec[3]
        return out


def compile_flink_probe(out_dir: Path, flink_home: Path) -> tuple[FlinkProbe | None, str]:
    """Compile the Flink harness against flink-dist and the Hadoop jars; None and why when missing."""
    jars, origin = hadoop_classpath()
    if jars is None:
        return None, origin
    dist = sorted((flink_home / "lib").glob("flink-dist*.jar"))
    if not dist:
        return None, f"no flink-dist jar in {flink_home / 'lib'}"
    javac, java = shutil.which("javac"), shutil.which("java")
    if javac is None or java is None:
        return None, "a JDK (java and javac on PATH) is required"
    classpath = [dist[-1], *jars]
    subprocess.run(
        [javac, "-d", str(out_dir), "-cp", os.pathsep.join(map(str, classpath)), str(FLINK_HARNESS)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return FlinkProbe(out_dir, classpath, java), f"{origin}, {dist[-1].name}"
