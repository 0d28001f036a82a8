"""Day two (issue 41): pairs of specs (old, new), diffed as `accelplane diff` does, asserting the
impact lines of what `pulumi up` does to running work and the transitions it cannot make."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

from accelplane.diff import compare, load_side

from tests.support.specs import write_spec
from tests.support.stack_copies import copy_stacks, load


def _day2(tmp_path: Path, stack: str, edit: Callable[[dict[str, Any]], None]) -> list[str]:
    """The day-2 impact lines of ``edit`` applied to an example stack."""
    stacks = copy_stacks(tmp_path / edit.__name__)
    old = stacks / f"{stack}.yaml"
    data = load(old)
    new_data = copy.deepcopy(data)
    edit(new_data)
    new = write_spec(stacks, new_data, f"{stack}-new.yaml")
    result = compare(load_side(str(old)), load_side(str(new)))
    return [i.message for i in result.impacts if i.category == "day2"]


def _cluster(data: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c for c in data["flink"]["clusters"] if c["name"] == name)


def _has(lines: list[str], *parts: str) -> bool:
    return any(all(p in line for p in parts) for line in lines)


def test_renaming_an_operator_cluster_is_refused_without_a_migration(tmp_path: Path) -> None:
    lines = _day2(tmp_path, "prod-eu", lambda d: _cluster(d, "embeddings-amd").update(name="embeddings"))
    assert _has(lines, "[AP1601]", "flink-batch/embeddings-amd", "EMPTY state", "without a savepoint")


def test_moving_a_native_cluster_is_refused_without_a_migration(tmp_path: Path) -> None:
    lines = _day2(tmp_path, "prod-eu", lambda d: _cluster(d, "fraud-scoring").update(namespace="flink-rt"))
    assert _has(lines, "[AP1601]", "flink/fraud-scoring", "Role")


def test_a_migration_keeps_the_old_cluster_and_starts_from_the_savepoint(tmp_path: Path) -> None:
    savepoint = "s3://prod-eu-flink/savepoints/embeddings-amd/savepoint-1"

    def migrate(d: dict[str, Any]) -> None:
        new = copy.deepcopy(_cluster(d, "embeddings-amd"))
        new["name"] = "embeddings"
        new["migrateFrom"] = {"name": "embeddings-amd", "savepoint": savepoint}
        new["config"] = {k: v.replace("embeddings-amd", "embeddings") for k, v in new["config"].items()}
        d["flink"]["clusters"].append(new)

    lines = _day2(tmp_path, "prod-eu", migrate)
    assert not _has(lines, "[AP1601]")
    assert _has(lines, "flink-batch/embeddings migrates from flink-batch/embeddings-amd", "still declared", savepoint)


def test_operator_upgrade_by_upgrade_mode(tmp_path: Path) -> None:
    def bump(d: dict[str, Any]) -> None:
        _cluster(d, "embeddings-amd")["taskManager"]["memory"] = "48Gi"

    lines = _day2(tmp_path, "prod-eu", bump)
    assert _has(lines, "FlinkDeployment flink-batch/embeddings-amd", "operator upgrade", "from that savepoint")

    def stateless(d: dict[str, Any]) -> None:
        c = _cluster(d, "embeddings-amd")
        c["job"]["upgradeMode"] = "stateless"
        c["taskManager"]["memory"] = "48Gi"

    lines = _day2(tmp_path, "prod-eu", stateless)
    assert _has(lines, "EMPTY state (upgradeMode stateless)")


def test_operator_ignored_changes_restart_nothing(tmp_path: Path) -> None:
    def operator_key(d: dict[str, Any]) -> None:
        _cluster(d, "embeddings-amd")["config"]["kubernetes.operator.periodic.savepoint.interval"] = "1h"

    lines = _day2(tmp_path, "prod-eu", operator_key)
    assert not _has(lines, "operator upgrade")


def test_native_cluster_config_takes_effect_on_resubmission(tmp_path: Path) -> None:
    def bump(d: dict[str, Any]) -> None:
        _cluster(d, "fraud-scoring")["config"]["execution.checkpointing.dir"] = "s3://prod-eu-flink/cp2/fraud-scoring"

    lines = _day2(tmp_path, "prod-eu", bump)
    assert _has(lines, "flink/fraud-scoring (native Kubernetes)", "resubmitted")


def test_dra_gpu_amount_change_replaces_the_claim_template_delete_first(tmp_path: Path) -> None:
    def bump(d: dict[str, Any]) -> None:
        c = next(c for c in d["flink"]["clusters"] if c.get("taskManager", {}).get("gpu"))
        c["taskManager"]["gpu"]["amount"] = c["taskManager"]["gpu"].get("amount", 1) + 1

    lines = _day2(tmp_path, "dra-gpus", bump)
    assert _has(lines, "ResourceClaimTemplate", "replaceOnChanges", "deleteBeforeReplace", "Pending")


def test_priority_class_value_is_replaced_with_its_window(tmp_path: Path) -> None:
    def bump(d: dict[str, Any]) -> None:
        # named lists merge by name with the base's (stacks/base/gpu-platform.yaml: value 100000)
        d["priorityClasses"] = [{"name": "flink-critical", "value": 100001}]

    lines = _day2(tmp_path, "prod-eu", bump)
    assert _has(lines, "PriorityClass", "value is immutable", "admission plugin rejects")


def test_queue_rename_passes_a_state_volcano_refuses(tmp_path: Path) -> None:
    def rename(d: dict[str, Any]) -> None:
        q = next(q for q in d["queues"] if q["name"] == "streaming")
        q["name"] = "realtime"
        _cluster(d, "fraud-scoring")["queue"] = "realtime"

    lines = _day2(tmp_path, "prod-eu", rename)
    assert _has(lines, "[AP1602]", "streaming", "deserve nvidia.com/gpu 40 > gpu-platform's 32", "two steps")
    assert _has(lines, "queue streaming deleted", "fraud-scoring")


def test_queue_change_within_limits_needs_one_apply(tmp_path: Path) -> None:
    def lower(d: dict[str, Any]) -> None:
        next(q for q in d["queues"] if q["name"] == "batch")["deserved"]["nvidia.com/gpu"] = 4

    assert not _has(_day2(tmp_path, "prod-eu", lower), "[AP1602]")


def test_mig_layout_change_names_the_pool_to_drain(tmp_path: Path) -> None:
    def mig(d: dict[str, Any]) -> None:
        pool = next(p for p in d["nodePools"] if p["name"] == "a100")
        pool["gpu"]["mig"] = {"strategy": "single", "devices": {"1g.10gb": 7}}

    lines = _day2(tmp_path, "prod-eu", mig)
    assert _has(lines, "[AP1603]", "pool a100", "MIG layout", "nvidia.com/mig.config", "Drain")


def test_dra_on_for_a_pool_names_the_pool_to_drain(tmp_path: Path) -> None:
    def dra(d: dict[str, Any]) -> None:
        pool = next(p for p in d["nodePools"] if p["name"] == "a100-dra")
        pool["gpu"]["allocation"] = "devicePlugin"

    lines = _day2(tmp_path, "dra-gpus", dra)
    assert _has(lines, "[AP1603]", "pool a100-dra", "dra → devicePlugin", "Drain")


def test_migrate_from_rendering_and_checks(tmp_path: Path) -> None:
    from accelplane.errors import SpecErrors
    from accelplane.pipeline import load_validated

    from tests.flink.operator_schema import validate_flink_deployment
    from tests.support.render import files_for, objects_for
    from tests.support.validators import validate_crd_object

    stacks = copy_stacks(tmp_path)
    data = load(stacks / "prod-eu.yaml")
    savepoint = "s3://prod-eu-flink/savepoints/x/savepoint-1"
    new = copy.deepcopy(_cluster(data, "embeddings-amd"))
    new.update(name="embeddings", migrateFrom={"name": "embeddings-amd", "savepoint": savepoint})
    data["flink"]["clusters"].append(new)
    native = copy.deepcopy(_cluster(data, "fraud-scoring"))
    native.update(name="fraud-v2", migrateFrom={"name": "fraud-scoring", "savepoint": savepoint})
    native["config"] = {k: str(v).replace("fraud-scoring", "fraud-v2") for k, v in native["config"].items()}
    data["flink"]["clusters"].append(native)
    path = write_spec(stacks, data, "migrate.yaml")
    deployment = next(
        o for o in objects_for(path) if o["kind"] == "FlinkDeployment" and o["metadata"]["name"] == "embeddings"
    )
    assert deployment["spec"]["job"]["initialSavepointPath"] == savepoint
    validate_crd_object(deployment)  # the operator's CRD (release-1.15.0) and its admission rules
    validate_flink_deployment(deployment)
    files = files_for(path)
    config = next(text for p, (text, _) in files.items() if p.startswith("flink/fraud-v2/") and "config" in p)
    assert f'execution.state-recovery.path: "{savepoint}"' in config  # Flink 1.20+ key

    itself = copy.deepcopy(data)
    _cluster(itself, "embeddings")["migrateFrom"]["name"] = "embeddings"
    try:
        load_validated(write_spec(stacks, itself, "itself.yaml"))
    except SpecErrors as exc:
        assert "migrateFrom names cluster flink-batch/embeddings itself" in str(exc)
    else:
        raise AssertionError("migrateFrom naming the cluster itself must be refused")


def test_pool_rename_names_the_shared_socket(tmp_path: Path) -> None:
    def rename(d: dict[str, Any]) -> None:
        next(p for p in d["nodePools"] if p["name"] == "a100")["name"] = "a100-v2"
        for c in d["flink"]["clusters"]:
            gpu = c.get("taskManager", {}).get("gpu", {})
            if gpu.get("pool") == "a100":
                gpu["pool"] = "a100-v2"

    lines = _day2(tmp_path, "prod-eu", rename)
    assert _has(lines, "[AP1603]", "pool a100 renamed to a100-v2", "socket")


def test_accelplane_upgrade_restarting_operator_jobs_is_named() -> None:
    from accelplane.diff import compare_trees

    def deployment(configmap: str) -> dict[str, tuple[str, int]]:
        text = f"""apiVersion: flink.apache.org/v1beta1
