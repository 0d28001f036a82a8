"""accelplane benchmarks: `make bench` (or `python -m bench.run [--quick]`). Prints Markdown tables.

Every goal is a ratio to a floor measured in the same run, each sample of ours interleaved with a
sample of its floor (so load that comes and goes hits both alike), each in-process sample after an
untimed full garbage collection (so none pays for another's garbage); the tables give the median and
the minimum of each, and the ratio of medians and of minimums (the minimum is the better estimate
on a busy machine). Wall clock, never timed tests.

1. Render = load + validate + build + serialise + write (`render_spec` + `write_tree`) of generated
   specs (bench/generate.py; a unit is a pool, 5 queues and 10 Flink clusters), next to the floor
   (issue 40): every YAML document the render writes re-serialised by libyaml's C emitter
   (`yaml.CSafeDumper`) — the Kubernetes objects and every other YAML file (Flink configuration,
   pod templates, cloud-init, …) — every JSON file by the json encoder, and every file written raw,
   on tmpfs (``/dev/shm``: no disk in either); goals ≤ 2× at 10 units (100 clusters) and ≤ 1.5×
   at 100 units (1,000 clusters); at the largest size also on the real disk, where our crash-safe
   writer fsyncs every file and directory, next to raw writes and to raw writes fsynced the same
   way. Linearity: time per unit at each size relative to the smallest (tmpfs).
   Peak RSS of a render of the largest size in its own process (VmHWM).
2. `accelplane validate` cold start (a new process of the installed console script, bytecode cached)
   next to `python -c pass`: measured, no goal (the 10× goal is retired, issue 27: ~0.1 s is far
   ahead of any peer, and the tricks that chased it cost more than they saved).
3. The Pulumi program under mocks next to its floor (issue 40): the same Kubernetes manifests
   registered through pulumi_kubernetes' public typed classes under the same mocks (ConfigMap
   payloads already serialised), goal ≤ 1.3× at 16 units (515 objects, 523 resources; 1 unit with
   ``--quick``). More rows from the same interleaved samples: the program's registration alone
   (`render_spec` excluded) next to the same floor; the program next to `render_spec` followed by
   the same typed classes (the floor does no spec work; the program must load, validate and build
   the spec before it registers anything); the program next to as many bare one-key
   ConfigMaps as it registers resources (the floor until issue 40), and next to those plus libyaml
   dumping what it serialises; the typed classes next to bare ConfigMaps (Pulumi's and
   pulumi_kubernetes' own price). Then the program as `pulumi up` runs it — a fresh interpreter
   per sample running the project's ``__main__.py`` under the same mocks — next to the same typed
   floor program run the same way (bench/pulumi_process.py): the goal's row since the program
   sets its own process's garbage collector (`accelplane.program.tune_collector`), which an
   in-process sample cannot show; with it, the program without those settings and both with the
   collector off (the work alone). ``--only pulumi`` runs just this part; ``--runs N`` sets its
   samples.
4. Validation scaling: `load_validated` on queue trees of 2,000-16,000 queues and on 50-400 units,
   with the growth exponent per doubling (bench/bench_scaling.py).
5. Finding output (bench/bench_output.py): `validate --format json` of a spec with 2,000 findings
   next to `--format text` of the same spec (goal: within 2x; it composes each file once for lines).
6. The GPU discovery script (bench/bench_discovery.py): ours vs Flink's, and ours per call vs the
   bare interpreter start plus the inventory query, both as nodes install it (entry stub +
   precompiled module) and as Kubernetes pods run it (the ConfigMap's entry stub: in the node image
   with the image's bytecode of the same script; in an image without it, a pod's first call, which
   compiles into the pod's cache, and its later calls from that cache).
6. The same script on real NVIDIA GPUs (bench/bench_discovery_gpu.py: through NVML and through
   nvidia-smi, next to their floors) where this machine has ``nvidia-smi`` and a driver; elsewhere
   skipped with the reason.

``--quick`` (well under a minute on an idle 2-core machine) runs smaller sizes and fewer samples:
enough to see a regression in any ratio.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import shutil
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

import yaml  # noqa: E402
from accelplane.pipeline import render_spec  # noqa: E402
from accelplane.render import write_tree  # noqa: E402
from accelplane.yaml_io import clear_caches  # noqa: E402

from bench.generate import write_spec  # noqa: E402
from bench.markdown import print_table  # noqa: E402

Row = list[str]


def interleaved(ours: Callable[[], Any], floor: Callable[[], Any], runs: int) -> tuple[list[float], list[float]]:
    """Wall times of ``runs`` calls of each, alternating (ours, floor, floor, ours, …) after one
    warm-up, each after an untimed full garbage collection (`interleaved_many` of the two)."""
    taken = interleaved_many({"ours": ours, "floor": floor}, runs)
    return taken["ours"], taken["floor"]


def ms(x: float) -> str:
    return f"{x * 1000:.0f} ms" if x >= 0.01 else f"{x * 1000:.1f} ms"


def ratio_row(name: str, ours: list[float], floor: list[float], floor_name: str, goal: str) -> Row:
    om, fm, omin, fmin = statistics.median(ours), statistics.median(floor), min(ours), min(floor)
    return [name, f"{ms(om)} / {ms(omin)}", f"{ms(fm)} / {ms(fmin)} ({floor_name})", f"{om / fm:.2f}×",
            f"{omin / fmin:.2f}×", goal]


Document = tuple[str, str, Any]
"""(path, how it is serialised: "yaml", "json" or "raw", the data: parsed document(s) or the text)."""


def floor_documents(bundle: Any) -> list[Document]:
    """Every file a render writes, as the render floor re-serialises it (issue 40): each Kubernetes
    object and every other YAML or JSON file (Flink configuration, pod templates, slot groups, the
    dashboard and rule files, cloud-init, …) parsed once here, outside the timing; other files
    (XML, scripts, the Dockerfile) raw."""
    docs: list[Document] = [(f"kubernetes/{o.filename}", "yaml", [o.manifest]) for o in bundle.objects]
    for f in bundle.files:
        if f.path.endswith((".yaml", ".yml")):
            docs.append((f.path, "yaml", list(yaml.load_all(f.text, Loader=yaml.CSafeLoader))))
        elif f.path.endswith(".json"):
            docs.append((f.path, "json", json.loads(f.text)))
        else:
            docs.append((f.path, "raw", f.text))
    return docs


def _libyaml_floor(docs: list[Document], out: Path, durable: bool = False) -> None:
    """What a render cannot avoid: libyaml dumping every YAML document it writes, the JSON encoder
    every JSON one, and writing every file raw; with ``durable``, also what a crash-safe writer
    cannot avoid: each file and directory fsynced (as `accelplane.render.write_tree` does, so a kill
    or power loss never leaves a half-written tree)."""
    shutil.rmtree(out, ignore_errors=True)
    made: list[Path] = []
    for rel, how, data in docs:
        if how == "yaml":
            text = yaml.dump_all(data, Dumper=yaml.CSafeDumper, sort_keys=True, default_flow_style=False,
                                 allow_unicode=True, width=4096)
        elif how == "json":
            text = json.dumps(data, indent=2, sort_keys=True) + "\n"
        else:
            text = data
        target = out / rel
        if target.parent not in made:
            target.parent.mkdir(parents=True, exist_ok=True)
            made.append(target.parent)
        with open(target, "wb") as fh:
            fh.write(text.encode())
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
    if durable:
        for d in made:
            fd = os.open(d, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)


def tmpfs_dir() -> Path | None:
    """A writable tmpfs directory (``/dev/shm``) for the disk-independent render rows, or None."""
    shm = Path("/dev/shm")
    return shm if shm.is_dir() and os.access(shm, os.W_OK) else None


def render_as_a_new_process(spec: Path, out: Path) -> None:
    """`accelplane render` in process, with what a new process has: none of the strings, keys and
    scalars of the spec rendered before (`clear_caches`; every sample renders the same spec, and a
    user's process never finds them all remembered). What a process pays once (imports, compiled
    templates and schemas) the warm-up pays."""
    clear_caches()
    write_tree(render_spec(spec).files, out)


def bench_render(units: list[int], runs: int, work: Path) -> tuple[list[Row], list[float]]:
    """Render rows: on tmpfs (the goal row: our CPU work against libyaml + raw writes, no disk in
    either) and on the real disk, where our writer's fsyncs meet two floors: raw writes, and raw
    writes fsynced like ours (the durable floor)."""
    rows: list[Row] = []
    per_unit: list[float] = []
    shm = tmpfs_dir()
    with tempfile.TemporaryDirectory(dir=shm) as shm_tmp:
        for n in units:
            spec = write_spec(n, work)
            bundle = render_spec(spec).bundle
            docs = floor_documents(bundle)
            count = len(docs)
            fast = Path(shm_tmp)
            samples = max(3, runs // (1 + n // 20))
            label = f"render, {n} unit{'s' if n > 1 else ''} ({count} files)"

            def ours_fn(spec: Path = spec, out: Path = fast / f"out-{n}") -> None:
                render_as_a_new_process(spec, out)

            def floor_fn(docs: list[Document] = docs, out: Path = fast / f"floor-{n}") -> None:
                _libyaml_floor(docs, out)

            ours, floor = interleaved(ours_fn, floor_fn, samples)
            where = "tmpfs" if shm is not None else "disk (no tmpfs)"
            goal = {10: "≤ 2×", 100: "≤ 1.5×"}.get(n, "")
            rows.append(ratio_row(f"{label}, {where}", ours, floor,
                                  "libyaml/json re-serialising every document + raw writes", goal))
            per_unit.append(min(ours) / n)
            shutil.rmtree(fast / f"out-{n}", ignore_errors=True)
            shutil.rmtree(fast / f"floor-{n}", ignore_errors=True)
            if shm is None or n != units[-1]:
                continue
            def disk_ours(spec: Path = spec, out: Path = work / f"out-{n}") -> None:
                render_as_a_new_process(spec, out)

            def disk_raw(docs: list[Document] = docs, out: Path = work / f"floor-{n}") -> None:
                _libyaml_floor(docs, out)

            def disk_durable(docs: list[Document] = docs, out: Path = work / f"durable-{n}") -> None:
                _libyaml_floor(docs, out, durable=True)

            taken = interleaved_many({"ours": disk_ours, "raw": disk_raw, "durable": disk_durable}, samples)
            rows.append(ratio_row(f"{label}, disk", taken["ours"], taken["raw"], "re-serialised + raw writes", ""))
            rows.append(ratio_row(f"{label}, disk", taken["ours"], taken["durable"],
                                  "re-serialised + raw writes, each file and directory fsynced", ""))
    return rows, per_unit


def peak_rss_mib(units: int, work: Path) -> tuple[float, float]:
    """Peak RSS (MiB) of a process that renders ``units`` units, and of one that only imports.

    Read from /proc/self/status (VmHWM, per address space): getrusage's ru_maxrss survives exec on
    Linux, so a child would report its parent's peak."""
    spec = write_spec(units, work)
    code = (
        "import sys; from accelplane.pipeline import render_spec; from accelplane.render import write_tree;"
        "sys.argv[1] != '-' and write_tree(render_spec(sys.argv[1]).files, sys.argv[2]);"
        "print(next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmHWM:')))"
    )
    env = {**os.environ, "PYTHONPATH": f"{REPO / 'components'}"}
    full = subprocess.run([sys.executable, "-c", code, str(spec), str(work / "rss")], env=env, capture_output=True,
                          text=True, check=True)
    bare = subprocess.run([sys.executable, "-c", code, "-", "-"], env=env, capture_output=True, text=True, check=True)
    return int(full.stdout) / 1024, int(bare.stdout) / 1024


