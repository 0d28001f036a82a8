"""Every Kubernetes object is registered as a plain ``pulumi.CustomResource`` of its typed class's
type token with the typed class's options (`accelplane.pulumi.kinds.Prepared.create`), which
Pulumi serialises faster than the typed classes' input types. What the engine receives must not
change: here every example stack runs both ways under the mock monitor, and every
``RegisterResourceRequest`` (type, name, parent, inputs, property dependencies, dependencies,
provider, plugin version and download URL, aliases, retain-on-delete, every other field) must be
the same. Only the source position and stack trace, which name the calling line, may differ, and
the order of dependency URNs, which Pulumi collects from sets.
"""

from __future__ import annotations

import tomllib
from importlib.metadata import version
from typing import Any

import pulumi
import pulumi_kubernetes
import pytest
from accelplane.pulumi import kinds
from google.protobuf import json_format

from tests.pulumi.conftest import RunProgram, stack_config
from tests.support.paths import REPO_ROOT
from tests.support.pulumi_program import PULUMI_STACKS


def test_the_registration_runs_on_the_pinned_pulumi_releases() -> None:
    """The plain registration depends on generated internals of the typed classes: it is proven on
    the releases pyproject pins exactly, and the installed ones are those (the test below proves it)."""
    pyproject = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    pins = dict(d.split("==") for d in pyproject["project"]["dependencies"] if d.startswith("pulumi"))
    assert set(pins) == {"pulumi", "pulumi-kubernetes"}
    assert {name: version(name) for name in pins} == pins


def wire(requests: list[Any]) -> dict[tuple[str, str, str], dict[str, Any]]:
    """Requests by (parent, type, name), as JSON, without the call site."""
    out = {}
    for request in requests:
        message = json_format.MessageToDict(request, preserving_proto_field_name=True)
        for key in ("sourcePosition", "stackTrace", "source_position", "stack_trace"):
            message.pop(key, None)
        # sets on the wire (Pulumi collects them from sets of resources): compared as sets
        message["dependencies"] = sorted(message.get("dependencies", []))
        for deps in message.get("propertyDependencies", {}).values():
            deps["urns"] = sorted(deps.get("urns", []))
        out[(request.parent, request.type, request.name)] = message
    return out


@pytest.mark.parametrize("stack", PULUMI_STACKS)
def test_the_engine_receives_what_the_typed_classes_send(
    stack: str, pulumi_run: RunProgram, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = stack_config(stack)
    lean = wire(pulumi_run(config, stack=stack).requests)
    with monkeypatch.context() as patch:
        patch.setattr(kinds.Prepared, "create", kinds.Prepared.create_typed)
        typed = wire(pulumi_run(config, stack=stack).requests)
    assert lean.keys() == typed.keys()
    for key in typed:
        assert lean[key] == typed[key], key
    kubernetes = [m for (_, t, _), m in lean.items() if t.startswith("kubernetes:") and m.get("custom")]
    objects = [m for m in kubernetes if m["type"] != "pulumi:providers:kubernetes"]
    if not objects:  # a YARN/standalone-only stack registers no Kubernetes object
        return
    # not vacuous: the typed classes' options are there, and so are the manifests
    version = pulumi_kubernetes._utilities.get_version()
    assert all(m["version"] == version for m in objects)
    assert any(m.get("aliases") for m in objects)
    assert all({"apiVersion", "kind", "metadata"} <= set(m["object"]) for m in objects)


def test_class_registration_is_the_typed_class_token_and_options() -> None:
    """Spot check of the probe on one typed class and the CRD class, without the runtime."""
    from accelplane.artifacts import k8s_object

    ds = k8s_object("apps/v1", "DaemonSet", "p", family="f", labels={}, namespace="n", body={"spec": {}})
    prepared = kinds.prepare(ds)
    assert prepared.registration.token == "kubernetes:apps/v1:DaemonSet"
    aliases = [a.type_ for a in prepared.registration.opts.aliases or [] if isinstance(a, pulumi.Alias)]
    assert aliases == ["kubernetes:apps/v1beta2:DaemonSet", "kubernetes:extensions/v1beta1:DaemonSet"]
    queue = k8s_object("scheduling.volcano.sh/v1beta1", "Queue", "q", family="f", labels={}, body={"spec": {}})
    assert kinds.prepare(queue).registration.token == "kubernetes:scheduling.volcano.sh/v1beta1:Queue"
    assert kinds.prepare(queue).registration.opts.version == pulumi_kubernetes._utilities.get_version()


def test_nothing_is_registered_with_a_captured_stack(pulumi_run: RunProgram) -> None:
    """`GpuPlatform.create` registers the platform, its family components (`FamilyComponent.create`)
    and the objects outside any constructor, so Pulumi captures no call stack for them (a file URI
    per frame, each frame's source line looked up, the same accelplane lines for every resource)."""
    requests = pulumi_run(stack_config("prod-eu"), stack="prod-eu").requests
    objects = [r for r in requests if r.custom and r.type.startswith("kubernetes:") and "providers" not in r.type]
    assert objects and all(len(r.stackTrace.frames) == 0 for r in objects)
    components = [r for r in requests if not r.custom and r.type.startswith("accelplane:")]
    assert len(components) > 1 and all(len(r.stackTrace.frames) == 0 for r in components)


def test_constructors_register_the_same_components(pulumi_run: RunProgram) -> None:
    """``GpuPlatform(...)`` + `register_children` and ``FamilyComponent(...)`` (what a program
    written against the classes does) register exactly what `GpuPlatform.create` does, only with
    the call stack Pulumi captures in a constructor."""
    from accelplane.pulumi.family import FamilyComponent
    from accelplane.pulumi.platform import GpuPlatform

    config = stack_config("prod-eu")
    lean = pulumi_run(config, stack="prod-eu").requests

    def constructed(cls: Any, name: str, args: Any, opts: Any = None) -> Any:
        component = cls(name, args, opts)
        if cls is GpuPlatform:
            component.register_children()
        return component

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(GpuPlatform, "create", classmethod(constructed))
        patch.setattr(FamilyComponent, "create", classmethod(constructed))
        classic = pulumi_run(config, stack="prod-eu").requests
    assert wire(lean) == wire(classic)
    components = [r for r in classic if not r.custom and r.type.startswith("accelplane:")]
    assert len(components) > 1 and all(len(r.stackTrace.frames) > 0 for r in components)
