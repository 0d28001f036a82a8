"""The program as its own process (issue 40): the API groups it imports and the process runner
`make bench` compares with the typed floor (bench/pulumi_process.py).

Both run in fresh interpreters: this test process has imported every group already."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support.paths import REPO_ROOT

GROUPS = (
    "pulumi_kubernetes.core.v1",
    "pulumi_kubernetes.apps.v1",
    "pulumi_kubernetes.resource.v1beta1",
    "pulumi_kubernetes.resource.v1beta2",
    "pulumi_kubernetes.resource.v1",
)


def _imported_after(code: str) -> set[str]:
    probe = f"import sys\n{code}\nprint(__import__('json').dumps(sorted(m for m in {GROUPS!r} if m in sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], cwd=REPO_ROOT, capture_output=True, text=True, check=True)
    return set(json.loads(done.stdout))


def test_importing_the_component_imports_no_api_group() -> None:
    """`import accelplane.program` (and with it the component and `kinds`) loads no pulumi_kubernetes
    API group: each is imported when a stack first registers one of its kinds."""
    assert _imported_after("import accelplane.program") == set()


def test_a_kind_imports_only_its_own_group() -> None:
    """Resolving a ConfigMap imports the core group and none of ``resource.k8s.io`` (whose package
    imports all its versions at once: 0.14 s a program without DRA objects no longer pays)."""
    imported = _imported_after(
        "from accelplane.pulumi.kinds import KINDS\n"
        "cls = KINDS[('v1', 'ConfigMap')].resource_class\n"
        "assert cls.__name__ == 'ConfigMap' and cls.__module__.startswith('pulumi_kubernetes.core.v1.')"
    )
    assert imported == {"pulumi_kubernetes.core.v1"}


def test_bench_process_runner_registers_the_floor_and_the_program(tmp_path: Path) -> None:
    """bench/pulumi_process.py runs the project's ``__main__.py`` on a generated spec and the typed
    floor on its manifests, each in a fresh interpreter, to completion (`make bench`'s process rows
    must not rot)."""
    sys.path.insert(0, str(REPO_ROOT))
    try:
        from accelplane.pipeline import render_spec

        from bench.generate import write_spec
        from bench.run import write_typed_manifests
    finally:
        sys.path.remove(str(REPO_ROOT))
    spec = write_spec(1, tmp_path)
    manifests = write_typed_manifests(render_spec(spec).bundle, tmp_path / "typed.json")
    script = str(REPO_ROOT / "bench" / "pulumi_process.py")
    for args in (["program", str(spec)], ["plain", str(spec), "--no-gc"], ["typed", str(manifests)]):
        done = subprocess.run([sys.executable, script, *args], cwd=REPO_ROOT, capture_output=True, text=True)
        assert done.returncode == 0, (args, done.stderr[-2000:])
