"""ServiceAccount, Role and RoleBinding of native-Kubernetes Flink clusters; none for operator clusters."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from accelplane.cli import main
from accelplane.derive.flink_rbac import DEPLOYMENTS_RULE, HA_CONFIGMAPS_RULE, PODS_RULE

from tests.conftest import EXAMPLE_SPECS
from tests.support.findings_text import without_tags
from tests.support.render import objects_for
from tests.support.validators import validate_core_object

RBAC_KINDS = ("ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding")


def _flink_rbac(objects: list[dict[str, Any]]) -> dict[tuple[str, str, str], dict[str, Any]]:
    return {
        (o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"]): o
        for o in objects
        if o["kind"] in RBAC_KINDS
        and o["metadata"]["labels"].get("app.kubernetes.io/component") == "flink-native-rbac"
    }


@pytest.mark.parametrize("spec", EXAMPLE_SPECS, ids=lambda p: p.stem)
def test_native_clusters_get_exactly_their_service_account_and_namespaced_role(spec: Path) -> None:
    objects = objects_for(spec)
    rbac = _flink_rbac(objects)
    for obj in rbac.values():
        validate_core_object(obj)
        assert obj["kind"] in ("ServiceAccount", "Role", "RoleBinding"), "no cluster-wide RBAC for Flink"
    configs = {
        o["metadata"]["name"]: o
        for o in objects
        if o["kind"] == "ConfigMap" and o["metadata"]["name"].startswith("accelplane-flink-")
    }
    for cm in configs.values():
        ns = cm["metadata"]["namespace"]
        text = cm["data"].get("config.yaml") or cm["data"]["flink-conf.yaml"]
        account = next(
            line.split(":", 1)[1].strip().strip('"') for line in text.splitlines()
            if line.startswith("kubernetes.jobmanager.service-account")
        )  # fmt: skip
        for kind in ("ServiceAccount", "Role", "RoleBinding"):
            assert (kind, ns, account) in rbac, (kind, ns, account)
        binding = rbac[("RoleBinding", ns, account)]
        assert binding["roleRef"] == {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "Role",
            "name": account,
        }
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": account, "namespace": ns}]
    for fd in (o for o in objects if o["kind"] == "FlinkDeployment"):
        key = ("ServiceAccount", fd["metadata"]["namespace"], fd["spec"]["serviceAccount"])
        assert key not in rbac, "operator clusters use the operator chart's job service account"


def test_prod_eu_role_grants_ha_configmaps_because_fraud_scoring_uses_kubernetes_ha() -> None:
    rbac = _flink_rbac(objects_for(next(p for p in EXAMPLE_SPECS if p.stem == "prod-eu")))
    assert rbac[("Role", "flink", "flink")]["rules"] == [PODS_RULE, DEPLOYMENTS_RULE, HA_CONFIGMAPS_RULE]
    shared = _flink_rbac(objects_for(next(p for p in EXAMPLE_SPECS if p.stem == "shared-gpus")))
    assert shared[("Role", "inference", "flink")]["rules"] == [PODS_RULE, DEPLOYMENTS_RULE]


def test_host_network_adds_service_updates(write_spec: Callable[..., Path]) -> None:
    spec = write_spec(
        """\
        cluster: {name: c, platforms: [kubernetes]}
        flink:
          clusters:
            - {name: a, namespace: jobs, config: {kubernetes.hostnetwork.enabled: true}}
        """
    )
    rbac = _flink_rbac(objects_for(spec))
    rules = rbac[("Role", "jobs", "flink")]["rules"]
    assert {"apiGroups": [""], "resources": ["services"], "verbs": ["get", "update"]} in rules
    namespace = next(o for o in objects_for(spec) if o["kind"] == "Namespace")
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "privileged"


def test_native_cluster_may_not_share_the_operator_job_service_account(
    write_spec: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    spec = write_spec(
        """\
        cluster: {name: c, platforms: [kubernetes]}
        flink:
          clusters:
            - {name: native, namespace: jobs}
            - {name: op, namespace: jobs, target: kubernetes-operator, job: {jarURI: "local:///j.jar"}}
        """
    )
    assert main(["validate", str(spec)]) == 1
    err = without_tags(capsys.readouterr().err)
    assert (
        "spec.yaml: flink.clusters[0].serviceAccount: service account 'flink' in namespace 'jobs' is the Flink "
        "Kubernetes Operator's job service account for operator cluster op (its Helm chart creates it with its "
        "own Role), and accelplane would create it again for this native cluster; give this cluster another "
        "serviceAccount or another namespace"
    ) in err
