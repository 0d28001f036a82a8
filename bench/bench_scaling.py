"""Validation scaling benchmark (issue 15 §10): `load_validated` on specs whose size doubles.

Two families: ``queues`` (only a queue tree: N queues, a parent per five, each with capability,
deserved and guarantee) and ``units`` (bench.generate: pools, queues and Flink clusters together).
For each doubling the growth exponent is log2(t(2n) / t(n)): 1 is linear, 2 quadratic. Validation
must stay linear or n·log n (exponent well below 1.5); run with ``python -m bench.bench_scaling``.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "components"))

from accelplane.checks import run_checks  # noqa: E402
from accelplane.pipeline import load_validated  # noqa: E402

from bench.generate import make_spec  # noqa: E402
from bench.markdown import print_table  # noqa: E402

FANOUT = 5


def queue_spec(n: int) -> dict[str, Any]:
    """A Kubernetes spec with ``n`` queues: every fifth is a parent of the next four."""
    queues = []
    for i in range(n):
        q: dict[str, Any] = {
            "name": f"q{i:06d}",
            "capability": {"cpu": 1000, "memory": "1Ti", "pods": 100},
            "deserved": {"cpu": 10, "memory": "10Gi"},
            "guarantee": {"cpu": 1},
        }
        if i % FANOUT:
            q["parent"] = f"q{i - i % FANOUT:06d}"
            q["capability"] = {"cpu": 100, "memory": "100Gi", "pods": 10}
            q["deserved"] = {"cpu": 2, "memory": "2Gi"}
        queues.append(q)
    return {"cluster": {"name": f"queues-{n}", "platforms": ["kubernetes"]}, "queues": queues}


def time_validate(doc: dict[str, Any], workdir: Path, runs: int) -> tuple[float, float, int]:
    """Best-of-``runs`` seconds for `load_validated` of ``doc`` (YAML, schema, model, checks), the
    same for the semantic checks alone (`run_checks` on the built model), and the file's size."""
    path = workdir / "spec.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    best = checks = math.inf
    for _ in range(runs):
        start = time.perf_counter()
        spec = load_validated(path).model
        best = min(best, time.perf_counter() - start)
        start = time.perf_counter()
        run_checks(spec)
        checks = min(checks, time.perf_counter() - start)
    return best, checks, path.stat().st_size


def rows(quick: bool = False) -> list[list[str]]:
    """Markdown rows: case, spec size, validate time, checks time, growth exponents (validate,
    checks) against the previous size."""
    runs = 1 if quick else 3
    families = [
        ("queues", queue_spec, [1000, 2000, 4000] if quick else [2000, 4000, 8000, 16000]),
        ("units", make_spec, [25, 50] if quick else [50, 100, 200, 400]),
    ]
    out = []
    with tempfile.TemporaryDirectory(prefix="accelplane-bench-") as tmp:
        for family, make, sizes in families:
            previous: tuple[float, float] | None = None
            for n in sizes:
                seconds, checks, size = time_validate(make(n), Path(tmp), runs)
                growth = (
                    ""
                    if previous is None
                    else f"{math.log2(seconds / previous[0]):.2f} / {math.log2(checks / previous[1]):.2f}"
                )
                out.append(
                    [f"{n} {family}", f"{size / 1e6:.1f} MB", f"{seconds:.2f} s", f"{checks:.3f} s", growth]
                )
                previous = (seconds, checks)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    print_table(
        "| case | spec | validate | checks only | growth exponent per doubling (validate / checks) |",
        "| --- | ---: | ---: | ---: | ---: |",
        rows(args.quick),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
