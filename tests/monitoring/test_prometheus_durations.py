"""Monitoring durations are validated as Prometheus parses them (issue 37, item 11): the schema's
``promDuration`` pattern is prometheus/common ``model.ParseDuration``'s syntax (units in decreasing
order, each once) and AP7060 its range; promtool (Prometheus' own parser) agrees on every case."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from accelplane.checks.prometheus_durations import duration_ns
from accelplane.schema_document import load_schema

from tests.monitoring.promtool import promtool
from tests.support.specs import findings_by_code

CASES = [
    # syntax: units out of order or repeated (schema)
    "1s1h", "30m30m", "5ms1ms", "1m1h", "1d1y", "1h1h", "s", "1", "1.5h", "-1h", "1H", " 1h", "",
    # range (AP7060)
    "99999999999999999999y", "293y", "106752d", "2562048h", "15250285w", "292y52w",
    # valid
    "0", "30m", "1h30m", "292y", "106751d", "2562047h", "1y1w1d1h1m1s1ms", "9223372036854ms", "500ms",
]  # fmt: skip


def _pattern_ok(value: str) -> bool:
    import re

    schema = load_schema()["$defs"]["promDuration"]
    return len(value) >= schema["minLength"] and re.fullmatch(schema["pattern"][1:-1], value) is not None


def _promtool_ok(value: str, tmp_path: Path) -> bool:
    import subprocess

    rules = {"groups": [{"name": "g", "rules": [{"alert": "A", "expr": "vector(1)", "for": value}]}]}
    path = tmp_path / "rules.yaml"
    path.write_text(yaml.safe_dump(rules))
    return subprocess.run([promtool(), "check", "rules", str(path)], capture_output=True, check=False).returncode == 0


@pytest.mark.parametrize("value", CASES)
def test_schema_and_range_agree_with_promtool(value: str, tmp_path: Path) -> None:
    ours = _pattern_ok(value) and duration_ns(value) is not None
    assert ours == _promtool_ok(value, tmp_path), value


@pytest.mark.parametrize(
    ("value", "code"),
    [("1s1h", "AP1004"), ("30m30m", "AP1004"), ("5ms1ms", "AP1004"),
     ("99999999999999999999y", "AP7060"), ("293y", "AP7060")],
)  # fmt: skip
def test_refused_durations_are_findings(value: str, code: str, write_spec: Any) -> None:
    spec = {
        "cluster": {"name": "mon", "platforms": ["kubernetes"]},
        "nodePools": [{"name": "a", "nodes": 1, "labels": {"pool": "a"}, "gpu": {"vendor": "nvidia", "perNode": 2}}],
        "monitoring": {"enabled": True, "idleFor": value},
    }
    found = findings_by_code(write_spec(spec))
    assert found[code][:2] == ("error", "monitoring.idleFor"), found


def test_duration_ns() -> None:
    assert duration_ns("1h30m") == 90 * 60 * 10**9
    assert duration_ns("292y") == 292 * 365 * 24 * 3600 * 10**9
    assert duration_ns("293y") is None and duration_ns("1s1h") is None and duration_ns("0") == 0
