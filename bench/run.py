"""accelplane benchmarks: `make bench` (or `python -m bench.run [--quick]`). Prints a Markdown table.

Measured (medians of several runs, wall clock, one process):
1. render = validate + build + serialise, for generated specs of 1, 10 and 100 units (a unit is a
   pool, 5 queues and 10 Flink clusters; the top is 100 pools / 500 queues / 1,000 Flink clusters),
   next to the floor: serialising the same, already built objects and files. Ratio = render / floor.
2. `accelplane validate` cold start (a new Python process) next to `python -c pass`.
3. The Pulumi program under mocks next to registering the same number of bare ConfigMaps.
4. The GPU discovery script: per-allocation latency and 64-way contention, ours vs Flink's
   (bench/bench_discovery.py, when present).
5. Validation scaling: `load_validated` on queue trees of 2,000-16,000 queues and on 50-400 units,
   with the growth exponent per doubling (bench/bench_scaling.py; issue 15 §10).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "components"))

from accelplane.pipeline import render_spec  # noqa: E402
from accelplane.render import bundle_files  # noqa: E402

from bench.generate import write_spec  # noqa: E402


def median_time(fn: Callable[[], Any], runs: int) -> float:
    """Median wall time of ``fn`` over ``runs`` calls (one warm-up call first)."""
    fn()
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def bench_render(units: list[int], runs: int, workdir: Path) -> list[list[str]]:
    rows = []
    for n in units:
        spec = write_spec(n, workdir)
        bundle = render_spec(spec).bundle
        render = median_time(lambda spec=spec: render_spec(spec).files, runs)  # type: ignore[misc]
        floor = median_time(lambda bundle=bundle: bundle_files(bundle), runs)  # type: ignore[misc]
        files = len(bundle_files(bundle))
        rows.append([f"render, {n} unit{'s' if n > 1 else ''} ({files} files)", f"{render * 1000:.0f} ms", f"{floor * 1000:.0f} ms", f"{render / floor:.1f}×"])
    return rows


def bench_cold_start(runs: int) -> list[list[str]]:
    spec = REPO / "stacks" / "prod-eu.yaml"

    def validate() -> None:
        subprocess.run([sys.executable, "-m", "accelplane.cli", "validate", "-q", str(spec)], cwd=REPO, check=True)

    def bare() -> None:
        subprocess.run([sys.executable, "-c", "pass"], check=True)

    t, floor = median_time(validate, runs), median_time(bare, runs)
    return [["`accelplane validate` cold start (prod-eu)", f"{t * 1000:.0f} ms", f"{floor * 1000:.0f} ms (`python -c pass`)", f"{t / floor:.1f}×"]]


def bench_pulumi(units: int, runs: int, workdir: Path) -> list[list[str]]:
    import pulumi
    import pulumi.runtime
    from accelplane import program as accelplane_program
    from pulumi.runtime import settings as pulumi_settings
    from pulumi_kubernetes.core.v1 import ConfigMap

    spec = write_spec(units, workdir)
    objects = len(render_spec(spec).bundle.objects)

    class Mocks(pulumi.runtime.Mocks):
        def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
            return f"{args.name}-id", dict(args.inputs)

        def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], None]:
            return {}, None

    def run(program: Callable[[], None], config: dict[str, str]) -> None:
        pulumi_settings.reset_options()
        pulumi.runtime.set_mocks(Mocks(), project="accelplane", stack="bench", preview=False)
        pulumi.runtime.set_all_config(config)

        @pulumi.runtime.test
        def _() -> None:
            program()

        _()

    def ours() -> None:
        run(lambda: accelplane_program.main(REPO), {"accelplane:spec": str(spec)})

    def bare() -> None:
        def program() -> None:
            for i in range(objects):
                ConfigMap(f"cm-{i}", metadata={"name": f"cm-{i}"}, data={"k": "v"})

        run(program, {})

    t, floor = median_time(ours, runs), median_time(bare, runs)
    return [[f"Pulumi program under mocks, {units} units ({objects} objects)", f"{t * 1000:.0f} ms", f"{floor * 1000:.0f} ms (bare ConfigMaps)", f"{t / floor:.1f}×"]]


def bench_discovery(quick: bool) -> str:
    script = REPO / "bench" / "bench_discovery.py"
    if not script.is_file():
        return ""
    proc = subprocess.run([sys.executable, str(script), *(["--quick"] if quick else [])], cwd=REPO, capture_output=True, text=True)
    return proc.stdout if proc.returncode == 0 else f"discovery benchmark failed:\n{proc.stderr}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer runs and sizes (smoke test)")
    args = parser.parse_args(argv)
    runs = 3 if args.quick else 7
    units = [1, 10] if args.quick else [1, 10, 100]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        rows = bench_render(units, runs, work)
        rows += bench_cold_start(runs)
        rows += bench_pulumi(1 if args.quick else 10, max(3, runs // 2), work)
    import platform

    print(f"Machine: {platform.machine()}, {platform.processor() or 'cpu'}, Python {platform.python_version()}; medians of {runs} runs\n")
    print("| Benchmark | accelplane | Floor | Ratio |")
    print("|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    from bench import bench_scaling

    print("\nValidation scaling (bench/bench_scaling.py; growth exponent 1 = linear, 2 = quadratic):\n")
    print("| Case | Spec | Validate | Checks only | Growth exponent (validate / checks) |")
    print("|---|---|---|---|---|")
    for row in bench_scaling.rows(args.quick):
        print("| " + " | ".join(row) + " |")
    disc = bench_discovery(args.quick)
    if disc:
        print("\n" + disc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
