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


def main() -> None:
    print("| Stack | Outputs before (KiB) | After (KiB) | After / before |")
    print("|---|---|---|---|")
    for stack in STACKS:
        before, after = sizes(stack)
        print(f"| {stack} | {before / 1024:.1f} | {after / 1024:.1f} | {after / before:.2f} |")


if __name__ == "__main__":
    main()
