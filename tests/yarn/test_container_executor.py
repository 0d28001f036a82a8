"""container-executor (Hadoop 3.4.1's own C code, built as an oracle outside the repository) on the
container-executor.cfg accelplane renders for ``stacks/yarn-analytics.yaml`` and the ``docker run``
command files the NodeManager writes for its JobManager and GPU TaskManager.

``tests/yarn/data/container_executor_verdicts.json`` holds the oracle's verdicts (how it was built and
run is in the file). These tests check that (a) the recorded cfg, command files and node are exactly
what accelplane renders today, so the verdicts are about today's output; (b) the oracle accepted every
rendered container, the GPU TaskManager with ``--runtime=nvidia`` and every mount; (c) the Python port
of its rules (`accelplane.derive.container_executor`) reaches the same verdict on every case,
including the refusals (no network: 60, untrusted image: 74, NodeManager directories missing: 51,
capabilities missing: 62, an allowed entry missing on the node: 52, keys after a site's section: 60).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from accelplane.derive.container_executor import Node, docker_run_verdict
from accelplane.derive.yarn_docker import (
    CFG_PATH,
    NM_DOCKER_CAPABILITIES,
    nodemanager_run_commands,
    provisioned_node,
)
from accelplane.pipeline import load_validated

from tests.support.render import files_for

ROOT = Path(__file__).resolve().parents[2]
DATA = json.loads((Path(__file__).parent / "data" / "container_executor_verdicts.json").read_text())
SITE_KEYS = (
    "yarn.nodemanager.linux-container-executor.group=hadoop\nbanned.users=hdfs,yarn,mapred,bin\n"
    "min.user.id=1000\nallowed.system.users=\n"
)
"""The site's top-level keys the recorded cfgs start with (accelplane's sections follow them)."""
CASES: list[dict[str, Any]] = DATA["cases"]


def _case_id(case: dict[str, Any]) -> str:
    return f"{case['pool']}:{case['container']}:{case['case']}"


def test_the_recorded_cases_are_what_accelplane_renders_today() -> None:
    path = ROOT / DATA["spec"]
    spec = load_validated(path).model
    files = files_for(path)
    rendered = [c for c in CASES if c["case"] == "rendered"]
    expected = set()
    for pool in spec.node_pools:
        node = provisioned_node(spec, pool)
        for name, command in nodemanager_run_commands(spec, pool):
            expected.add(
                (
                    pool.name,
                    name,
                    SITE_KEYS + files[f"yarn/container-executor/{pool.name}.cfg"][0],
                    command,
                    tuple(sorted(node.directories)),
                    tuple(sorted(node.files)),
                )
            )
    got = {
        (c["pool"], c["container"], c["cfg"], c["command"], tuple(c["directories"]), tuple(c["files"]))
        for c in rendered
    }
    assert got == expected


def test_container_executor_runs_every_rendered_container_as_asked() -> None:
    rendered = [c for c in CASES if c["case"] == "rendered"]
    assert {c["container"] for c in rendered} == {"sessions-v100/jobmanager", "sessions-v100/taskmanager"}
    for case in rendered:
        verdict = case["verdict"]
        assert verdict["code"] == 0, _case_id(case)
        args = verdict["args"]
        assert "--net=host" in args
        assert [a for a in args if a.startswith("--cap-add=")] == [f"--cap-add={c}" for c in NM_DOCKER_CAPABILITIES]
        requested = next(line.split("=", 1)[1] for line in case["command"].splitlines() if "  mounts=" in line)
        assert [args[i + 1] for i, a in enumerate(args) if a == "-v"] == requested.split(",")
        gpu = case["container"].endswith("taskmanager")
        assert ("--runtime=nvidia" in args) == gpu, _case_id(case)


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_the_port_of_container_executor_agrees_with_it(case: dict[str, Any]) -> None:
    node = Node(frozenset(case["directories"]), frozenset(case["files"]))
    verdict = docker_run_verdict(case["cfg"], case["command"], node, CFG_PATH)
    oracle = case["verdict"]
    assert verdict.code == oracle["code"], oracle["message"]
    if verdict.code:
        return
    args = oracle["args"]
    assert list(verdict.mounts) == [args[i + 1] for i, a in enumerate(args) if a == "-v"]
    assert list(verdict.capabilities) == [a.removeprefix("--cap-add=") for a in args if a.startswith("--cap-add=")]
    assert (f"--runtime={verdict.runtime}" in args) if verdict.runtime else not any(a.startswith("--runtime") for a in args)
    assert f"--net={verdict.network}" in args


def test_main_rendered_no_network_and_the_refusals_are_the_issues() -> None:
    """The refusals #39 item 6 reported, as the oracle gave them on today's files minus one key."""
    by_case = {(c["container"], c["case"]): c["verdict"]["code"] for c in CASES if c["pool"] == "v100"}
    tm, jm = "sessions-v100/taskmanager", "sessions-v100/jobmanager"
    assert by_case[(tm, "main-113aeab")] == by_case[(jm, "main-113aeab")] == 60
    assert by_case[(tm, "without docker.trusted.registries")] == 74
    assert by_case[(jm, "without docker.trusted.registries")] == 0  # mounts and capabilities silently dropped
    assert by_case[(tm, "without the NodeManager directories")] == 51
    assert by_case[(tm, "without docker.allowed.capabilities")] == 62
    assert by_case[(tm, "an allowed mount missing on the node")] == 52
    assert by_case[(tm, "appended after a site [docker] section")] == 60  # the site's key came first
