"""The lifecycle tables (accelplane.lifecycle): the provider's replace table, Kubernetes' immutable
fields, and the CRDs' transition rules (none) read from ../shared/reference."""

from __future__ import annotations

import pytest
import yaml
from accelplane.lifecycle import (
    ADOPTED,
    FORCE_NEW,
    K8S_IMMUTABLE,
    REPLACE_ON_CHANGES,
    REPLACE_WINDOW,
    classify,
    object_options,
)

from tests.support.paths import REPO_ROOT

REFERENCE = REPO_ROOT.parent / "shared" / "reference"
CRDS = [
    "volcano/scheduling.volcano.sh_queues.yaml",
    "volcano/scheduling.volcano.sh_podgroups.yaml",
    "flink-kubernetes-operator/flinkdeployments.flink.apache.org-v1.yml",
    "flink-kubernetes-operator/flinksessionjobs.flink.apache.org-v1.yml",
]


def _walk(node: object) -> list[str]:
    found: list[str] = []
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "x-kubernetes-validations":
                found += [str(rule.get("rule", "")) for rule in v]
            found += _walk(v)
    elif isinstance(node, list):
        for v in node:
            found += _walk(v)
    return found


@pytest.mark.parametrize("crd", CRDS)
def test_applied_crds_have_no_transition_rules(crd: str) -> None:
    path = REFERENCE / crd
    if not path.exists():
        pytest.skip(f"{path} missing")
    rules = [r for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")) for r in _walk(doc)]
    assert not [r for r in rules if "oldSelf" in r], "a CRD gained a transition rule: add it to K8S_IMMUTABLE"


def _rct(spec: dict[str, object]) -> dict[str, object]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "tm-gpus", "namespace": "flink"}, "spec": spec}


def test_classify_follows_the_provider_then_our_options_then_the_api_server() -> None:
    ds = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "x", "namespace": "y"}}
    assert classify(ds, ["spec.selector.matchLabels.app"]).action == "replace"
    assert classify(ds, ["spec.template.spec.containers[name=c].image"]).action == "update"
    rct = classify(_rct({}), ["spec.spec.devices.requests[0].exactly.count"])
    assert (rct.action, rct.delete_first) == ("replace-option", True)
    pc = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "p"}}
    assert classify(pc, ["value"]).action == "replace-option"
    assert classify(pc, ["description"]).action == "update"
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "n"}, "immutable": True}
    assert classify(cm, ["data[\"x\"]"]).action == "replace"
    assert classify({**cm, "immutable": False}, ["data[\"x\"]"]).action == "update"
    assert classify(ds, [], renamed=True).delete_first is False


def test_every_replace_option_is_an_immutable_field_with_a_window() -> None:
    for gk, paths in REPLACE_ON_CHANGES.items():
        immutable = {i.path for i in K8S_IMMUTABLE[gk]}
        assert set(paths) <= immutable
        assert gk not in FORCE_NEW  # the provider does not replace on it by itself
        assert REPLACE_WINDOW[gk]


def test_object_options() -> None:
    assert object_options(_rct({})).replace_on_changes == ("spec",)
    assert object_options(_rct({})).delete_before_replace
    _group, kind, ns, name = next(iter(ADOPTED))
    adopted = {"apiVersion": "v1", "kind": kind, "metadata": {"name": name, "namespace": ns}}
    assert object_options(adopted).retain_on_delete is True
    assert object_options({**adopted, "metadata": {"name": "other", "namespace": ns}}).retain_on_delete is None
