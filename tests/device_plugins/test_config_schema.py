"""The rendered device-plugin config files against a JSON Schema of upstream ``api/config/v1``.

The schema (``nvidia-device-plugin-config.schema.json`` beside this file) is checked against the
upstream example (GPU Operator's time-slicing test config) and against broken configs that the
plugin rejects, so it is neither vacuous nor stricter than upstream on what we emit.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import EXAMPLE_SPECS
from tests.support.device_plugin_specs import config_errors, kitchen_sink_doc
from tests.support.render import objects_for
from tests.support.specs import write_spec
from tests.support.validators import reference


def _configs(spec_path: Path) -> dict[str, dict[str, Any]]:
    out = {}
    for obj in objects_for(spec_path):
        if obj["kind"] == "ConfigMap" and obj["metadata"]["name"].startswith("nvidia-device-plugin-"):
            out[obj["metadata"]["name"]] = yaml.safe_load(obj["data"]["config.yaml"])
    return out


def test_upstream_example_is_valid() -> None:
    doc = yaml.safe_load(reference("nvidia/time-slicing-sharing-config-example.yaml").read_text())
    assert config_errors(doc) == []


def test_every_rendered_config_is_valid(tmp_path: Path) -> None:
    configs = _configs(write_spec(tmp_path, kitchen_sink_doc()))
    for spec in EXAMPLE_SPECS:
        configs.update(_configs(spec))
    assert len(configs) >= 5
    for name, doc in configs.items():
        assert config_errors(doc) == [], name


def test_kitchen_sink_configs(tmp_path: Path) -> None:
    configs = {
        name.rsplit("-", 1)[0]: doc
        for name, doc in _configs(write_spec(tmp_path, kitchen_sink_doc())).items()
    }
    cdi = {"deviceListStrategy": "cdi-cri"}
    assert configs["nvidia-device-plugin-t4-ts"] == {
        "version": "v1",
        "flags": {"migStrategy": "none", "plugin": cdi},
        "sharing": {
            "timeSlicing": {
                "renameByDefault": False,
                "failRequestsGreaterThanOne": True,
                "resources": [{"name": "nvidia.com/gpu", "replicas": 4}],
            }
        },
    }
    assert configs["nvidia-device-plugin-a100-mixed"]["sharing"]["timeSlicing"] == {
        "renameByDefault": True,
        "failRequestsGreaterThanOne": False,
        "resources": [
            {"name": "nvidia.com/mig-1g.10gb", "replicas": 2},
            {"name": "nvidia.com/mig-1g.10gb.me", "replicas": 2},
            {"name": "nvidia.com/mig-2g.20gb", "replicas": 2},
        ],
    }
    assert configs["nvidia-device-plugin-h100-single"] == {
        "version": "v1",
        "flags": {"migStrategy": "single", "plugin": cdi},
    }
    assert configs["nvidia-device-plugin-l4-mps"]["sharing"] == {
        "mps": {"renameByDefault": False, "resources": [{"name": "nvidia.com/gpu", "replicas": 8}]}
    }


GOOD = {"version": "v1", "flags": {"migStrategy": "none"}}
TS = {"resources": [{"name": "nvidia.com/gpu", "replicas": 4}]}


@pytest.mark.parametrize(
    ("doc", "why"),
    [
        ({**GOOD, "version": "v2"}, "unknown version"),
        (
            {**GOOD, "sharing": {"timeSlicing": {"resources": [{"name": "nvidia.com/gpu", "replicas": 1}]}}},
            "replicas 1",
        ),
        ({**GOOD, "sharing": {"timeSlicing": {"resources": []}}}, "no resources"),
        ({**GOOD, "sharing": {"timeSlicing": {"resources": [{"name": "nvidia.com/gpu"}]}}}, "no replicas"),
        ({**GOOD, "sharing": {"timeSlicing": TS, "mps": TS}}, "time-slicing and MPS together"),
        ({**GOOD, "sharing": {}}, "empty sharing"),
        (
            {**GOOD, "sharing": {"renameByDefault": True, "timeSlicing": TS}},
            "renameByDefault outside the block",
        ),
        (
            {
                "version": "v1",
                "flags": {"migStrategy": "single"},
                "sharing": {
                    "timeSlicing": {"resources": [{"name": "nvidia.com/mig-1g.10gb", "replicas": 2}]}
                },
            },
            "MIG names without mixed",
        ),
        (
            {"version": "v1", "flags": {"migStrategy": "mixed"}, "sharing": {"mps": TS}},
            "MPS on MIG",
        ),
        (
            {
                "version": "v1",
                "sharing": {"mps": {"resources": [{"name": "nvidia.com/mig-1g.10gb", "replicas": 2}]}},
            },
            "MPS of a MIG resource",
        ),
        ({**GOOD, "flags": {"migStrategy": "auto"}}, "unknown MIG strategy"),
        (
            {
                "version": "v1",
                "flags": {"migStrategy": "mixed"},
                "sharing": {
                    "timeSlicing": {"resources": [{"name": "nvidia.com/mig-1g.10gb+me", "replicas": 2}]}
                },
            },
            "'+' in a resource name",
        ),
    ],
)
def test_schema_rejects(doc: dict[str, Any], why: str) -> None:
    assert config_errors(doc), why