kind: FlinkDeployment
metadata: {{name: emb, namespace: flink}}
spec:
  flinkVersion: v1_20
  job: {{jarURI: "local:///job.jar", upgradeMode: last-state}}
  taskManager:
    podTemplate:
      spec:
        volumes: [{{name: discovery, configMap: {{name: {configmap}}}}}]
"""
        return {"kubernetes/fd.yaml": (text, 0o644)}

    result = compare_trees(
        deployment("accelplane-gpu-discovery-3f9a2c41d0"), deployment("accelplane-gpu-discovery-8be1d07a52")
    )
    (line,) = [i.message for i in result.impacts if i.category == "day2"]
    assert "discovery-script ConfigMap name changed" in line
    assert "from its last checkpoint" in line


def test_reordering_clusters_and_pools_says_nothing(tmp_path: Path) -> None:
    def reorder(d: dict[str, Any]) -> None:
        d["flink"]["clusters"].reverse()
        d["nodePools"].reverse()
        d["queues"].reverse()

    assert _day2(tmp_path, "prod-eu", reorder) == []


def test_a_migration_in_one_apply_is_refused_and_the_second_apply_is_named(tmp_path: Path) -> None:
    savepoint = "s3://prod-eu-flink/savepoints/embeddings-amd/savepoint-1"

    def one_apply(d: dict[str, Any]) -> None:
        c = _cluster(d, "embeddings-amd")
        c.update(name="embeddings", migrateFrom={"name": "embeddings-amd", "savepoint": savepoint})

    lines = _day2(tmp_path, "prod-eu", one_apply)
    assert _has(lines, "[AP1601]", "which this same apply removes", "Keep the old cluster declared")

    stacks = copy_stacks(tmp_path / "second")
    first = load(stacks / "prod-eu.yaml")
    new = copy.deepcopy(_cluster(first, "embeddings-amd"))
    new.update(name="embeddings", migrateFrom={"name": "embeddings-amd", "savepoint": savepoint})
    first["flink"]["clusters"].append(new)
    second = copy.deepcopy(first)
    second["flink"]["clusters"] = [c for c in second["flink"]["clusters"] if c["name"] != "embeddings-amd"]
    result = compare(
        load_side(str(write_spec(stacks, first, "first.yaml"))), load_side(str(write_spec(stacks, second, "second.yaml")))
    )
    lines = [i.message for i in result.impacts if i.category == "day2"]
    assert _has(lines, "removed after the migration", "second apply")
    assert not _has(lines, "[AP1601]")


def _exit_code(tmp_path: Path, stack: str, edit: Callable[[dict[str, Any]], None]) -> int:
    """`accelplane diff OLD NEW`'s exit status for ``edit`` applied to an example stack."""
    from accelplane.cli import main

    stacks = copy_stacks(tmp_path / f"cli-{edit.__name__}")
    old = stacks / f"{stack}.yaml"
    new_data = copy.deepcopy(load(old))
    edit(new_data)
    new = write_spec(stacks, new_data, f"{stack}-new.yaml")
    return main(["diff", str(old), str(new)])


def test_a_refused_change_exits_3_and_a_plain_change_1(tmp_path: Path, capsys: Any) -> None:
    """A CI gate on `accelplane diff` sees the refusal: an error-level day-2 finding (AP1601) exits 3,
    a change without one exits 1 (`git diff --exit-code`'s "different")."""

    def rename(d: dict[str, Any]) -> None:
        _cluster(d, "embeddings-amd").update(name="embeddings")

    def more_slots(d: dict[str, Any]) -> None:
        c = _cluster(d, "embeddings-amd")
        c["taskManager"]["slots"] = c["taskManager"].get("slots", 1) + 1
        c["job"]["parallelism"] = c["taskManager"]["replicas"] * c["taskManager"]["slots"]

    assert _exit_code(tmp_path, "prod-eu", rename) == 3
    assert "[AP1601]" in capsys.readouterr().out
    assert _exit_code(tmp_path, "prod-eu", more_slots) == 1
    assert "[AP16" not in capsys.readouterr().out
