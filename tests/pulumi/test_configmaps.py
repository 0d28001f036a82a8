"""ConfigMap update strategy (docs/pulumi.md): content-addressed immutable ConfigMaps are new objects
that old pods keep; mutable ones are updated in place and pods that use them roll via an annotation."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from accelplane.artifacts import Bundle

from tests.conftest import EXAMPLE_SPECS
from tests.support.configmap_rollout import (
    ROLLOUT_ANNOTATION,
    configmaps_used,
    is_immutable,
    pod_templates,
    rollout_annotations,
    rollout_hash,
)
from tests.support.render import bundle_for


def configmap(name: str, data: dict[str, str], immutable: bool = False) -> dict[str, object]:
    cm: dict[str, object] = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name},
        "data": data,
    }
    if immutable:
        cm["immutable"] = True
    return cm


def test_rollout_hash_changes_with_content_and_name_only() -> None:
    a = configmap("a", {"k": "v", "x": "y"})
    reordered = configmap("a", {"x": "y", "k": "v"})
    assert rollout_hash([a]) == rollout_hash([reordered])
    assert rollout_hash([a]) != rollout_hash([configmap("a", {"k": "w", "x": "y"})])
    assert rollout_hash([a]) != rollout_hash([configmap("b", {"k": "v", "x": "y"})])
    b = configmap("b", {"z": "1"})
    assert rollout_hash([a, b]) == rollout_hash([b, a])


def test_rollout_annotations_ignore_immutable_configmaps() -> None:
    assert rollout_annotations([configmap("script-0123456789", {"s": "x"}, immutable=True)]) == {}
    mutable = configmap("plugin-config", {"config.yaml": "version: v1\n"})
    assert rollout_annotations([mutable, configmap("i", {}, immutable=True)]) == {
        ROLLOUT_ANNOTATION: rollout_hash([mutable])
    }


def test_pod_templates_and_configmap_references() -> None:
    manifest = {
        "apiVersion": "flink.apache.org/v1beta1",
        "kind": "FlinkDeployment",
        "spec": {
            "podTemplate": {
                "metadata": {"annotations": {"a": "b"}},
                "spec": {
                    "containers": [
                        {"name": "c", "envFrom": [{"configMapRef": {"name": "env-cm"}}],
                         "env": [{"name": "X", "valueFrom": {"configMapKeyRef": {"name": "key-cm", "key": "x"}}}]}
                    ],
                    "volumes": [
                        {"name": "v", "configMap": {"name": "vol-cm"}},
                        {"name": "p", "projected": {"sources": [{"configMap": {"name": "projected-cm"}}]}},
                    ],
                },
            },
            "taskManager": {"podTemplate": {"spec": {"containers": [{"name": "tm"}]}}},
        },
    }  # fmt: skip
    templates = list(pod_templates(manifest))
    assert len(templates) == 2
    assert templates[0][0] == {"annotations": {"a": "b"}}
    assert configmaps_used(templates[0][1]) == {"env-cm", "key-cm", "vol-cm", "projected-cm"}
    assert configmaps_used(templates[1][1]) == set()


def check_rollout_contract(bundle: Bundle) -> list[str]:
    """Problems: pod templates using a mutable ConfigMap of the bundle without the matching annotation."""
    problems = []
    configmaps = {(o.namespace, o.name): o.manifest for o in bundle.objects if o.kind == "ConfigMap"}
    for obj in bundle.objects:
        for metadata, pod_spec in pod_templates(obj.manifest):
            used = [
                configmaps[(obj.namespace, n)]
                for n in sorted(configmaps_used(pod_spec))
                if (obj.namespace, n) in configmaps
            ]
            expected = rollout_annotations(used)
            actual = {k: v for k, v in (metadata.get("annotations") or {}).items() if k == ROLLOUT_ANNOTATION}
            if actual != expected:
                problems.append(
                    f"{obj.kind} {obj.namespace}/{obj.name}: pod template uses mutable ConfigMaps "
                    f"{[u['metadata']['name'] for u in used if not is_immutable(u)]} and must carry annotations "
                    f"{expected} (tests.support.configmap_rollout.rollout_annotations), has {actual}"
                )
    return problems


@pytest.mark.parametrize("spec", EXAMPLE_SPECS, ids=lambda p: p.stem)
def test_example_stacks_follow_the_rollout_contract(spec: Path) -> None:
    assert check_rollout_contract(bundle_for(spec)) == []


def test_rollout_contract_check_detects_a_missing_annotation() -> None:
    from tests.pulumi.test_components import every_kind_bundle

    objects = every_kind_bundle()
    assert check_rollout_contract(Bundle(objects)) == []
    broken = [copy.deepcopy(o) for o in objects]
    ds = next(o for o in broken if o.kind == "DaemonSet")
    ds.manifest["spec"]["template"]["metadata"]["annotations"] = {}
    (problem,) = check_rollout_contract(Bundle(broken))
    assert (
        "DaemonSet kube-system/nvidia-device-plugin" in problem and "nvidia-device-plugin-config" in problem
    )