def bench_cold_start(runs: int) -> list[Row]:
    spec = REPO / "stacks" / "prod-eu.yaml"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # as installed: .pyc cached
    env["PYTHONPATH"] = f"{REPO / 'components'}"

    # The installed console script, as users run it (`python -m accelplane.cli` adds runpy's ~5 ms).
    script = Path(sys.executable).parent / "accelplane"
    command = [str(script)] if script.is_file() else [sys.executable, "-m", "accelplane.cli"]

    def validate() -> None:
        subprocess.run([*command, "validate", "-q", str(spec)], cwd=REPO, env=env, check=True)

    def bare() -> None:
        subprocess.run([sys.executable, "-c", "pass"], env=env, check=True)

    ours, floor = interleaved(validate, bare, runs)
    return [ratio_row("`accelplane validate` cold start (prod-eu)", ours, floor, "`python -c pass`", "— (retired)")]


def interleaved_many(fns: dict[str, Callable[[], Any]], runs: int) -> dict[str, list[float]]:
    """Wall times of ``runs`` calls of each function after one warm-up each; the order rotates
    from run to run, so load that comes and goes hits every function alike, and a full garbage
    collection (untimed) precedes every call, so none pays for cyclic garbage another left."""
    names = list(fns)
    for fn in fns.values():
        fn()
    samples: dict[str, list[float]] = {name: [] for name in names}
    for i in range(runs):
        shift = i % len(names)
        for name in names[shift:] + names[:shift]:
            gc.collect()  # untimed: no sample pays for the garbage another one left
            start = time.perf_counter()
            fns[name]()
            samples[name].append(time.perf_counter() - start)
    return samples


