"""The ported Kueue webhook and schema-size rules (`accelplane.kueue_rules`), one test each, each
citing its source in kubernetes-sigs/kueue v0.19.2 (c3785e520aeeb0e0a93e8a3785a6e46c51502246). Kueue's
Go code cannot be built here, so the cases follow the Go code's conditions line by line; the
valid baseline is a ClusterQueue accelplane renders."""

from __future__ import annotations

import copy
from typing import Any

from accelplane.kueue_rules import cluster_queue_errors, is_resource_name, resource_flavor_errors

CQ: dict[str, Any] = {
    "apiVersion": "kueue.x-k8s.io/v1beta2",
    "kind": "ClusterQueue",
    "metadata": {"name": "q"},
    "spec": {
        "cohortName": "parent",
        "resourceGroups": [
            {
                "coveredResources": ["cpu", "memory", "nvidia.com/gpu"],
                "flavors": [
                    {"name": "a100", "resources": [
                        {"name": "cpu", "nominalQuota": "8", "borrowingLimit": "4", "lendingLimit": "2"},
                        {"name": "memory", "nominalQuota": "32Gi"},
                        {"name": "nvidia.com/gpu", "nominalQuota": "4", "lendingLimit": "4"},
                    ]},
                ],
            }
        ],
    },
}


def _cq() -> dict[str, Any]:
    return copy.deepcopy(CQ)


def _messages(obj: dict[str, Any]) -> list[str]:
    return [f"{path}: {message}" for path, message in cluster_queue_errors(obj)]


def test_baseline_is_accepted() -> None:
    assert cluster_queue_errors(_cq()) == []


def test_resource_names_match_covered_resources_by_position() -> None:
    """clusterqueue_webhook.go:339-341: ``rq.Name != coveredResources[i]`` is invalid."""
    cq = _cq()
    res = cq["spec"]["resourceGroups"][0]["flavors"][0]["resources"]
    res[1], res[2] = res[2], res[1]
    assert _messages(cq) == [
        "spec.resourceGroups[0].flavors[0].resources[1].name: must match the name in coveredResources",
        "spec.resourceGroups[0].flavors[0].resources[2].name: must match the name in coveredResources",
    ]


def test_lending_limit_at_most_nominal_quota() -> None:
    """clusterqueue_webhook.go:382-389 (``enforceNominalGreaterThanLending`` is true for a
    ClusterQueue, 117-120)."""
    cq = _cq()
    cq["spec"]["resourceGroups"][0]["flavors"][0]["resources"][2]["lendingLimit"] = "5"
    assert _messages(cq) == [
        "spec.resourceGroups[0].flavors[0].resources[2].lendingLimit: must be less than or equal to the nominalQuota"
    ]


def test_limits_only_with_a_cohort() -> None:
    """clusterqueue_webhook.go:343-353 and 367-380: borrowing and lending limits need a cohort
    (``hasParent: cq.Spec.CohortName != ""``, 118)."""
    cq = _cq()
    del cq["spec"]["cohortName"]
    assert _messages(cq) == [
        "spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit: must be nil when cohort is empty",
        "spec.resourceGroups[0].flavors[0].resources[0].lendingLimit: must be nil when cohort is empty",
        "spec.resourceGroups[0].flavors[0].resources[2].lendingLimit: must be nil when cohort is empty",
    ]


def test_quotas_not_negative() -> None:
    """clusterqueue_webhook.go:342 and 358-365: ``validateResourceQuantity``."""
    cq = _cq()
    cq["spec"]["resourceGroups"][0]["flavors"][0]["resources"][1]["nominalQuota"] = "-1"
    assert _messages(cq) == ["spec.resourceGroups[0].flavors[0].resources[1].nominalQuota: must be greater than or equal to 0"]


def test_a_resource_and_a_flavor_in_one_group_only() -> None:
    """clusterqueue_webhook.go:302-329: duplicate covered resources and flavors across groups."""
    cq = _cq()
    cq["spec"]["resourceGroups"].append(copy.deepcopy(cq["spec"]["resourceGroups"][0]))
    messages = _messages(cq)
    assert "spec.resourceGroups[1].coveredResources[0]: duplicate resource 'cpu'" in messages
    assert "spec.resourceGroups[1].flavors[0].name: duplicate flavor 'a100'" in messages


