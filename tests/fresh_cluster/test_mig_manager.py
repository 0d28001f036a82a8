"""One `gpu.mig` setting also partitions the GPUs: the MIG manager's mig-parted config and the
``nvidia.com/mig.config`` node label, validated against nvidia-mig-parted's own format rules
(`tests.support.mig_parted`, held to upstream's verdicts in tests/fresh_cluster/mig_parted_cases.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from accelplane.cli import main

from tests.conftest import EXAMPLE_SPECS
from tests.fresh_cluster.mig_parted_cases import DOCUMENT_CASES, PROFILE_CASES, DocumentCase, ProfileCase
from tests.support.findings_text import without_tags
from tests.support.mig_parted import mig_parted_errors, profile_error
from tests.support.render import files_for, objects_for
from tests.support.validators import reference, validate_core_object

SHARED = next(p for p in EXAMPLE_SPECS if p.stem == "shared-gpus")


def _mig_configmap(objects: list[dict[str, Any]]) -> dict[str, Any] | None:
    return next(
        (
            o
            for o in objects
            if o["kind"] == "ConfigMap" and o["metadata"]["name"] == "accelplane-mig-parted-config"
        ),
        None,
    )


def test_validator_accepts_upstream_example() -> None:
    """mig-parted's own examples/config.yaml (../shared/reference/mig-parted, byte for byte)."""
    assert mig_parted_errors(yaml.safe_load(reference("mig-parted/examples-config.yaml").read_text())) == []


@pytest.mark.parametrize("case", PROFILE_CASES, ids=lambda c: repr(c.profile))
def test_profile_names_get_go_nvlibs_verdict_word_for_word(case: ProfileCase) -> None:
    assert profile_error(case.profile) == case.error, case.source


@pytest.mark.parametrize("case", DOCUMENT_CASES, ids=lambda c: c.source.rsplit("/", 1)[-1])
def test_documents_get_mig_parteds_verdict(case: DocumentCase) -> None:
    errors = mig_parted_errors(case.document)
    if case.refused_with is None:
        assert errors == [], case.source
    else:
        assert errors, case.source
        assert case.refused_with in "\n".join(errors), (case.source, errors)


@pytest.mark.parametrize("spec", EXAMPLE_SPECS, ids=lambda p: p.stem)
def test_rendered_mig_config_parses_as_mig_parted(spec: Path) -> None:
    cm = _mig_configmap(objects_for(spec))
    if cm is None:
        return
    validate_core_object(cm)
    assert mig_parted_errors(yaml.safe_load(cm["data"]["config.yaml"])) == []


def test_shared_gpus_partitions_its_mig_pool_and_selects_the_labelled_nodes() -> None:
    objects = objects_for(SHARED)
    cm = _mig_configmap(objects)
    assert cm is not None and cm["metadata"]["namespace"] == "gpu-operator"
    assert yaml.safe_load(cm["data"]["config.yaml"]) == {
        "version": "v1",
        "mig-configs": {
            "a100-mig": [
                {
                    "devices": "all",
                    "mig-enabled": True,
                    "mig-devices": {"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1},
                }
            ],
            "all-disabled": [{"devices": "all", "mig-enabled": False}],
        },
    }
    label = {"key": "nvidia.com/mig.config", "operator": "In", "values": ["a100-mig"]}
    for name in ("nvidia-device-plugin-a100-mig", "gpu-feature-discovery-a100-mig"):
        ds = next(o for o in objects if o["kind"] == "DaemonSet" and o["metadata"]["name"] == name)
        terms = ds["spec"]["template"]["spec"]["affinity"]["nodeAffinity"][
            "requiredDuringSchedulingIgnoredDuringExecution"
        ]
        assert label in terms["nodeSelectorTerms"][0]["matchExpressions"]
    fd = next(
        o for o in objects if o["kind"] == "FlinkDeployment" and o["metadata"]["name"] == "embeddings-mig"
    )
    assert (
        fd["spec"]["taskManager"]["podTemplate"]["spec"]["nodeSelector"]["nvidia.com/mig.config"]
        == "a100-mig"
    )
    # pools without MIG get no layout and no label
    t4 = next(
        o
        for o in objects
        if o["kind"] == "DaemonSet" and o["metadata"]["name"] == "nvidia-device-plugin-t4-shared"
    )
    assert "nvidia.com/mig.config" not in str(t4)
    assert "kubernetes/configmap_gpu-operator_accelplane-mig-parted-config.yaml" in files_for(SHARED)


def test_declared_mig_label_must_match(
    write_spec: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    spec = write_spec(
        """\
        cluster: {name: c, platforms: [kubernetes]}
        nodePools:
          - name: all-disabled
            nodes: 1
            gpu: {vendor: nvidia, perNode: 8, mig: {strategy: single, devices: {1g.10gb: 7}}}
            labels: {pool: a, nvidia.com/mig.config: custom}
        """
    )
    assert main(["validate", str(spec)]) == 1
    err = without_tags(capsys.readouterr().err)
    assert (
        "spec.yaml: nodePools[0].name: a MIG pool's name is its MIG manager layout (nvidia.com/mig.config), and "
        "'all-disabled' is the layout that turns MIG off; rename the pool"
    ) in err
    assert (
        "spec.yaml: nodePools[0].labels.nvidia.com/mig.config: the MIG manager layout of this pool is 'all-disabled' "
        "(derived from gpu.mig and the pool name); remove the label or set it to 'all-disabled'"
    ) in err
