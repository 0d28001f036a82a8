"""Size of the Pulumi program's stack outputs per example stack, before and after issue 40's lean
state (`python -m bench.output_size`; a Markdown table for docs/benchmarks.md).

*Before*: ``fileContents`` carried the text of every file outside ``kubernetes/``. *After*: only the
files no Kubernetes API receives (`accelplane.pulumi.platform.file_texts`). The other outputs
(``files`` digests, names, ``specFiles``) are the same both ways and counted in both. Sizes are of
the outputs serialised as compact JSON (what the state stores, give or take its envelope).
"""

from __future__ import annotations

import json
from pathlib import Path

from accelplane.pipeline import render_spec
from accelplane.render import bundle_files

from bench.markdown import print_table

REPO = Path(__file__).resolve().parents[1]
STACKS = sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in (REPO / "stacks").glob("Pulumi.*.yaml"))


def sizes(stack: str) -> tuple[int, int]:
    """(bytes before, bytes after) of the stack's outputs as compact JSON."""
    from accelplane.pulumi.platform import file_entries, file_texts

    rendered = render_spec(REPO / "stacks" / f"{stack}.yaml")
    bundle = rendered.bundle
    common = {"files": file_entries(bundle, bundle_files(bundle)),
              "objects": sorted(o.key for o in bundle.objects)}
    before = {**common, "fileContents": {f.path: f.text for f in bundle.files}}
    after = {**common, "fileContents": file_texts(bundle)}
    return (len(json.dumps(before, separators=(",", ":"))), len(json.dumps(after, separators=(",", ":"))))


def _row(stack: str) -> list[str]:
    before, after = sizes(stack)
    return [stack, f"{before / 1024:.1f}", f"{after / 1024:.1f}", f"{after / before:.2f}"]


def main() -> None:
    print_table(
        "| Stack | Outputs before (KiB) | After (KiB) | After / before |",
        "|---|---|---|---|",
        (_row(stack) for stack in STACKS),
    )


if __name__ == "__main__":
    main()