def test_at_most_16_resource_groups() -> None:
    """CRD schema (v1beta2 ClusterQueue ``spec.resourceGroups`` ``maxItems: 16``)."""
    cq = _cq()
    group = cq["spec"]["resourceGroups"][0]
    cq["spec"]["resourceGroups"] = [
        {"coveredResources": [f"example.com/r{i}"], "flavors": [{"name": f"f{i}", "resources": [{"name": f"example.com/r{i}", "nominalQuota": "1"}]}]}
        for i in range(16)
    ]
    assert cluster_queue_errors(cq) == []
    cq["spec"]["resourceGroups"].append(group)
    assert ("spec.resourceGroups", "must have at most 16 items") in cluster_queue_errors(cq)


def test_at_most_64_flavors_per_group() -> None:
    """CRD schema (``resourceGroups[].flavors`` ``maxItems: 64``)."""
    cq = _cq()
    flavors = cq["spec"]["resourceGroups"][0]["flavors"]
    for i in range(64):
        flavors.append({**copy.deepcopy(flavors[0]), "name": f"f{i}"})
    assert ("spec.resourceGroups[0].flavors", "must have at most 64 items") in cluster_queue_errors(cq)


def test_flavor_taints_unique_by_key_and_effect() -> None:
    """resourceflavor_webhook.go:96-125 (``validateNodeTaints``): same key, same effect twice is a
    duplicate whatever the value; same key with another effect is fine."""
    rf = {"spec": {"nodeTaints": [
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"},
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NoExecute"},
        {"key": "nvidia.com/gpu", "value": "other", "effect": "NoSchedule"},
    ]}}
    assert resource_flavor_errors(rf) == [("spec.nodeTaints[2]", "taints must be unique by key and effect pair")]


def test_at_most_8_node_labels_taints_and_tolerations_per_flavor() -> None:
    """CRD schema (v1beta2 ResourceFlavor ``nodeLabels`` ``maxProperties: 8``, ``nodeTaints`` and
    ``tolerations`` ``maxItems: 8``)."""
    labels = {f"example.com/l{i}": "x" for i in range(8)}
    taints = [{"key": f"example.com/t{i}", "effect": "NoSchedule"} for i in range(8)]
    assert resource_flavor_errors({"spec": {"nodeLabels": labels, "nodeTaints": taints}}) == []
    labels["example.com/l8"] = "x"
    taints.append({"key": "example.com/t8", "effect": "NoSchedule"})
    tolerations = [{"key": f"example.com/t{i}", "operator": "Exists"} for i in range(9)]
    assert resource_flavor_errors({"spec": {"nodeLabels": labels, "nodeTaints": taints, "tolerations": tolerations}}) == [
        ("spec.nodeLabels", "must have at most 8 items"),
        ("spec.nodeTaints", "must have at most 8 items"),
        ("spec.tolerations", "must have at most 8 items"),
    ]


def test_the_schema_limits_ported_are_the_crds() -> None:
    """The size limits repeated in `accelplane.kueue_rules` are those of the v0.19.2 CRDs."""
    from tests.support.validators import crd_schema

    rf = crd_schema("kueue.x-k8s.io", "ResourceFlavor", "v1beta2")["properties"]["spec"]["properties"]
    assert rf["nodeLabels"]["maxProperties"] == 8
    assert rf["nodeTaints"]["maxItems"] == rf["tolerations"]["maxItems"] == 8
    rg = crd_schema("kueue.x-k8s.io", "ClusterQueue", "v1beta2")["properties"]["spec"]["properties"]["resourceGroups"]
    assert rg["maxItems"] == 16
    assert rg["items"]["properties"]["flavors"]["maxItems"] == rg["items"]["properties"]["coveredResources"]["maxItems"] == 64


def test_covered_resources_are_qualified_names() -> None:
    """clusterqueue_webhook.go:309-311 → common.go:29-35 (``validateResourceName``: apimachinery
    ``IsLabelKey``: an optional DNS-1123 subdomain prefix of ≤ 253 characters, a name of ≤ 63)."""
    assert is_resource_name("nvidia.com/gpu") and is_resource_name("cpu") and is_resource_name("nvidia.com/mig-1g.10gb")
    assert is_resource_name("r" * 63) and not is_resource_name("r" * 64)
    assert not is_resource_name("/gpu") and not is_resource_name("Example.com/gpu") and not is_resource_name("a/")
    cq = _cq()
    cq["spec"]["resourceGroups"][0]["coveredResources"][2] = "nvidia.com/" + "g" * 64
    cq["spec"]["resourceGroups"][0]["flavors"][0]["resources"][2]["name"] = "nvidia.com/" + "g" * 64
    assert _messages(cq) == [
        "spec.resourceGroups[0].coveredResources[2]: " + repr("nvidia.com/" + "g" * 64) + " is not a qualified name"
    ]
