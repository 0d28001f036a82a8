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
