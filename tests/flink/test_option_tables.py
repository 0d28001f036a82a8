"""Config keys that exist in the cluster's Flink (issue 29 item 3).

Unit tests: specs a team would write — shared ``flink.defaults.config`` across a 1.18 and a 1.20
cluster, a key from a newer Flink on an older cluster, a key under its old and new name, connector
and user options. With Flink (marker ``flink``): the committed 1.20 table is exactly what Flink's
own classes in the local flink-dist jar declare.
"""

from __future__ import annotations

import copy
import hashlib
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from accelplane.derive.flink_keys import effective_config
from accelplane.derive.flink_state import (
    CHECKPOINTS_DIR,
    HA_STORAGE,
    HA_TYPE,
    SAVEPOINTS_DIR,
    checkpoints_dir_keys,
    is_set,
)
from accelplane.errors import SpecErrors
from accelplane.flink_options import (
    TABLE_DIR,
    key_fate,
    near_miss,
    option_names,
    option_table,
    resolve_config,
    table_versions,
)
from accelplane.pipeline import load_validated

from tests.flink.specs import KUBERNETES
from tests.support.flink.home import require_flink_home
from tests.support.render import files_for
from tests.support.specs import WriteSpec, findings_of, model_of

REPO = Path(__file__).resolve().parents[2]
TOOL = REPO / "tools" / "flink_options" / "FlinkOptionKeys.java"
PROBE = Path(__file__).parent / "java" / "OptionRowsProbe.java"


def _two_versions(**config: Any) -> dict[str, Any]:
    """A 1.18 and a 1.20 cluster sharing ``flink.defaults.config``."""
    doc = copy.deepcopy(KUBERNETES)
    first = doc["flink"]["clusters"][0]
    old = copy.deepcopy(first) | {"name": "legacy", "version": "1.18", "image": "registry.example.internal/flink:1.18.1"}
    doc["flink"]["clusters"].append(old)
    doc["flink"]["defaults"] = {"config": config}
    return doc


def _flink_conf(write_spec: WriteSpec, doc: dict[str, Any], cluster: str) -> dict[str, Any]:
    files = files_for(write_spec(doc))
    name = next(p for p in files if p.startswith(f"flink/{cluster}/") and p.endswith(("config.yaml", "flink-conf.yaml")))
    loaded = yaml.safe_load(files[name][0])
    assert isinstance(loaded, dict)
    return loaded


def _flat(node: Any, prefix: str = "") -> dict[str, Any]:
    if not isinstance(node, dict):
        return {prefix: node}
    out: dict[str, Any] = {}
    for k, v in node.items():
        out |= _flat(v, f"{prefix}.{k}" if prefix else str(k))
    return out


def test_each_cluster_gets_the_name_its_flink_reads(write_spec: WriteSpec) -> None:
    doc = _two_versions(
        **{
            "execution.checkpointing.dir": "s3://ckpt/flink",
            "execution.checkpointing.savepoint-dir": "s3://ckpt/savepoints",
            "state.backend.type": "rocksdb",
            "my.team.option": "kept",  # a user option: no Flink release declares it
            "table.exec.mini-batch.enabled": "true",  # Table API (not in flink-dist): left alone
        }
    )
    old = _flat(_flink_conf(write_spec, doc, "legacy"))
    new = _flat(_flink_conf(write_spec, doc, "job1"))
    # Flink 1.18 reads state.checkpoints.dir / state.savepoints.dir (FLIP-406 renamed them in 1.20)
    assert old["state.checkpoints.dir"] == "s3://ckpt/flink" and "execution.checkpointing.dir" not in old
    assert old["state.savepoints.dir"] == "s3://ckpt/savepoints"
    assert new["execution.checkpointing.dir"] == "s3://ckpt/flink" and "state.checkpoints.dir" not in new
    for conf in (old, new):
        assert conf["state.backend.type"] == "rocksdb"
        assert conf["my.team.option"] == "kept"
        assert conf["table.exec.mini-batch.enabled"] in ("true", True)
    # the checks and derivations see what the cluster's Flink reads: the 1.18 checkpoint dir is set
    spec = model_of(write_spec(doc, "again.yaml"))
    legacy = next(c for c in spec.flink_clusters if c.name == "legacy")
    assert is_set(legacy, checkpoints_dir_keys(legacy))
    assert dict(legacy.config_renamed) == {
        "state.checkpoints.dir": "execution.checkpointing.dir",
        "state.savepoints.dir": "execution.checkpointing.savepoint-dir",
    }
    assert "state.checkpoints.dir" in effective_config(spec, legacy)


