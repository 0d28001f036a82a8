"""Run the Pulumi program in-process under Pulumi's mocks (no CLI, no provider plugin, no cluster).

`pulumi_run` is a per-test fixture: every call resets the runtime, installs fresh mocks
(`set_mocks`) and the stack's configuration (`set_all_config`), runs the program function inside
`pulumi.runtime.test` (which waits for every outstanding registration) and returns what the mock
monitor saw: each resource's type, logical name, URN, parent, ``depends_on`` URNs, options and the
inputs exactly as they arrive in wire format, plus the resolved stack outputs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulumi
import pulumi.runtime
import pytest
import yaml
from pulumi.runtime import rpc
from pulumi.runtime import settings as pulumi_settings
from pulumi.runtime.mocks import MockMonitor

from tests.support.paths import REPO_ROOT

PROJECT = "accelplane"


@dataclass
class Registration:
    """One RegisterResource request as the engine would receive it."""

    type: str
    name: str
    urn: str
    parent: str
    dependencies: list[str]
    custom: bool
    retain_on_delete: bool
    provider: str
    inputs: dict[str, Any] = field(default_factory=dict)
    outputs: dict[str, Any] | None = None
    alias_names: list[str] = field(default_factory=list)
    """Names of the resource's aliases (``Alias(name=...)``), as the engine receives them."""

    @property
    def logical(self) -> str:
        """The name without the platform's ``<prefix>:`` (``prod-eu:queue/streaming`` → ``queue/streaming``)."""
        return self.name.split(":", 1)[1] if self.custom and ":" in self.name else self.name


@dataclass
class ProgramRun:
    """Everything one program run registered and exported."""

    registrations: list[Registration]
    outputs: dict[str, Any]
    requests: list[Any] = field(default_factory=list)
    """The RegisterResource requests themselves (protobuf), in the order the monitor got them."""

    def by_urn(self) -> dict[str, Registration]:
        """Registrations by URN."""
        return {r.urn: r for r in self.registrations}

    def kubernetes(self) -> list[Registration]:
        """Kubernetes object resources only (no components, stack or provider)."""
        return [r for r in self.registrations if r.custom and r.type.startswith("kubernetes:")]

    def of_type(self, type_: str) -> list[Registration]:
        """Registrations of one type token."""
        return [r for r in self.registrations if r.type == type_]


class _Mocks(pulumi.runtime.Mocks):
    """Echo inputs as state (what a provider returns for a created object, minus server defaults)."""

    def __init__(self) -> None:
        self.inputs: dict[tuple[str, str], dict[str, Any]] = {}

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        self.inputs[(args.typ, args.name)] = args.inputs
        return f"{args.name}-id", dict(args.inputs)

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]] | None]:
        raise AssertionError(f"the program must not invoke provider functions (called {args.token})")


class _RecordingMonitor(MockMonitor):
    """The stock mock monitor, additionally recording parent, dependencies and options."""

    def __init__(self, mocks: _Mocks) -> None:
        super().__init__(mocks)
        self.requests: list[Any] = []
        self.outputs: dict[str, dict[str, Any]] = {}

    def RegisterResource(self, request: Any) -> Any:
        self.requests.append(request)
        return super().RegisterResource(request)

    def RegisterResourceOutputs(self, request: Any) -> Any:
        self.outputs[request.urn] = rpc.deserialize_properties(request.outputs)
        return super().RegisterResourceOutputs(request)


def _reset_runtime() -> None:
    pulumi_settings.reset_options()
    pulumi.runtime.set_all_config({})


def stack_config(stack: str) -> dict[str, str]:
    """The ``config:`` of ``stacks/Pulumi.<stack>.yaml`` as `set_all_config` expects it (string values)."""
    data = yaml.safe_load((REPO_ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text(encoding="utf-8"))
    return {k: v if isinstance(v, str) else yaml.safe_dump(v) for k, v in (data.get("config") or {}).items()}


RunProgram = Callable[..., ProgramRun]


@pytest.fixture
def pulumi_run(monkeypatch: pytest.MonkeyPatch) -> Iterator[RunProgram]:
    """Per-test runner: ``pulumi_run(config, stack=..., project_dir=..., program=..., preview=...)``."""

    def run(
        config: Mapping[str, str],
        *,
        stack: str = "test",
        project_dir: Path = REPO_ROOT,
        program: Callable[[], Any] | None = None,
        preview: bool = False,
    ) -> ProgramRun:
        from accelplane import program as accelplane_program

        _reset_runtime()
        mocks = _Mocks()
        monitor = _RecordingMonitor(mocks)
        pulumi.runtime.set_mocks(mocks, project=PROJECT, stack=stack, preview=preview, monitor=monitor)
        pulumi.runtime.set_all_config(dict(config))
        monkeypatch.chdir(project_dir)
        outputs: dict[str, Any] = {}

        @pulumi.runtime.test
        def _program() -> Any:
            if program is None:
                accelplane_program.main(project_dir)
            else:
                program()
            root = pulumi_settings.get_root_resource()
            assert root is not None
            return pulumi.Output.from_input(root.outputs).apply(outputs.update)

        _program()
        registrations = []
        for req in monitor.requests:
            if req.type == "pulumi:pulumi:Stack":
                continue
            urn = monitor.make_urn(req.parent, req.type, req.name)
            registrations.append(
                Registration(
                    type=req.type,
                    name=req.name,
                    urn=urn,
                    parent=req.parent,
                    dependencies=sorted(req.dependencies),
                    custom=req.custom,
                    retain_on_delete=req.retainOnDelete,
                    provider=req.provider,
                    inputs=mocks.inputs.get((req.type, req.name), {}),
                    outputs=monitor.outputs.get(urn),
                    alias_names=[a.spec.name for a in req.aliases if a.HasField("spec") and a.spec.name],
                )
            )
        return ProgramRun(registrations, outputs, list(monitor.requests))

    yield run
    _reset_runtime()
