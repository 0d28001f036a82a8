"""One Pulumi program in a fresh interpreter under Pulumi's mocks, as `pulumi up` runs a program
(bench/run.py's process rows, issue 40):

    python bench/pulumi_process.py program SPEC      # the project's __main__.py (what `pulumi up` runs)
    python bench/pulumi_process.py plain SPEC        # accelplane.program.main without __main__.py's collector settings
    python bench/pulumi_process.py typed MANIFESTS   # the floor: the same manifests through the typed classes
    ... --no-gc                                      # either, with CPython's cyclic collector off (the work alone)

Pulumi's language host starts a new interpreter per run, imports the SDK and runs the project's
``__main__.py``; this script does the same with the SDK's mocks in place of the engine (the
resources are answered in process, as in bench/run.py's in-process rows). ``typed`` is what a team
would write without accelplane: a program that imports pulumi_kubernetes, reads the manifests
(MANIFESTS: a JSON list of ``[class path below pulumi_kubernetes or null for
apiextensions.CustomResource, name, constructor arguments]``, ConfigMap payloads already
serialised, written by bench/run.py) and registers each through its public typed class, in the
program's order, with no components, provider, dependencies or outputs. It imports only the API
groups it uses, as such a program would, and nothing of accelplane.
"""

from __future__ import annotations

import gc
import json
import runpy
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pulumi
import pulumi.runtime
from pulumi.runtime import settings as pulumi_settings

REPO = Path(__file__).resolve().parent.parent


class Mocks(pulumi.runtime.Mocks):
    """The engine's answers: every resource gets an id and its inputs as outputs (bench/run.py's mocks)."""

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        return f"{args.name}-id", dict(args.inputs)

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], None]:
        return {}, None


def run(program: Callable[[], Any], config: dict[str, str], mocks: Mocks | None = None) -> None:
    """Run ``program`` under ``mocks`` (default `Mocks`) with the stack configuration ``config``, to
    completion (bench/run.py's in-process samples use it too)."""
    pulumi_settings.reset_options()
    pulumi.runtime.set_mocks(mocks or Mocks(), project="accelplane", stack="bench", preview=False)
    pulumi.runtime.set_all_config(config)

    @pulumi.runtime.test  # type: ignore[untyped-decorator]
    def registered() -> None:
        program()

    registered()


def typed_program(manifests: Path) -> Callable[[], None]:
    """The floor's program: every manifest of ``manifests`` through its typed class."""
    import pulumi_kubernetes as k8s

    entries = json.loads(manifests.read_text(encoding="utf-8"))

    def resolve(path: str | None) -> Any:
        found: Any = k8s
        for part in (path or "apiextensions.CustomResource").split("."):
            found = getattr(found, part)
        return found

    def program() -> None:
        for path, name, arguments in entries:
            resolve(path)(name, opts=pulumi.ResourceOptions(), **arguments)

    return program


def main(argv: list[str]) -> int:
    mode, target = argv[0], Path(argv[1]).resolve()
    if "--no-gc" in argv[2:]:
        gc.disable()  # tune_collector changes thresholds only: the collector stays off
    if mode == "typed":
        run(typed_program(target), {})
        return 0
    config = {"accelplane:spec": str(target)}
    if mode == "program":
        run(lambda: runpy.run_path(str(REPO / "__main__.py"), run_name="__main__"), config)
    elif mode == "plain":
        from accelplane.program import main as program_main

        run(lambda: program_main(REPO), config)
    else:
        print(f"unknown mode {mode!r}: program, plain or typed", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
