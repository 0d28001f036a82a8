"""Pulumi: Namespaces, service accounts and Roles come first; existing URNs are untouched."""

from __future__ import annotations

import pytest

from tests.pulumi.conftest import RunProgram, stack_config
from tests.support.pulumi_program import by_name


@pytest.mark.parametrize("stack", ["prod-eu", "shared-gpus"])
def test_new_objects_are_created_first(stack: str, pulumi_run: RunProgram) -> None:
    config = stack_config(stack)
    config.pop("accelplane:renderDir", None)
    run = pulumi_run(config, stack=stack)
    order = {r.urn: i for i, r in enumerate(run.registrations)}
    names = by_name(run)
    namespaces = {n.split("/", 1)[1]: r for n, r in names.items() if n.startswith("namespace/")}
    assert namespaces
    for ns in namespaces.values():
        assert ns.type == "kubernetes:core/v1:Namespace"
        assert ns.parent.endswith("accelplane:namespaces:Namespaces::" + stack + "-namespaces")
    for name, reg in names.items():
        parts = name.split("/")
        if len(parts) == 3 and parts[1] in namespaces:
            ns_urn = namespaces[parts[1]].urn
            assert ns_urn in reg.dependencies, name
            assert order[ns_urn] < order[reg.urn], name
        if name.startswith("rolebinding/") and parts[1] in namespaces:
            assert names[f"role/{parts[1]}/{parts[2]}"].urn in reg.dependencies
            assert names[f"serviceaccount/{parts[1]}/{parts[2]}"].urn in reg.dependencies
    # an existing object keeps its URN: parent chain and logical name as before (the program's one
    # platform per stack uses no prefix), with no alias to pay for
    podgroups = [r for n, r in names.items() if n.startswith("podgroup/")]
    for pg in podgroups:
        assert pg.urn == (
            f"urn:pulumi:{stack}::accelplane::accelplane:flink:Flink$"
            f"kubernetes:scheduling.volcano.sh/v1beta1:PodGroup::{pg.name}"
        )
        assert pg.alias_names == []
