"""Issue #43 item 5, checked by Flink's own pod factories: the placeholders of each task group are
placed exactly where Flink puts the role's pods, also when the cluster's config adds
``kubernetes.<role>.node-selector`` or ``.tolerations`` (Flink merges those over the templates).
Otherwise YuniKorn reserves GPUs on nodes the TaskManagers cannot use, releases the placeholders at
the timeout and the gang is lost."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.flink.specs import KUBERNETES, variant
from tests.support.flink.home import require_flink_home
from tests.support.flink_pods import flink_pods
from tests.support.render import files_for
from tests.support.specs import write_spec
from tests.support.yunikorn import parse_task_groups

pytestmark = pytest.mark.flink

CONFIG = {
    "kubernetes.jobmanager.node-selector": "zone:a,tier:control",
    "kubernetes.taskmanager.node-selector": "zone:a",
    "kubernetes.jobmanager.tolerations": "key:control,operator:Exists,effect:NoSchedule",
    "kubernetes.taskmanager.tolerations": (
        "key:spot,operator:Equal,value:yes,effect:NoSchedule;Key:maint,Operator:Exists,Effect:NoExecute,"
        "TolerationSeconds:60"
    ),
}


def _yunikorn(config: dict[str, str]) -> dict[str, Any]:
    data = variant(KUBERNETES, config=config)
    data = copy.deepcopy(data)
    data["scheduler"] = "yunikorn"
    return data


@pytest.mark.parametrize("config", [CONFIG, {}], ids=["config-placement", "pool-only"])
def test_each_task_group_is_placed_where_flink_puts_its_pods(tmp_path: Path, config: dict[str, str]) -> None:
    home = require_flink_home()
    files = files_for(write_spec(tmp_path, _yunikorn(config)))
    base = "flink/job1/"
    jm_text = files[base + "jobmanager-pod-template.yaml"][0]
    tm_text = files[base + "taskmanager-pod-template.yaml"][0]
    jm, tm = flink_pods(files[base + "config.yaml"][0], jm_text, tm_text, flink_home=home)
    groups = {g.name: g for g in parse_task_groups(yaml.safe_load(jm_text)["metadata"]["annotations"]["yunikorn.apache.org/task-groups"]) or []}
    for role, pod in (("jobmanager", jm), ("taskmanager", tm)):
        group = groups[role]
        assert group.node_selector == (pod["spec"].get("nodeSelector") or {}), role
        assert group.tolerations == pod["spec"].get("tolerations", []), role
        assert group.affinity == pod["spec"].get("affinity"), role
    if config:
        assert groups["taskmanager"].node_selector == {"accelplane.io/pool": "a100", "zone": "a"}
        assert [t["key"] for t in groups["taskmanager"].tolerations][-2:] == ["spot", "maint"]
        assert groups["taskmanager"].tolerations[-1]["tolerationSeconds"] == 60
        assert groups["jobmanager"].node_selector == {"zone": "a", "tier": "control"}