def bench_pulumi(units: int, runs: int, work: Path) -> list[Row]:
    """The program under mocks and its floors, interleaved (see docs/benchmarks.md, "Reading the numbers").

    * ``program``: `accelplane.program.main` on a generated spec (load, validate, build, register);
    * ``registration``: the same program with the spec already rendered (`render_spec` excluded:
      `accelplane.program.load` returns the rendered spec), i.e. components, parents, dependencies,
      options and outputs;
    * ``spec_typed``: `render_spec` (load, validate, build) of the same spec, then ``typed``: the
      floor with the spec work the program cannot skip;
    * ``typed``: the same manifests through pulumi_kubernetes' public typed classes, in the same
      order, without components, parents, provider, dependencies or outputs (the ConfigMap payloads
      are already serialised): **the goal's floor** since issue 40 (the program registers through the
      same classes, so the difference is the component's own work: components, names, dependencies,
      outputs, per-resource manifest copies, and the call stacks Pulumi captures for resources
      registered inside a constructor);
    * ``bare_all``: as many bare ConfigMaps with one data key as the program registers resources
      (objects, components, provider): the goal's floor, "the same number of bare resources";
    * ``bare``: as many as it registers Kubernetes objects (a stricter reading: the program's
      components and provider are then work the floor does not do);
    * ``bare_yaml``: ``bare_all`` plus libyaml (`yaml.CSafeDumper`, as the render goal's floor
      dumps) dumping the data the program serialises to YAML: every object (for the ``files``
      output) and every Flink pod template (for the files and ConfigMaps that carry them). Not the
      goal's floor: it says how much of the difference is the YAML library's price for the output.
    """
    import pulumi
    import pulumi.runtime
    from accelplane import program as accelplane_program
    from accelplane.derive.flink_keys import JOBMANAGER_POD_TEMPLATE, TASKMANAGER_POD_TEMPLATE
    from accelplane.pulumi import kinds
    from accelplane.pulumi.planning import creation_order
    from pulumi_kubernetes.core.v1 import ConfigMap

    from bench import pulumi_process

    spec = write_spec(units, work)
    rendered = render_spec(spec)
    objects = len(rendered.bundle.objects)
    prepared = kinds.prepare_all(creation_order(rendered.bundle.objects))
    pod_templates = (JOBMANAGER_POD_TEMPLATE, TASKMANAGER_POD_TEMPLATE)
    serialised = [o.manifest for o in rendered.bundle.objects] + [
        yaml.safe_load(f.text) for f in rendered.bundle.files if f.path.rsplit("/", 1)[-1] in pod_templates
    ]

    registered: list[str] = []

    class Mocks(pulumi_process.Mocks):
        def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
            registered.append(args.typ)
            return super().new_resource(args)

    def run(program: Callable[[], Any], config: dict[str, str]) -> None:
        pulumi_process.run(program, config, Mocks())

    config = {"accelplane:spec": str(spec)}

    def ours() -> None:
        clear_caches()  # as a new process (`render_as_a_new_process`)
        run(lambda: accelplane_program.main(REPO), config)

    def registration() -> None:
        clear_caches()
        load = accelplane_program.load
        accelplane_program.load = lambda settings: rendered
        try:
            run(lambda: accelplane_program.main(REPO), config)
        finally:
            accelplane_program.load = load

    def typed() -> None:
        def program() -> None:
            for p in prepared:
                p.create(p.name, pulumi.ResourceOptions())

        run(program, {})

    def spec_typed() -> None:
        clear_caches()
        render_spec(spec)  # the spec work the program does and the typed floor does not
        typed()

    # Every resource the program registers: the objects, plus its components and provider.
    ours()
    resources = len(registered)
    components = sum(t.startswith("accelplane:") for t in registered)
    providers = resources - objects - components

    def bare_of(count: int) -> Callable[[], None]:
        def bare() -> None:
            def program() -> None:
                for i in range(count):
                    ConfigMap(f"cm-{i}", metadata={"name": f"cm-{i}"}, data={"k": "v"})

            run(program, {})

        return bare

    bare_all = bare_of(resources)

    def bare_yaml() -> None:
        bare_all()
        for data in serialised:
            yaml.dump(data, Dumper=yaml.CSafeDumper, sort_keys=True, default_flow_style=False, allow_unicode=True,
                      width=4096)

    t = interleaved_many({"program": ours, "registration": registration, "typed": typed, "spec_typed": spec_typed,
                          "bare": bare_of(objects), "bare_all": bare_all, "bare_yaml": bare_yaml}, runs)
    size = f"{units} unit{'s' if units > 1 else ''} ({objects} objects)"
    plural = "s" if units > 1 else ""
    return [
        ratio_row(f"Pulumi program under mocks, {units} unit{plural}: {resources} resources ({objects} objects, "
                  f"{components} components, {providers} provider), next to the same manifests through "
                  "pulumi_kubernetes' typed classes", t["program"], t["typed"],
                  f"{objects} typed resources", "≤ 1.3×"),
        ratio_row(f"… its registration alone (`render_spec` excluded), {size}", t["registration"], t["typed"],
                  f"{objects} typed resources", ""),
        ratio_row(f"… the program next to `render_spec` (load, validate, build: the spec work the typed floor "
                  f"does not do) followed by the same typed classes, {size}", t["program"], t["spec_typed"],
                  f"`render_spec` + {objects} typed resources", ""),
        ratio_row(f"… the program next to as many bare ConfigMaps as it registers resources ({resources}; the "
                  "floor until issue 40)", t["program"], t["bare_all"], f"{resources} bare ConfigMaps", ""),
        ratio_row(f"… the same, next to those {resources} bare ConfigMaps plus libyaml dumping what the program "
                  f"serialises ({len(serialised)} documents: every object and Flink pod template)",
                  t["program"], t["bare_yaml"], f"{resources} bare ConfigMaps + libyaml", ""),
        ratio_row(f"… the typed classes themselves (Pulumi's and pulumi_kubernetes' cost), {size}", t["typed"],
                  t["bare"], f"{objects} bare ConfigMaps", ""),
    ]


