"""Random YARN specs: either the checks reject them, or every YARN file renders and parses back.

Never a traceback, and every accepted spec gives capacities that add up and vectors within bounds.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from accelplane.builders import build_all
from accelplane.checks import run_checks
from accelplane.derive.yarn_capacity import plan_queues
from accelplane.model_convert import build_model
from accelplane.render import bundle_files
from accelplane.schema import validate_document
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.support.yarn_specs import parse_configuration, parse_container_executor

pytestmark = pytest.mark.slow  # hypothesis over generated YARN specs

MODELS = [
    "Tesla V100-SXM2-32GB",
    "Tesla T4",
    "NVIDIA A100 (80GB)",
    "AMD Instinct MI300X OAM",
    "NVIDIA H100 80GB HBM3",
]


@st.composite
def gpu(draw: st.DrawFn) -> dict[str, Any]:
    per_node = draw(st.integers(1, 8))
    out: dict[str, Any] = {"vendor": draw(st.sampled_from(["nvidia", "amd"])), "perNode": per_node}
    if draw(st.booleans()):
        out["model"] = draw(st.sampled_from(MODELS))
    if draw(st.integers(0, 4)) == 0:
        n = draw(st.integers(1, per_node + 1))
        out["allowedDevices"] = [f"{i}:{draw(st.integers(0, 9))}" for i in range(n)]
    if draw(st.integers(0, 12)) == 0:
        out["sharing"] = {"strategy": "timeSlicing", "replicas": 2}
    return out


@st.composite
def pool(draw: st.DrawFn, name: str) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": name,
        "platform": draw(st.sampled_from(["yarn", "yarn", "yarn", "kubernetes"])),
        "nodes": draw(st.integers(0, 20)),
    }
    if draw(st.integers(0, 9)):
        out["cpu"] = draw(st.sampled_from([8, 32, 96, "500m"]))
    if draw(st.integers(0, 9)):
        out["memory"] = draw(st.sampled_from(["64Gi", "1Ti", "256Gi", "512Mi"]))
    if draw(st.booleans()):
        out["gpu"] = draw(gpu())
    return out


RESOURCES = st.fixed_dictionaries(
    {},
    optional={
        "cpu": st.sampled_from([1, 4, 16, 64]),
        "memory": st.sampled_from(["8Gi", "64Gi", "1Ti", "0"]),
        "nvidia.com/gpu": st.integers(0, 16),
        "amd.com/gpu": st.integers(0, 16),
    },
)


@st.composite
def queue(draw: st.DrawFn, name: str, parents: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "weight": draw(st.integers(1, 9))}
    if parents and draw(st.booleans()):
        out["parent"] = draw(st.sampled_from(parents))
    if draw(st.booleans()):
        out["capability"] = {"cpu": 10_000, "memory": "100Ti", "pods": 100, **draw(RESOURCES)}
    if draw(st.integers(0, 2)) == 0:
        out["deserved"] = draw(RESOURCES)
    if draw(st.integers(0, 3)) == 0:
        out["priority"] = draw(st.integers(0, 20))
    if draw(st.integers(0, 3)) == 0:
        out["reclaimable"] = False
    return out


@st.composite
def spec(draw: st.DrawFn) -> dict[str, Any]:
    pools = [draw(pool(f"p{i}")) for i in range(draw(st.integers(0, 4)))]
    queues: list[dict[str, Any]] = []
    for i in range(draw(st.integers(0, 5))):
        queues.append(draw(queue(f"q{i}", [q["name"] for q in queues])))
    doc: dict[str, Any] = {
        "cluster": {"name": "fuzz", "platforms": ["yarn"]},
        "nodePools": pools,
        "queues": queues,
    }
    yarn: dict[str, Any] = {
        "nodeLabels": draw(st.booleans()),
        "cgroups": draw(st.sampled_from(["v1", "v2"])),
        "docker": {
            "enabled": draw(st.booleans()),
            "runtime": draw(st.sampled_from(["nvidia", "nvidia", "nvidia", "runc"])),
        },
    }
    if draw(st.booleans()):
        yarn["resourceTypes"] = [
            {"name": "yarn.io/gpu", "maximumAllocation": draw(st.integers(0, 8))},
        ]
    doc["yarn"] = yarn
    if draw(st.booleans()) and pools:
        leaves = [q["name"] for q in queues if not any(o.get("parent") == q["name"] for o in queues)]
        cluster: dict[str, Any] = {
            "name": "job",
            "target": "yarn",
            "taskManager": {"gpu": {"amount": draw(st.integers(1, 4))}},
        }
        if leaves:
            cluster["queue"] = draw(st.sampled_from(leaves))
        if draw(st.booleans()):
            cluster["taskManager"]["gpu"]["model"] = draw(st.sampled_from(MODELS))
        doc["flink"] = {"clusters": [cluster]}
    return doc


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec())
def test_random_yarn_specs_are_rejected_or_render_cleanly(doc: dict[str, Any]) -> None:
    assert validate_document(doc) == [], validate_document(doc)
    model, problems = build_model(doc)
    if model is None:
        assert problems
        return
    if run_checks(model):
        event("rejected by the checks")
        return
    event("rendered")
    files = bundle_files(build_all(model))
    yarn = {p: t for p, (t, _) in files.items() if p.startswith("yarn/")}
    assert {"yarn/resource-types.xml", "yarn/capacity-scheduler.xml"} <= set(yarn)
    for path, text in yarn.items():
        if path.endswith(".xml"):
            parse_configuration(text)
        elif path.endswith(".txt"):
            assert text.endswith("(exclusive=true)\n"), text
        elif path.endswith(".sh"):
            assert path == "yarn/install-container-executor-cfg.sh"  # tests/yarn/test_container_executor_install.py
        else:
            parse_container_executor(text)
    plan = plan_queues(model)
    props = {p.name: p.value for p in plan.properties}
    for key, children in props.items():
        if not key.endswith(".queues"):
            continue
        parent = key.removesuffix(".queues")
        caps = [props[f"{parent}.{c}.capacity"] for c in children.split(",")]
        event(f"{plan.mode} capacities")
        if plan.mode == "percentage":
            assert sum(Decimal(c) for c in caps) == 100
        else:
            vectors = [dict(kv.split("=") for kv in c[1:-1].split(",")) for c in caps]
            assert all(int(v["memory"]) >= 1 for v in vectors)
