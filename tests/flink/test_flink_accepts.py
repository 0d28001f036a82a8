"""``job.jarURI`` is validated as Flink parses it (issue 37, item 13): ``java.net.URI``. The schema's
pattern accepts nothing java.net.URI refuses (NUL, quotes, backticks, spaces, ``<>{}|\\^``, broken
``%`` escapes); it is stricter only where a jar URI never goes (non-ASCII, IPv6 brackets)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from accelplane.schema_document import load_schema

PROBE = Path(__file__).parent / "java" / "JarUriProbe.java"

VALID = [
    "local:///opt/flink/usrlib/job.jar", "s3://bucket/jobs/job-1.2.jar", "https://repo.example.com/a%20b.jar",
    "file:/opt/x.jar", "hdfs://nn:8020/jobs/job.jar", "s3a://b/k?versionId=3&x=y#frag", "local:///it's.jar",
]  # fmt: skip
HOSTILE = [
    "local:///opt/job\x00.jar", 'local:///opt/"job".jar', "local:///opt/`id`.jar", "local:///opt/my job.jar",
    "local:///opt/<job>.jar", "local:///opt/{job}.jar", "local:///a|b.jar", "local:///a\\b.jar", "local:///a^b.jar",
    "local:///a%zz.jar", "local:///a%2.jar", "local:///a\x7f.jar", "local:///ünï.jar", "local:///a$(id).jar'`",
    "local:///\x1b[2J.jar", "/opt/no-scheme.jar",
]  # fmt: skip


def _schema_accepts(value: str) -> bool:
    pattern = load_schema()["$defs"]["job"]["properties"]["jarURI"]["pattern"]
    return re.fullmatch(pattern[1:-1], value) is not None


@pytest.fixture(scope="module")
def java_uri() -> dict[str, bool]:
    java = shutil.which("java")
    if java is None:
        pytest.skip("java is not installed")
    values = VALID + HOSTILE
    proc = subprocess.run(
        [java, str(PROBE)], input="\n".join(values) + "\n", capture_output=True, text=True, check=True, timeout=120
    )
    return dict(zip(values, [line == "ok" for line in proc.stdout.splitlines()], strict=True))


@pytest.mark.parametrize("value", VALID + HOSTILE)
def test_schema_accepts_no_jar_uri_java_net_uri_refuses(value: str, java_uri: dict[str, bool]) -> None:
    if _schema_accepts(value):
        assert java_uri[value], value


def test_valid_uris_pass_and_hostile_ones_are_refused(java_uri: dict[str, bool]) -> None:
    assert all(_schema_accepts(v) and java_uri[v] for v in VALID)
    assert not any(_schema_accepts(v) for v in HOSTILE)


HA_CORPUS = [
    "kubernetes", "KUBERNETES", "Kubernetes", "zookeeper", "ZooKeeper", "none", "NONE", "standalone", "STANDALONE",
    "kubernetes'", "kubernetes\x00", "kube rnetes", "k8s", "factory_class", "com.example.ha.MyHaServicesFactory",
    "org.apache.flink.kubernetes.highavailability.KubernetesHaServicesFactory", "MyFactory", "`id`",
]  # fmt: skip


@pytest.mark.flink
def test_ha_mode_is_read_as_flink_reads_it(tmp_path: Path) -> None:
    """Flink's ``HighAvailabilityMode.fromConfig`` on each value: a mode it names is a mode to
    accelplane too (`derive.flink_state.ha_mode`, no AP4060); a value Flink takes as a factory class
    name passes only when it is one (``kubernetes'`` does not: AP4060)."""
    from accelplane.checks.flink_accepts import HA_MODES, JAVA_CLASS_NAME

    from tests.support.flink.home import require_flink_home

    dist = next((require_flink_home() / "lib").glob("flink-dist-*.jar"))
    subprocess.run(["javac", "-d", str(tmp_path), "-cp", str(dist), str(PROBE.parent / "HaModeProbe.java")],
                   check=True, timeout=300)  # fmt: skip
    proc = subprocess.run(
        ["java", "-cp", f"{dist}:{tmp_path}", "HaModeProbe"], input="\n".join(HA_CORPUS) + "\n",
        capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    flink = dict(zip(HA_CORPUS, proc.stdout.splitlines(), strict=True))
    assert flink["kubernetes'"] == "FACTORY_CLASS" and flink["Kubernetes"] == "KUBERNETES"
    for value, mode in flink.items():
        accepted = value.lower() in HA_MODES or JAVA_CLASS_NAME.fullmatch(value) is not None
        if mode != "FACTORY_CLASS":
            assert accepted, value
        else:
            assert accepted == ("." in value and JAVA_CLASS_NAME.fullmatch(value) is not None), value
