"""Finding output benchmark (issue 37, item 6): ``accelplane validate --format json`` of a spec with
2,000 findings next to the text format of the same spec (the goal: within 2x).

Both run in-process (`accelplane.cli.main`, output to /dev/null), samples interleaved, each after an
untimed garbage collection. JSON also finds each finding's line in the file (`finding_output.Lines`:
one compose per file); before issue 37 it composed the whole file once per finding (2,000 findings:
over 300 s against 1.3 s for text). Run with ``python -m bench.bench_output``.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "components"))

from accelplane.cli import main as cli  # noqa: E402

from bench.markdown import print_table  # noqa: E402

HEAD = (
    "cluster: {name: c, platforms: [kubernetes]}\n"
    "nodePools:\n"
    "  - {name: gpus, nodes: 2, cpu: 32, memory: 128Gi, gpu: {vendor: nvidia, perNode: 4}, labels: {pool: gpus}}\n"
)


def findings_spec(n: int) -> str:
    """A spec with ``n`` warnings (AP2101: a queue weight Volcano's capacity plugin never reads)."""
    return HEAD + "queues:\n" + "".join(f"  - {{name: q{i}, weight: 3, deserved: {{cpu: 1}}}}\n" for i in range(n))


def _run(fmt: str, spec: Path) -> float:
    gc.collect()
    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        start = time.perf_counter()
        cli(["validate", "-q", "--format", fmt, str(spec)])
        return time.perf_counter() - start


HEADER = (
    "| Benchmark | json median / min | text median / min | Ratio (medians) | Ratio (minimums) | Goal |",
    "|---|---|---|---|---|---|",
)
"""The table's header and rule lines (this module's and `bench.run`'s table)."""


def rows(quick: bool = False) -> list[list[str]]:
    """Markdown rows: findings, text median / min, json median / min, ratio of medians, of minimums."""
    n, runs = (500, 3) if quick else (2000, 5)
    with tempfile.TemporaryDirectory(prefix="accelplane-bench-output-") as tmp:
        spec = Path(tmp) / "spec.yaml"
        spec.write_text(findings_spec(n), encoding="utf-8")
        _run("json", spec)  # warm caches (schema, imports) for both
        text: list[float] = []
        json_: list[float] = []
        for _ in range(runs):
            text.append(_run("text", spec))
            json_.append(_run("json", spec))
    med_t, med_j = statistics.median(text), statistics.median(json_)
    return [
        [
            f"`validate --format json`, {n} findings",
            f"{med_j * 1000:.0f} ms / {min(json_) * 1000:.0f} ms",
            f"{med_t * 1000:.0f} ms / {min(text) * 1000:.0f} ms (`--format text`)",
            f"{med_j / med_t:.2f}×",
            f"{min(json_) / min(text):.2f}×",
            "≤ 2×",
        ]
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    print_table(*HEADER, rows(args.quick))
    return 0


if __name__ == "__main__":
    sys.exit(main())