def write_typed_manifests(bundle: Any, path: Path) -> Path:
    """The typed floor program's input (bench/pulumi_process.py ``typed``): every object of
    ``bundle`` in the program's registration order as ``[class path below pulumi_kubernetes or
    null, name, constructor arguments]``, written to ``path`` as JSON; return ``path``."""
    from accelplane.pulumi import kinds
    from accelplane.pulumi.planning import creation_order

    path.write_text(json.dumps([
        [kinds.mapping_for(p.obj).class_path, p.name, p.kwargs]
        for p in kinds.prepare_all(creation_order(bundle.objects))
    ]), encoding="utf-8")
    return path


def bench_pulumi_process(units: int, runs: int, work: Path) -> list[Row]:
    """The program as `pulumi up` runs it, next to its floor run the same way (issue 40): each
    sample a fresh interpreter (bench/pulumi_process.py) under the same mocks, wall time of the
    whole process — interpreter start, imports, the program, exit.

    * ``program``: the project's ``__main__.py`` (`accelplane.program.tune_collector`, then `main`):
      **the goal's row**;
    * ``plain``: `accelplane.program.main` without ``__main__.py``'s collector settings;
    * ``typed``: the floor — the same manifests through pulumi_kubernetes' typed classes in a
      program that imports only the API groups it uses (ConfigMap payloads already serialised);
    * ``program_nogc`` / ``typed_nogc``: both with the cyclic collector off: the work alone, what
      neither process's collector settings change.
    """
    spec = write_spec(units, work)
    bundle = render_spec(spec).bundle
    manifests = write_typed_manifests(bundle, work / f"typed-{units}.json")
    script = str(REPO / "bench" / "pulumi_process.py")

    def process(*args: str) -> Callable[[], None]:
        def sample() -> None:
            # stderr kept for a failure only: under the mocks a fresh interpreter now and then reports
            # an already-closed event loop of the SDK's test wrapper at exit ("Exception ignored in
            # BaseEventLoop.__del__"), which says nothing about the sample
            done = subprocess.run([sys.executable, script, *args], cwd=REPO, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True)
            if done.returncode != 0:
                raise RuntimeError(f"bench/pulumi_process.py {' '.join(args)} failed:\n{done.stderr}")

        return sample

    t = interleaved_many({
        "program": process("program", str(spec)),
        "plain": process("plain", str(spec)),
        "typed": process("typed", str(manifests)),
        "program_nogc": process("program", str(spec), "--no-gc"),
        "typed_nogc": process("typed", str(manifests), "--no-gc"),
    }, runs)
    objects = len(bundle.objects)
    size = f"{units} unit{'s' if units > 1 else ''} ({objects} objects)"
    floor = f"{objects} typed resources, a fresh interpreter"
    return [
        ratio_row(f"Pulumi program as `pulumi up` runs it (a fresh interpreter: imports, `__main__.py`, exit), "
                  f"{size}, next to the same manifests through the typed classes run the same way",
                  t["program"], t["typed"], floor, "≤ 1.3×"),
        ratio_row(f"… `accelplane.program.main` without `__main__.py`'s collector settings, {size}", t["plain"],
                  t["typed"], floor, ""),
        ratio_row(f"… both with the cyclic garbage collector off (the work alone), {size}", t["program_nogc"],
                  t["typed_nogc"], f"{floor}, collector off", ""),
    ]


