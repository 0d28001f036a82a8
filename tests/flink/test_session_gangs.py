"""Session clusters and gangs (#39 item 3).

A session cluster's active resource manager (native Kubernetes, the operator's native mode, YARN)
starts no TaskManager until a job asks for slots, unless ``slotmanager.number-of-slots.min`` is set
(Flink 1.19+ in the option tables, which are checked against flink-dist). So accelplane renders it
as replicas × slots where the version has it — the TaskManagers then start with the cluster — and
on older versions reserves only the JobManager: the Volcano PodGroup's ``minResources`` and
YuniKorn's task groups match the pods Flink starts.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from accelplane.derive.flink_keys import MIN_SLOTS_KEY
from accelplane.flink_options import option_table

from tests.flink.specs import KUBERNETES
from tests.support.flink.config_probe import load_with_flink
from tests.support.flink.home import require_flink_home
from tests.support.render import files_for
from tests.support.specs import WriteSpec
from tests.support.yunikorn import parse_task_groups

TASK_GROUPS = "yunikorn.apache.org/task-groups"
TASK_GROUP_NAME = "yunikorn.apache.org/task-group-name"


def _session(version: str, image: str, **extra: Any) -> dict[str, Any]:
    doc = copy.deepcopy(KUBERNETES)
    c = doc["flink"]["clusters"][0]
    c.update(mode="session", version=version, image=image)
    c["taskManager"]["replicas"] = 3
    doc.update(extra)
    return doc


def _render(write_spec: WriteSpec, doc: dict[str, Any], name: str = "spec.yaml") -> dict[str, str]:
    return {p: t for p, (t, _) in files_for(write_spec(yaml.safe_dump(doc, sort_keys=False), name)).items()}


def _podgroup(files: dict[str, str]) -> dict[str, Any]:
    (text,) = [t for p, t in files.items() if p.startswith("kubernetes/podgroup_")]
    spec: dict[str, Any] = yaml.safe_load(text)["spec"]
    return spec


def test_the_option_tables_have_the_key_from_1_19() -> None:
    assert [v for v in ((1, 18), (1, 19), (1, 20), (2, 0)) if MIN_SLOTS_KEY in option_table(v).owner] == [  # type: ignore[union-attr]
        (1, 19), (1, 20), (2, 0),
    ]  # fmt: skip


def test_a_1_20_session_cluster_starts_its_taskmanagers_and_the_podgroup_reserves_them(write_spec: WriteSpec) -> None:
    files = _render(write_spec, _session("1.20", "registry.example.internal/flink-gpu:1.20.5-py3"))
    config = yaml.safe_load(files["flink/job1/config.yaml"])
    assert config[MIN_SLOTS_KEY] == 3 * 2  # replicas × slots
    assert _podgroup(files)["minResources"] == {"cpu": "13", "memory": "26Gi", "nvidia.com/gpu": "6"}


def test_a_1_18_session_cluster_reserves_only_the_jobmanager(write_spec: WriteSpec) -> None:
    files = _render(write_spec, _session("1.18", "registry.example.internal/flink-gpu:1.18.1-py3"))
    conf_name = next(p for p in files if p.startswith("flink/job1/") and p.endswith((".yaml",)) and "conf" in p)
    assert MIN_SLOTS_KEY not in files[conf_name]
    assert _podgroup(files)["minResources"] == {"cpu": "1", "memory": "2Gi"}  # the JobManager: no GPUs held idle


def test_application_clusters_are_unchanged(write_spec: WriteSpec) -> None:
    doc = copy.deepcopy(KUBERNETES)
    files = _render(write_spec, doc)
    assert MIN_SLOTS_KEY not in files["flink/job1/config.yaml"]
    assert _podgroup(files)["minResources"]["nvidia.com/gpu"] == "4"


def _task_groups(files: dict[str, str]) -> tuple[list[Any], dict[str, str], dict[str, str]]:
    jm = yaml.safe_load(files["flink/job1/jobmanager-pod-template.yaml"])["metadata"]["annotations"]
    tm = yaml.safe_load(files["flink/job1/taskmanager-pod-template.yaml"])["metadata"]["annotations"]
    groups = parse_task_groups(jm[TASK_GROUPS])  # YuniKorn's shim rules (tests/support/yunikorn.py)
    assert groups is not None and json.loads(tm[TASK_GROUPS]) == json.loads(jm[TASK_GROUPS])
    return groups, jm, tm


@pytest.mark.parametrize(
    ("version", "image", "tm_members"),
    [("1.20", "registry.example.internal/flink-gpu:1.20.5-py3", 3), ("1.18", "registry.example.internal/flink-gpu:1.18.1-py3", 0)],
)  # fmt: skip
def test_yunikorn_task_groups_match_what_a_session_cluster_starts(
    version: str, image: str, tm_members: int, write_spec: WriteSpec
) -> None:
    doc = _session(version, image, scheduler="yunikorn")
    doc.pop("priorityClasses")
    doc["flink"]["clusters"][0].pop("priorityClass")
    groups, jm, tm = _task_groups(_render(write_spec, doc))
    assert {g.name: g.min_member for g in groups} == (
        {"jobmanager": 1, "taskmanager": tm_members} if tm_members else {"jobmanager": 1}
    )
    assert jm[TASK_GROUP_NAME] == "jobmanager"
    assert tm.get(TASK_GROUP_NAME) == ("taskmanager" if tm_members else None)


@pytest.mark.flink
def test_flink_reads_the_minimum_slots_as_rendered(write_spec: WriteSpec, tmp_path: Path) -> None:
    flink_home = require_flink_home()
    files = _render(write_spec, _session("1.20", "registry.example.internal/flink-gpu:1.20.5-py3"))
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "config.yaml").write_text(files["flink/job1/config.yaml"], encoding="utf-8")
    assert load_with_flink(conf, flink_home)[MIN_SLOTS_KEY] == "6"