def test_a_key_the_version_does_not_have_is_an_error_at_the_key_the_user_wrote(write_spec: WriteSpec) -> None:
    # file merging of checkpoints exists from Flink 1.20 on: on 1.18 the setting would be ignored
    doc = _two_versions(**{"execution.checkpointing.file-merging.enabled": True})
    with pytest.raises(SpecErrors) as e:
        load_validated(write_spec(doc))
    (err,) = e.value.errors
    assert err.finding is not None and err.finding.code == "AP4501" and not err.is_warning
    assert err.path == "flink.defaults.config.execution.checkpointing.file-merging.enabled"
    assert "Flink 1.18 (flink-dist 1.18.1) has no option 'execution.checkpointing.file-merging.enabled'" in err.message
    # the same key on the 1.20 cluster alone is fine
    only_new = copy.deepcopy(KUBERNETES)
    only_new["flink"]["clusters"][0]["config"] = {"execution.checkpointing.file-merging.enabled": True}
    load_validated(write_spec(only_new, "new.yaml"))


def test_old_and_new_name_together_is_an_error(write_spec: WriteSpec) -> None:
    doc = copy.deepcopy(KUBERNETES)
    doc["flink"]["clusters"][0] |= {"version": "1.18", "image": "registry.example.internal/flink:1.18.1"}
    doc["flink"]["clusters"][0]["config"] = {
        "execution.checkpointing.dir": "s3://a",
        "state.checkpoints.dir": "s3://b",
    }
    with pytest.raises(SpecErrors) as e:
        load_validated(write_spec(doc))
    (err,) = e.value.errors
    assert err.finding is not None and err.finding.code == "AP4502"
    assert err.path == "flink.clusters[0].config.execution.checkpointing.dir"


def test_key_fates() -> None:
    assert key_fate((1, 18), "execution.checkpointing.dir").fate == "renamed"
    assert key_fate((1, 18), "execution.checkpointing.dir").name == "state.checkpoints.dir"
    assert key_fate((1, 20), "state.checkpoints.dir").fate == "readable"  # deprecated, still read
    assert key_fate((1, 20), "kubernetes.container.image").fate == "readable"
    assert key_fate((1, 18), "kubernetes.container.image.ref").fate == "readable"
    assert key_fate((1, 20), "connector.jdbc.url").fate == "unknown"
    assert key_fate((1, 12), "execution.checkpointing.dir").fate == "unchecked"  # no table for 1.12
    absent = key_fate((1, 18), "execution.checkpointing.file-merging.enabled")
    assert absent.fate == "absent" and "1.20.5" in absent.known_in and "1.18.1" not in absent.known_in
    # a clash keeps both names (the check reports it); nothing else moves
    assert resolve_config((1, 18), {"execution.checkpointing.dir": "a", "state.checkpoints.dir": "b"}) == (
        [("execution.checkpointing.dir", "a"), ("state.checkpoints.dir", "b")],
        [],
    )


def test_option_names_are_the_names_each_release_reads() -> None:
    """`option_names`: the names a release reads an option under, whichever release's name asks."""
    new = ("execution.checkpointing.dir", "state.checkpoints.dir", "state.backend.fs.checkpointdir")
    assert option_names((1, 20), "execution.checkpointing.dir") == new
    assert option_names((1, 20), "state.checkpoints.dir") == new
    assert option_names((1, 18), "execution.checkpointing.dir") == new[1:]  # before FLIP-406
    assert option_names((1, 15), "high-availability.type") == ("high-availability", "recovery.mode")
    assert option_names((1, 18), "high-availability") == ("high-availability.type", "recovery.mode", "high-availability")
    assert option_names((1, 11), "execution.checkpointing.dir") == new[1:]  # no table: the nearest (1.13)
    assert option_names((2, 9), "execution.checkpointing.dir") == new  # newer than every table: 2.3's
    assert option_names((1, 18), "execution.checkpointing.file-merging.enabled") == ()  # 1.18 has no such option


def test_the_state_options_are_found_in_the_clusters_own_table() -> None:
    """The checkpoint, savepoint and HA options are named by a key every release's table reads, so
    a cluster's names come from its own table without reading all of them (`_aliases`)."""
    for anchor in (CHECKPOINTS_DIR, SAVEPOINTS_DIR, HA_TYPE, HA_STORAGE):
        for version in table_versions():
            table = option_table(version)
            assert table is not None and anchor in table.owner, (anchor, version)