def bench_discovery(quick: bool) -> str:
    script = REPO / "bench" / "bench_discovery.py"
    proc = subprocess.run([sys.executable, str(script), *(["--quick"] if quick else [])], cwd=REPO,
                          capture_output=True, text=True)
    return proc.stdout if proc.returncode == 0 else f"discovery benchmark failed:\n{proc.stderr}"


def bench_discovery_gpu(quick: bool, path: str | None = None) -> str:
    """The GPU discovery script on real NVIDIA GPUs (bench/bench_discovery_gpu.py, 30 samples, 10
    with ``--quick``) with this interpreter's nvidia-ml-py; or, where this machine has no
    ``nvidia-smi`` on ``path`` (default: PATH) or the device check cannot run, one line saying
    that it was skipped and why (the figures from a real GPU are in docs/benchmarks.md)."""
    title = "GPU discovery on real GPUs (bench/bench_discovery_gpu.py)"
    if shutil.which("nvidia-smi", path=path) is None:
        return (f"{title}: skipped, no nvidia-smi on PATH: this machine has no NVIDIA GPU "
                "(docs/benchmarks.md has the figures of a real H100)")
    script = REPO / "bench" / "bench_discovery_gpu.py"
    env = {**os.environ, **({"PATH": path} if path is not None else {})}
    proc = subprocess.run([sys.executable, str(script), "--python", sys.executable, "--runs", "10" if quick else "30"],
                          cwd=REPO, capture_output=True, text=True, env=env, check=False)
    if proc.returncode == 2:
        reason = proc.stderr.strip().removeprefix("bench_discovery_gpu: cannot run here: ").splitlines()[0]
        return f"{title}: skipped, {reason.rstrip(':')}"
    return proc.stdout if proc.returncode == 0 else f"{title} failed:\n{proc.stderr}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="smaller sizes, fewer samples (regression check)")
    parser.add_argument("--no-discovery", action="store_true", help="skip the discovery benchmark")
    parser.add_argument("--only", choices=["pulumi", "render"],
                        help="run only this part (its table rows and the load average)")
    parser.add_argument("--runs", type=int,
                        help="samples per Pulumi size (default: 5 with --quick; else 15 at 1 unit, 5 at 16 units)")
    args = parser.parse_args(argv)
    quick = args.quick
    runs = 5 if quick else 15
    units = [1, 10, 20] if quick else [1, 10, 100]
    pulumi_runs = args.runs or max(3, runs // 3)
    # a 1-unit sample takes a tenth of a second: more of them, for a ratio that noise moves less
    small_pulumi_runs = args.runs or runs
    load_before = os.getloadavg()
    rows: list[Row] = []
    per_unit: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if args.only in (None, "render"):
            rows, per_unit = bench_render(units, runs, work)
            rss, rss_bare = peak_rss_mib(units[-1], work)
        if args.only is None:
            rows += bench_cold_start(runs * 2)
        if args.only in (None, "pulumi"):
            for n in [1] if quick else [1, 16]:
                rows += bench_pulumi(n, small_pulumi_runs if n == 1 else pulumi_runs, work)
            rows += bench_pulumi_process(1 if quick else 16, pulumi_runs, work)
    load_after = os.getloadavg()
    print(f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; load average "
          f"{load_before[0]:.1f} → {load_after[0]:.1f}; {'--quick, ' if quick else ''}each sample of ours interleaved "
          f"with one of its floor\n")
    print_table(
        "| Benchmark | accelplane median / min | Floor median / min | Ratio (medians) | Ratio (minimums) | Goal |",
        "|---|---|---|---|---|---|",
        rows,
    )
    if args.only == "pulumi":
        return 0
    lin = " · ".join(f"{n}: {t / per_unit[0]:.2f}×" for n, t in zip(units, per_unit, strict=True))
    print(f"\nRender time per unit relative to 1 unit (minimums, tmpfs; linear = flat): {lin}. "
          f"Peak RSS of a {units[-1]}-unit render: {rss:.1f} MiB (a process that only imports: {rss_bare:.1f} MiB).\n")
    if args.only == "render":
        return 0
    from bench import bench_scaling

    print("Validation scaling (bench/bench_scaling.py; growth exponent 1 = linear, 2 = quadratic):\n")
    print_table(
        "| Case | Spec | Validate | Checks only | Growth exponent (validate / checks) |",
        "|---|---|---|---|---|",
        bench_scaling.rows(quick),
    )
    from bench import bench_output

    print("\nFinding output (bench/bench_output.py; issue 37):\n")
    print_table(*bench_output.HEADER, bench_output.rows(quick))
    if not args.no_discovery:
        print("\n" + bench_discovery(quick))
        print("\n" + bench_discovery_gpu(quick))
    return 0


if __name__ == "__main__":
    sys.exit(main())
