"""Random YuniKorn queue trees, the shapes of issue #43, and YuniKorn's recorded verdicts on them.

A tree is a spec's ``queues`` list on a Kubernetes cluster with ``scheduler: yunikorn``; accelplane
renders it into ``queues.yaml`` and YuniKorn's validator (apache/yunikorn-core
``configs.ParseAndValidateConfig``) accepts or rejects that document. The verdicts were recorded
by running the validator itself (built in a scratch directory, never committed: docs/yunikorn.md,
"Re-running the oracle") on the trees in `tests/yunikorn/data/oracle_trees.json`; CI compares our
checks and our reading of the validator with them, without Go.

Command line (``make fuzz`` runs ``generate``)::

    python -m tests.support.yunikorn_trees generate --count 2000 --seed 7 --out build/yunikorn-oracle/trees.jsonl
    <oracle> -jsonl < build/yunikorn-oracle/trees.jsonl > build/yunikorn-oracle/verdicts.jsonl
    python -m tests.support.yunikorn_trees record build/yunikorn-oracle/trees.jsonl build/yunikorn-oracle/verdicts.jsonl

``generate`` writes one JSON object per line, ``{"id", "queues", "yaml"}``; the oracle answers
``{"id", "ok", "error"}`` per line; ``record`` adds the trees with their verdicts to the data file
(trees already there are kept once).
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import random
import sys
from pathlib import Path
from typing import Any

from accelplane.builders.yunikorn import queues_yaml
from accelplane.checks import run_checks
from accelplane.model import Spec
from accelplane.model_convert import build_model
from accelplane.schema import validate_document

DATA = Path(__file__).resolve().parents[1] / "yunikorn" / "data" / "oracle_trees.json"
YUNIKORN_CORE = "apache/yunikorn-core@be3bb487298956dd70906fca15e577bbc12d23cb"

NAMES = ("a", "b", "c", "d", "e")
RESOURCES = ("cpu", "memory", "nvidia.com/gpu", "amd.com/gpu", "pods")


def spec_document(queues: list[dict[str, Any]]) -> dict[str, Any]:
    """The smallest spec that carries ``queues`` to YuniKorn."""
    return {"cluster": {"name": "yk", "platforms": ["kubernetes"]}, "scheduler": "yunikorn", "queues": queues}


def model(queues: list[dict[str, Any]]) -> Spec:
    """The typed model of the tree (a tree the schema rejects is a generator bug)."""
    doc = spec_document(copy.deepcopy(queues))  # the schema fills defaults in place
    assert validate_document(doc) == [], doc
    spec, problems = build_model(doc)
    assert spec is not None, problems
    return spec


def accelplane_errors(spec: Spec) -> list[str]:
    """``CODE path: message`` of every error our checks find (warnings left out)."""
    return [f"{p.finding.code if p.finding else '-'} {'.'.join(map(str, p.path))}: {p.message}" for p in run_checks(spec) if not p.is_warning]


def rendered(queues: list[dict[str, Any]]) -> str:
    """The ``queues.yaml`` accelplane renders for the tree."""
    return queues_yaml(model(queues))


def digest(text: str) -> str:
    """sha256 of a rendered ``queues.yaml``: a recorded verdict holds only for the document it was given."""
    return hashlib.sha256(text.encode()).hexdigest()


def _value(rng: random.Random, name: str) -> Any:
    """A value of ``name``: zero often (YuniKorn's ``IsZero`` boundary), else a small one."""
    n = 0 if rng.random() < 0.25 else rng.randint(1, 12)
    if name == "memory":
        return f"{n}Gi"
    if name == "cpu" and n and rng.random() < 0.2:
        return f"{n * 250}m"
    return n


def _resources(rng: random.Random, gpu: str) -> dict[str, Any] | None:
    """Absent, empty-ish (all zeros), partial or full: GPU only, cpu/memory only, or a mix."""
    shape = rng.choice(("absent", "absent", "gpu", "cpu-memory", "mix", "full", "zeros"))
    if shape == "absent":
        return None
    if shape == "gpu":
        names = [gpu]
    elif shape == "cpu-memory":
        names = rng.sample(["cpu", "memory"], rng.randint(1, 2))
    elif shape == "mix":
        names = rng.sample(["cpu", "memory", gpu, "pods"], rng.randint(1, 3))
    elif shape == "zeros":
        names = rng.sample(["cpu", "memory", gpu], rng.randint(1, 3))
        return {n: ("0Gi" if n == "memory" else 0) for n in sorted(names)}
    else:
        names = ["cpu", "memory", gpu, "pods"]
    return {n: _value(rng, n) for n in sorted(names)}


def random_queues(rng: random.Random) -> list[dict[str, Any]]:
    """A forest of 1–5 queues (depth up to 5), each with absent, zero, partial or full
    ``capability`` and guaranteed (``deserved``, or ``guarantee`` alone: never both, as YuniKorn
    reads only one), over cpu, memory, pods and one GPU resource."""
    gpu = "amd.com/gpu" if rng.random() < 0.15 else "nvidia.com/gpu"
    count = rng.randint(1, 5)
    queues: list[dict[str, Any]] = []
    for i, name in enumerate(NAMES[:count]):
        q: dict[str, Any] = {"name": name}
        if i and rng.random() < 0.75:
            # favour chains, so trees get deep
            q["parent"] = NAMES[i - 1] if rng.random() < 0.6 else rng.choice(NAMES[:i])
        cap = _resources(rng, gpu)
        if cap is not None:
            q["capability"] = cap
        g = _resources(rng, gpu)
        if g is not None:
            q["deserved" if rng.random() < 0.8 else "guarantee"] = g
        queues.append(q)
    return queues


def _q(name: str, parent: str | None = None, **fields: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, **({"parent": parent} if parent else {}), **fields}


GPU = "nvidia.com/gpu"
SHAPES: dict[str, list[dict[str, Any]]] = {
    # item 1: a middle parent whose guaranteed is all zeros passes its children's sum up
    # (configvalidator.go:149-152), so the grandparent's guaranteed must hold it
    "zero-deserved-middle-parent": [
        _q("a", deserved={GPU: 1}), _q("b", "a", deserved={"cpu": 0}), _q("c", "b", deserved={GPU: 2}),
    ],
    "zero-deserved-middle-parent-fits": [
        _q("a", deserved={GPU: 2}), _q("b", "a", deserved={"cpu": 0}), _q("c", "b", deserved={GPU: 2}),
    ],
    "zero-deserved-middle-parent-all-keys": [
        _q("a", deserved={GPU: 4, "cpu": 8}), _q("b", "a", deserved={GPU: 0, "cpu": 0}),
        _q("c", "b", deserved={GPU: 1}),
    ],
    "zero-guarantee-middle-parent": [
        _q("a", guarantee={"cpu": 4}), _q("b", "a", guarantee={"memory": "0Gi"}), _q("c", "b", guarantee={"cpu": 6}),
    ],
    "zero-deserved-middle-parent-under-max": [
        _q("a", capability={GPU: 2}), _q("b", "a", deserved={"cpu": 0}),
        _q("c", "b", deserved={GPU: 2}), _q("d", "b", deserved={GPU: 1}),
    ],
    # item 2: a resource absent from max is unlimited (resources.go FitInMaxUndef)
    "gpu-only-capability": [_q("a", capability={GPU: 8}), _q("b", "a", capability={GPU: 4}, deserved={"cpu": 64})],
    "cpu-only-capability-gpu-deserved": [_q("a", capability={"cpu": 16}, deserved={GPU: 8})],
    # item 6: parent's and grandparent's caps equal, the child above both
    "equal-ancestor-caps-child-above": [
        _q("a", capability={GPU: 6}), _q("b", "a", capability={GPU: 6}), _q("c", "b", capability={GPU: 8}),
    ],
    "grandparent-cap-below-child": [
        _q("a", capability={GPU: 6}), _q("b", "a", capability={"cpu": 8}), _q("c", "b", capability={GPU: 8}),
    ],
    # item 3's queue path (a gang under a parent capped at 6): the config itself is valid
    "gang-path-parent-capped": [_q("a", capability={GPU: 6}), _q("b", "a"), _q("c", "b")],
    "children-guaranteed-over-parent-max": [
        _q("a", capability={GPU: 4}), _q("b", "a", deserved={GPU: 3}), _q("c", "a", deserved={GPU: 2}),
    ],
    "children-guaranteed-over-grandparent-max": [
        _q("a", capability={GPU: 4}), _q("b", "a"), _q("c", "b", deserved={GPU: 3}), _q("d", "b", deserved={GPU: 2}),
    ],
    "depth-five-chain": [
        _q("a", deserved={"cpu": 10}), _q("b", "a", deserved={"cpu": 0}), _q("c", "b"),
        _q("d", "c", deserved={"cpu": 0}), _q("e", "d", deserved={"cpu": 11}),
    ],
    "milli-cpu": [_q("a", capability={"cpu": "1500m"}), _q("b", "a", deserved={"cpu": "1500m"})],
}


def cases(count: int, seed: int) -> list[dict[str, Any]]:
    """The issue's shapes, then ``count`` random trees (ids ``shape:<name>`` and ``random:<seed>:<i>``)."""
    out = [{"id": f"shape:{name}", "queues": queues} for name, queues in SHAPES.items()]
    rng = random.Random(seed)
    out += [{"id": f"random:{seed}:{i}", "queues": random_queues(rng)} for i in range(count)]
    return out


def load() -> dict[str, Any]:
    """The recorded data: ``{"oracle", "cases": [{"id", "queues", "yaml_sha256", "accepted", "error"}]}`` (the
    digest of the ``queues.yaml`` the oracle judged; the error is YuniKorn's message, empty when accepted)."""
    data: dict[str, Any] = json.loads(DATA.read_text())
    return data


def _dump(data: dict[str, Any]) -> str:
    """One case per line (reviewable diffs), keys sorted: the same data writes the same bytes."""
    head = {k: v for k, v in data.items() if k != "cases"}
    lines = [json.dumps(c, sort_keys=True, ensure_ascii=False) for c in data["cases"]]
    body = ",\n".join(f"  {line}" for line in lines)
    return json.dumps(head, sort_keys=True, indent=1)[:-2] + ',\n "cases": [\n' + body + "\n ]\n}\n"


def _generate(args: argparse.Namespace) -> None:
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w") as fh:
        for case in cases(args.count, args.seed):
            fh.write(json.dumps({**case, "yaml": rendered(case["queues"])}, sort_keys=True) + "\n")


def _record(args: argparse.Namespace) -> None:
    trees = [json.loads(line) for line in Path(args.trees).read_text().splitlines() if line]
    verdicts = {v["id"]: v for v in (json.loads(line) for line in Path(args.verdicts).read_text().splitlines() if line)}
    data = load() if DATA.exists() else {"oracle": YUNIKORN_CORE, "cases": []}
    seen = {c["id"] for c in data["cases"]}
    for tree in trees:
        verdict = verdicts[tree["id"]]
        if tree["id"] not in seen:
            data["cases"].append(
                {"id": tree["id"], "queues": tree["queues"], "yaml_sha256": digest(tree["yaml"]),
                 "accepted": verdict["ok"], "error": verdict["error"]}
            )
            seen.add(tree["id"])
    DATA.write_text(_dump(data))
    print(f"{DATA}: {len(data['cases'])} trees", file=sys.stderr)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.support.yunikorn_trees")
    sub = parser.add_subparsers(dest="command", required=True)
    gen = sub.add_parser("generate", help="random trees (and the issue's shapes) with their rendered queues.yaml")
    gen.add_argument("--count", type=int, default=2000)
    gen.add_argument("--seed", type=int, default=1)
    gen.add_argument("--out", default="build/yunikorn-oracle/trees.jsonl")
    rec = sub.add_parser("record", help="add the oracle's verdicts on generated trees to the data file")
    rec.add_argument("trees")
    rec.add_argument("verdicts")
    args = parser.parse_args(argv)
    {"generate": _generate, "record": _record}[args.command](args)


if __name__ == "__main__":
    main()
