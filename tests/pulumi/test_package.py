"""accelplane as a Pulumi component package (issue 40, item 6): the schema Pulumi's Python component
provider infers is valid against Pulumi's package metaschema, and a fake engine — a gRPC Engine and
ResourceMonitor of our own — starts the plugin as the CLI does (``provider/__main__.py <engine>``),
asks for its schema and calls ``Construct`` over gRPC, and gets every Kubernetes object registered
under the component."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from concurrent import futures
from typing import Any

import grpc
import jsonschema
import pytest
import yaml
from accelplane.pipeline import render_spec
from google.protobuf import empty_pb2, json_format, struct_pb2
from pulumi.runtime.proto import (
    engine_pb2,
    engine_pb2_grpc,
    provider_pb2,
    provider_pb2_grpc,
    resource_pb2,
    resource_pb2_grpc,
)

from tests.support.engine_urns import duplicates
from tests.support.paths import REFERENCE_DIR, REPO_ROOT

METASCHEMA = REFERENCE_DIR / "pulumi" / "pulumi.json"
"""pulumi/pulumi pkg/codegen/schema/pulumi.json (the package metaschema; not in the repository)."""
STACK, PROJECT = "dev", "team"
ROOT = f"urn:pulumi:{STACK}::{PROJECT}::pulumi:pulumi:Stack::{PROJECT}-{STACK}"
"""The root stack resource: the parent the engine names in a program's Construct requests."""
TOKEN = "accelplane:index:GpuPlatform"


def metaschema_validator() -> jsonschema.Validator:
    if not METASCHEMA.is_file():
        pytest.skip(f"Pulumi's package metaschema is not at {METASCHEMA} (pulumi/pulumi pkg/codegen/schema/pulumi.json)")
    meta = json.loads(METASCHEMA.read_text(encoding="utf-8"))

    def python_regex(node: Any) -> Any:
        # the metaschema's patterns use ECMA/Go named groups `(?<name>…)`; Python's `re` spells them `(?P<name>…)`
        if isinstance(node, dict):
            return {k: re.sub(r"\(\?<(?=[A-Za-z])", "(?P<", v) if k == "pattern" else python_regex(v)
                    for k, v in node.items()}
        if isinstance(node, list):
            return [python_regex(v) for v in node]
        return node

    return jsonschema.Draft202012Validator(python_regex(meta))


# --- a fake engine ------------------------------------------------------------------------------


class Monitor(resource_pb2_grpc.ResourceMonitorServicer):  # type: ignore[misc]
    """The engine's resource monitor: URNs as the engine makes them, inputs echoed as state."""

    def __init__(self) -> None:
        self.requests: list[Any] = []
        self.outputs: dict[str, Any] = {}

    def GetDeploymentInfo(self, request: Any, context: Any) -> Any:
        context.abort(grpc.StatusCode.UNIMPLEMENTED, "an older engine: features are probed one by one")

    def SupportsFeature(self, request: Any, context: Any) -> Any:
        return resource_pb2.SupportsFeatureResponse(
            hasSupport=request.id in ("secrets", "resourceReferences", "aliasSpecs")
        )

    def RegisterResource(self, request: Any, context: Any) -> Any:
        self.requests.append(request)
        parent_type = ""
        if request.parent and request.parent.split("::")[2] != "pulumi:pulumi:Stack":
            parent_type = request.parent.split("::")[2] + "$"
        urn = f"urn:pulumi:{STACK}::{PROJECT}::{parent_type}{request.type}::{request.name}"
        return resource_pb2.RegisterResourceResponse(
            urn=urn, id=f"{request.name}-id" if request.custom else "", object=request.object
        )

    def RegisterResourceOutputs(self, request: Any, context: Any) -> Any:
        self.outputs[request.urn] = request.outputs
        return empty_pb2.Empty()


class Engine(engine_pb2_grpc.EngineServicer):  # type: ignore[misc]
    def __init__(self) -> None:
        self.logs: list[str] = []

    def Log(self, request: Any, context: Any) -> Any:
        self.logs.append(f"{request.severity}: {request.message}")
        return empty_pb2.Empty()

    def GetRootResource(self, request: Any, context: Any) -> Any:
        return engine_pb2.GetRootResourceResponse(urn="")

    def SetRootResource(self, request: Any, context: Any) -> Any:
        return engine_pb2.SetRootResourceResponse()