def test_tables_have_provenance_and_cover_the_versions() -> None:
    versions = table_versions()
    # every minor release PyPI's apache-flink-libraries ships, 1.13 … 2.3 (the schema accepts 1.11 on)
    assert versions == (*((1, m) for m in range(13, 21)), *((2, m) for m in range(4)))
    for v in versions:
        header = [ln for ln in (TABLE_DIR / f"{v[0]}.{v[1]}.tsv").read_text().splitlines() if ln.startswith("#")]
        assert header[0].startswith(f"# Flink {v[0]}.{v[1]}.")
        assert re.fullmatch(rf"# jar: flink-dist(_2\.1[12])?-{v[0]}\.{v[1]}\.\d+\.jar sha256:[0-9a-f]{{64}}", header[1])
        assert header[2].startswith("# from: ") and "PyPI" in header[2]
        assert header[3].startswith("# tool: tools/flink_options/FlinkOptionKeys.java")
        table = option_table(v)
        assert table is not None and len(table.options) > 300


@pytest.mark.flink
def test_the_1_20_table_is_what_flinks_own_classes_declare(tmp_path: Path) -> None:
    home = require_flink_home()
    dist = next((home / "lib").glob("flink-dist-*.jar"))
    version = dist.name.removeprefix("flink-dist-").removesuffix(".jar")
    text = (TABLE_DIR / "1.20.tsv").read_text(encoding="utf-8")
    assert f"# jar: {dist.name} sha256:{hashlib.sha256(dist.read_bytes()).hexdigest()}" in text.splitlines()
    rows = [ln for ln in text.splitlines() if not ln.startswith("#")]
    # the committed tool, run on the jar now, gives the committed table
    fresh = subprocess.run(
        ["java", str(TOOL), str(dist)], check=True, capture_output=True, text=True, timeout=600
    ).stdout.splitlines()
    assert fresh == rows, version
    # and the options Flink's classes name as constants have exactly their rows
    subprocess.run(["javac", "-d", str(tmp_path), "-cp", str(dist), str(PROBE)], check=True, timeout=300)
    probed = subprocess.run(
        ["java", "-cp", f"{dist}:{tmp_path}", "OptionRowsProbe"], check=True, capture_output=True, text=True, timeout=300
    ).stdout.splitlines()
    assert len(probed) == 10
    for row in probed:
        assert row in rows, row


def test_the_example_1_18_cluster_gets_the_name_1_18_reads() -> None:
    files = files_for(REPO / "stacks" / "edge-standalone.yaml")
    text = files["flink/edge-inference/flink-conf.yaml"][0]
    assert "state.checkpoints.dir: file:///var/lib/flink/checkpoints\n" in text
    assert "execution.checkpointing.dir" not in text


# --- typos: a near miss of a key the version reads (#39 item 8) -------------------------------------


def test_a_near_miss_of_a_key_the_version_reads_is_a_warning_with_a_did_you_mean(write_spec: WriteSpec) -> None:
    doc = _two_versions(**{"state.checkpoint.dir": "s3://b/cp", "my.team.option": "kept", "metrics.reporter.prom.factory.clas": "x"})
    found = findings_of(write_spec(yaml.safe_dump(doc, sort_keys=False)))
    near = [(f.path, f.message) for f in found if f.finding and f.finding.code == "AP4570"]
    assert [p for p, _ in near] == ["flink.defaults.config.state.checkpoint.dir"], near  # one for both clusters
    assert "cluster(s) job1, legacy" in near[0][1]
    assert near and all(m.endswith("did you mean 'state.checkpoints.dir'? Write 'state.checkpoints.dir' instead") for _, m in near)
    assert all(f.is_warning for f in found if f.finding and f.finding.code == "AP4570")


def test_near_miss_leaves_user_families_plugins_and_far_keys_alone() -> None:
    assert near_miss((1, 20), "state.checkpoint.dir") == "state.checkpoints.dir"
    assert near_miss((1, 20), "taskmanager.numberOfTaskSlot") == "taskmanager.numberOfTaskSlots"
    for key in (
        "my.team.option",
        "metrics.reporter.prom.port",
        "containerized.taskmanager.env.CUDA_VISIBLE_DEVICE",
        "kubernetes.operator.job.upgrade.last-state-fallback.enable",
        "fs.s3a.access.ky",
        "external-resource.gpu.amout",
        "state.checkpoints.dir",  # a key the version reads
        "table.exec.mini-batch.enabled",  # the Table API: no flink-dist option near it
    ):
        assert near_miss((1, 20), key) is None, key


def test_lint_ignore_silences_the_near_miss(write_spec: WriteSpec) -> None:
    doc = _two_versions(**{"state.checkpoint.dir": "s3://b/cp"})
    doc["lint"] = {"ignore": [{"code": "AP4570", "reason": "our plugin reads state.checkpoint.dir"}]}
    found = findings_of(write_spec(yaml.safe_dump(doc, sort_keys=False)))
    assert [f for f in found if f.finding and f.finding.code == "AP4570"] == []
