"""Lifecycle options as the engine receives them (issue 41): ``replaceOnChanges`` +
``deleteBeforeReplace`` on the fields Kubernetes refuses to update (ResourceClaimTemplate ``spec``,
PriorityClass ``value``/``preemptionPolicy``), ``retainOnDelete`` on adopted and content-addressed
objects, and the ``pulumi.com/waitFor`` annotation on every FlinkDeployment."""

from __future__ import annotations

from accelplane.lifecycle import FLINK_DEPLOYMENT_WAIT_FOR, WAIT_FOR_ANNOTATION

from tests.pulumi.conftest import RunProgram, stack_config


def _requests_by_type(run, token: str) -> list:  # type: ignore[no-untyped-def]
    return [r for r in run.requests if r.type == token]


def test_dra_stack_replaces_claim_templates_and_priority_classes_delete_first(pulumi_run: RunProgram) -> None:
    run = pulumi_run(stack_config("dra-gpus"), stack="dra-gpus")
    templates = [r for r in run.requests if r.type.endswith(":ResourceClaimTemplate")]
    assert templates
    for req in templates:
        assert list(req.replaceOnChanges) == ["spec"]
        assert req.deleteBeforeReplace is True
    classes = _requests_by_type(run, "kubernetes:scheduling.k8s.io/v1:PriorityClass")
    assert classes
    for req in classes:
        assert list(req.replaceOnChanges) == ["value", "preemptionPolicy"]
        assert req.deleteBeforeReplace is True
    # nothing else asks for a replace of its own: the provider's table decides for the rest
    others = [r for r in run.requests if r.replaceOnChanges and r not in templates and r not in classes]
    assert others == []


def test_flink_deployments_await_the_operators_reconcile(pulumi_run: RunProgram) -> None:
    run = pulumi_run(stack_config("prod-eu"), stack="prod-eu")
    deployments = [r for r in run.kubernetes() if r.type == "kubernetes:flink.apache.org/v1beta1:FlinkDeployment"]
    assert deployments
    for r in deployments:
        assert r.inputs["metadata"]["annotations"][WAIT_FOR_ANNOTATION] == FLINK_DEPLOYMENT_WAIT_FOR
    # the annotation is on the CR only, never in the pod templates the operator copies into pods
    for r in deployments:
        for role in ("jobManager", "taskManager"):
            pod_meta = r.inputs["spec"][role]["podTemplate"]["metadata"]
            assert WAIT_FOR_ANNOTATION not in (pod_meta.get("annotations") or {})


def test_adopted_volcano_scheduler_configmap_is_retained(pulumi_run: RunProgram) -> None:
    run = pulumi_run(stack_config("prod-eu"), stack="prod-eu")
    retained = {r.name for r in run.kubernetes() if r.retain_on_delete}
    assert "configmap/volcano-system/volcano-scheduler-configmap" in retained
    # retained: immutable ConfigMaps, Namespaces, the adopted ConfigMap — and nothing else
    for r in run.kubernetes():
        if r.retain_on_delete:
            assert (
                r.type == "kubernetes:core/v1:Namespace"
                or r.inputs.get("immutable") is True
                or r.name == "configmap/volcano-system/volcano-scheduler-configmap"
            ), r.name