@pytest.fixture
def engine() -> Iterator[tuple[Monitor, Engine, str, str]]:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
    monitor, eng = Monitor(), Engine()
    resource_pb2_grpc.add_ResourceMonitorServicer_to_server(monitor, server)
    engine_pb2_grpc.add_EngineServicer_to_server(eng, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    address = f"127.0.0.1:{port}"
    # the plugin as the CLI starts it: its __main__ with the engine's address
    plugin = subprocess.Popen([sys.executable, str(REPO_ROOT / "provider" / "__main__.py"), address],
                              cwd=REPO_ROOT / "provider", stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert plugin.stdout is not None
        line = plugin.stdout.readline().decode().strip()
        assert line.isdigit(), plugin.stderr.read().decode() if plugin.stderr else line
        yield monitor, eng, address, f"127.0.0.1:{line}"
    finally:
        plugin.kill()
        plugin.wait()
        server.stop(None)


def test_construct_over_grpc_registers_every_object(engine: tuple[Monitor, Engine, str, str]) -> None:
    monitor, _engine, address, plugin = engine
    stub = provider_pb2_grpc.ResourceProviderStub(grpc.insecure_channel(plugin))
    assert TOKEN in served_schema(plugin)["resources"]

    spec = REPO_ROOT / "stacks" / "prod-eu.yaml"
    inputs = struct_pb2.Struct()
    inputs.update({"spec": spec.read_text(encoding="utf-8"), "specDir": str(spec.parent)})
    response = stub.Construct(provider_pb2.ConstructRequest(
        project=PROJECT, stack=STACK, type=TOKEN, name="prod-eu", inputs=inputs,
        monitorEndpoint=address, parallel=8, dryRun=False, parent=ROOT,
    ), timeout=120)

    assert response.urn == f"urn:pulumi:{STACK}::{PROJECT}::{TOKEN}::prod-eu"
    objects = render_spec(spec).bundle.objects
    kubernetes = [r for r in monitor.requests if r.custom and r.type.startswith("kubernetes:")]
    assert len(kubernetes) == len(objects) > 30
    urns = [f"{r.parent}/{r.type}::{r.name}" for r in monitor.requests]
    assert duplicates(urns) == []
    components = {r.name for r in monitor.requests if not r.custom}
    assert "prod-eu" in components and "prod-eu-scheduling" in components
    for r in kubernetes:  # every object under a family component under the platform
        assert r.parent.split("::")[2].startswith(f"{TOKEN}$accelplane:"), r.name
        assert r.name.startswith("prod-eu:")
    state = json_format.MessageToDict(response.state)
    assert "streaming" in state["queueNames"]
    assert state["cluster"] == "prod-eu"
    assert sorted(state["objects"]) == sorted(
        f"{o.kind.lower()}/{o.namespace}/{o.name}" if o.namespace else f"{o.kind.lower()}/{o.name}" for o in objects
    )


def test_construct_reports_an_invalid_spec_on_the_component(engine: tuple[Monitor, Engine, str, str]) -> None:
    monitor, _engine, address, plugin = engine
    stub = provider_pb2_grpc.ResourceProviderStub(grpc.insecure_channel(plugin))
    data = yaml.safe_load((REPO_ROOT / "stacks" / "shared-gpus.yaml").read_text(encoding="utf-8"))
    data["flink"]["clusters"][0]["queue"] = "no-such-queue"
    inputs = struct_pb2.Struct()
    inputs.update({"spec": yaml.safe_dump(data), "specDir": str(REPO_ROOT / "stacks")})
    with pytest.raises(grpc.RpcError) as failed:
        stub.Construct(provider_pb2.ConstructRequest(
            project=PROJECT, stack=STACK, type=TOKEN, name="shared-gpus", inputs=inputs,
            monitorEndpoint=address, parallel=8, parent=ROOT,
        ), timeout=120)
    details = failed.value.details()  # type: ignore[attr-defined]
    assert "the spec of shared-gpus is invalid" in details
    assert any("no-such-queue" in line and " error AP" in line for line in details.splitlines()), details
    assert not [r for r in monitor.requests if r.custom]


def served_schema(plugin: str) -> dict[str, Any]:
    stub = provider_pb2_grpc.ResourceProviderStub(grpc.insecure_channel(plugin))
    loaded: dict[str, Any] = json.loads(stub.GetSchema(provider_pb2.GetSchemaRequest(version=0)).schema)
    return loaded


def test_the_inferred_schema_is_a_valid_pulumi_package(engine: tuple[Monitor, Engine, str, str]) -> None:
    """The schema the plugin serves (GetSchema, as `pulumi package get-schema` asks for it)."""
    s = served_schema(engine[3])
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in metaschema_validator().iter_errors(s)]
    assert errors == []
    component = s["resources"][TOKEN]
    assert component["isComponent"] is True
    assert component["requiredInputs"] == ["spec"]
    assert set(component["inputProperties"]) == {"spec", "specDir", "resourcePrefix"}
    assert set(component["properties"]) == {
        "cluster", "queueNames", "priorityClassNames", "podGroupNames", "namespaces", "objects", "files",
        "fileContents",
    }
    assert component["properties"]["queueNames"]["items"]["type"] == "string"
    for name, prop in [*component["properties"].items(), *component["inputProperties"].items()]:
        assert prop.get("description"), name
