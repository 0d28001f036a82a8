"""Benchmark: accelplane's GPU discovery script vs. Flink's shipped nvidia-gpu-discovery.sh.

    python bench/bench_discovery.py [--quick] [--runs N] [--repeats N] [--gpus N]

Runs both scripts the way Flink's GPUDriver does (a fresh process per TaskManager, owner = the
calling process) against the fake nvidia-smi of the tests on a fake node with --gpus GPUs. Ours
runs as nodes have it, **installed** (YARN/standalone hosts, the node image: the entry stub
`accelplane.discovery_install.entry_stub` running `python3 -I -S`, the module byte-compiled
beforehand by the same interpreter with `COMPILE_PROGRAM`) and as Kubernetes TaskManager pods
have it, **pod** (the ConfigMap's entry stub `accelplane.discovery_install.pod_entry_stub`, `sh`
running `python3 -I -S` on the ConfigMap's module, mounted over the node image's copy). Pods run
discovery twice, the GPU preflight init container's call first, then Flink's; the per-call table
measures each pod path they take:

* **pod, node image**: the image built from `node-image/` with the script the ConfigMap carries;
  its build-time checked-hash ``.pyc`` serves every call, a pod's first call too: the pod's
  bytecode cache stays empty through the whole run (checked: the benchmark fails otherwise);
* **pod, image without our bytecode** (an image that is not accelplane's, or built with another
  script): the pod's first call (the preflight's, into an empty cache: it compiles the module and
  writes the cache) and its later calls (Flink's, from the cache the first call filled).

Everything lives in a private temporary directory, `python3` on PATH being the same interpreter.

* per-allocation latency (median, p95 over --runs runs, sequential): non-coordination mode;
  coordination mode on an empty file; coordination mode with all GPUs but one held by a live
  owner (the file is reset, untimed, before every run);
* per call against the floor (the same interpreter's bare start, `python3 -I -S -c pass`, plus
  the inventory query our script makes): installed, pod and floor samples interleaved, medians
  and minimums;
* 64-way concurrency: --gpus TaskManagers (each the child of its own long-lived owner, released
  together through a flock barrier) allocate 1 GPU each on an empty file; time until the last
  one finished (median and max over --repeats), runs slower than GPUDriver's 10 s timeout, and
  whether every GPU went to exactly one owner.

Prints a Markdown table. Wall-clock times on a shared machine: the load average is printed too.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))
sys.path.insert(0, str(REPO_ROOT / "components"))

from accelplane.discovery_install import COMPILE_PROGRAM, MODULE_NAME, pod_entry_stub  # noqa: E402

from bench.bench_discovery_gpu import install_like_a_node  # noqa: E402
from tests.support.discovery_runs import (  # noqa: E402
    SCRIPT,
    Processes,
    Rec,
    boot_id,
    fake_env,
    flink_discovery_script,
    gpu_uuid,
    pid_namespace,
    proc_starttime,
    render,
)
from tests.support.flink.home import FlinkHomeNotFound  # noqa: E402

GPUDRIVER_TIMEOUT_S = 10.0


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def timed_runs(cmd: Sequence[str], env: dict[str, str], runs: int, reset: Callable[[], None] | None,
               expect: str) -> list[float]:
    times = []
    for _ in range(runs):
        if reset is not None:
            reset()
        t0 = time.perf_counter()
        r = subprocess.run(list(cmd), env=env, capture_output=True, text=True, check=False)
        times.append(time.perf_counter() - t0)
        if r.stdout != expect:
            raise SystemExit(f"{cmd[:3]}: expected {expect!r}, got rc={r.returncode} {r.stdout!r} {r.stderr!r}")
    return times


def install_like_a_pod(root: Path, python: str, name: str, *, image_bytecode: bool) -> tuple[Path, Path]:
    """Lay the script out the way a Kubernetes TaskManager pod mounts it, below ``root / name``:
    the ConfigMap's module at the module path, over the image's copy byte-compiled by ``python``
    at build time (`COMPILE_PROGRAM`, as the node image's Dockerfile does) when
    ``image_bytecode``, else over nothing (an image that is not accelplane's); the ConfigMap's
    entry stub and an empty bytecode cache (the pod's ``emptyDir``). Returns (stub, cache)."""
    base = root / name
    module_dir, cache = base / "module", base / "bytecode"
    module_dir.mkdir(mode=0o755, parents=True)
    cache.mkdir(mode=0o755)
    module = module_dir / f"{MODULE_NAME}.py"
    if image_bytecode:
        module.write_bytes(SCRIPT.read_bytes())
        subprocess.run([python, "-I", "-S", "-c", COMPILE_PROGRAM, str(module)], check=True, capture_output=True)
    module.write_bytes(SCRIPT.read_bytes())  # the ConfigMap's copy (mounted over the image's)
    stub = base / "accelplane-gpu-discovery"
    stub.write_text(pod_entry_stub(str(module_dir), str(cache)))
    stub.chmod(0o755)
    return stub, cache


def emptied(cache: Path) -> None:
    """Empty a pod's bytecode cache (a new pod's ``emptyDir``)."""
    shutil.rmtree(cache)
    cache.mkdir(mode=0o755)


def stats(values: Sequence[float]) -> tuple[float, float]:
    """(median, minimum): on a shared machine the minimum is the better estimate of the cost."""
    return statistics.median(values), min(values)


def concurrent_round(cmd: Sequence[str], env: dict[str, str], gpus: int, work: Path,
                     procs: Processes) -> tuple[float, int, bool]:
    """(seconds until the last TaskManager finished, runs over 10 s, every GPU to exactly one owner)."""
    barrier = work / "barrier"
    barrier.write_text("")
    shell = ('touch "$OUT.ready"; flock -s "$BARRIER" true; '
             's=$(date +%s%N); "$0" "$@" >"$OUT.out" 2>"$OUT.err"; rc=$?; e=$(date +%s%N); '
             'echo "$rc $s $e" >"$OUT.tmp"; mv "$OUT.tmp" "$OUT.rc"; exec sleep 1000')
    outs = [work / f"tm{i}" for i in range(gpus)]
    with open(barrier) as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        owners = [subprocess.Popen(["sh", "-c", shell, *cmd], env={**env, "OUT": str(o), "BARRIER": str(barrier)},
                                   stdin=subprocess.DEVNULL) for o in outs]
        procs.procs.extend(owners)
        while not all(Path(f"{o}.ready").exists() for o in outs):
            time.sleep(0.01)
        time.sleep(0.2)  # let every owner block in flock
        released = time.time_ns()
    while not all(Path(f"{o}.rc").exists() for o in outs):
        time.sleep(0.01)
    finished: list[float] = []
    slow = 0
    got: dict[int, list[int]] = {}
    for o, owner in zip(outs, owners, strict=True):
        rc, start, end = (int(x) for x in Path(f"{o}.rc").read_text().split())
        finished.append((end - released) / 1e9)
        slow += (end - start) / 1e9 > GPUDRIVER_TIMEOUT_S
        if rc == 0:
            got.setdefault(int(Path(f"{o}.out").read_text()), []).append(owner.pid)
    exclusive = sorted(got) == list(range(gpus)) and all(len(v) == 1 for v in got.values())
    procs.kill_all()
    for p in work.iterdir():
        p.unlink()
    return max(finished), slow, exclusive


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="20 runs, 1 concurrency repeat")
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--gpus", type=int, default=64)
    ap.add_argument("--python", default="/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable,
                    help="interpreter that runs our script, as a node would (default: the system python3, "
                         "which has no nvidia-ml-py: the nvidia-smi backend answers)")
    args = ap.parse_args()
    runs, repeats = (20, 1) if args.quick else (args.runs, args.repeats)
    gpus = args.gpus
    try:
        flink = flink_discovery_script()
    except FlinkHomeNotFound as exc:
        raise SystemExit(f"Flink's discovery script not found: {exc} (run `make flink` or set ACCELPLANE_FLINK_HOME)") from None
    env = fake_env(gpus)
    load_before = os.getloadavg()
    procs = Processes()
    ways = ("installed", "pod")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            coord = work / "coord"
            cargs = ["--enable-coordination-mode", "--coordination-file", str(coord)]
            installed = install_like_a_node(args.python, work)
            # The pod stub runs `python3` from PATH: make that the interpreter under test.
            (work / "pybin").mkdir()
            (work / "pybin" / "python3").symlink_to(args.python)
            env["PATH"] = f"{work / 'pybin'}{os.pathsep}{env['PATH']}"
            pod, image_cache = install_like_a_pod(work, args.python, "pod-image", image_bytecode=True)
            foreign, _ = install_like_a_pod(work, args.python, "pod-foreign", image_bytecode=False)
            subprocess.run([str(foreign), "1"], env=env, check=True, capture_output=True)  # the preflight's call
            foreign_first, first_cache = install_like_a_pod(work, args.python, "pod-foreign-first",
                                                            image_bytecode=False)
            ours = {"installed": [str(installed)], "pod": [str(pod)]}
            holder = procs.sleeper().pid
            ours_busy = render(Rec(gpu_uuid(i), i, holder, proc_starttime(holder), boot_id(), pid_namespace()).line()
                               for i in range(gpus - 1))
            flink_busy = "".join(f"{i} {holder}\n" for i in range(gpus - 1)).encode()

            def writer(data: bytes) -> Callable[[], None]:
                def reset() -> None:
                    coord.write_bytes(data)

                return reset

            last = f"{gpus - 1}\n"
            scenarios = [
                ("non-coordination, 1 GPU", ["1"], None, None, "0\n"),
                ("coordination, empty file", ["1", *cargs], writer(b""), writer(b""), "0\n"),
                (f"coordination, {gpus - 1} of {gpus} GPUs held", ["1", *cargs], writer(ours_busy),
                 writer(flink_busy), last),
            ]
            rows = []
            for name, call, our_reset, flink_reset, expect in scenarios:
                o = {w: timed_runs([*ours[w], *call], env, runs, our_reset, expect) for w in ways}
                f = timed_runs([str(flink), *call], env, runs, flink_reset, expect)
                rows.append((f"per allocation: {name}",
                             [(statistics.median(o[w]), percentile(o[w], 0.95)) for w in ways],
                             (statistics.median(f), percentile(f, 0.95))))
            # The floor of one call: the same interpreter's bare start plus the inventory query our
            # script makes, run back to back; measured interleaved with every way of running ours.
            query = ["nvidia-smi", "--query-gpu=index,uuid,pci.bus_id,mig.mode.current,name", "--format=csv,noheader"]
            per_call = {**ours, "pod-foreign-first": [str(foreign_first)], "pod-foreign": [str(foreign)]}
            # Every call of "pod" is a pod's first call too: it writes nothing (checked below).
            fresh = {"pod-foreign-first": first_cache}
            samples: dict[str, list[float]] = {w: [] for w in (*per_call, "floor")}
            for _ in range(runs):
                for w, cmd in per_call.items():
                    if w in fresh:
                        emptied(fresh[w])  # a pod's first call: its emptyDir is empty (untimed)
                    start = time.perf_counter()
                    subprocess.run([*cmd, "1"], env=env, check=True, capture_output=True)
                    samples[w].append(time.perf_counter() - start)
                start = time.perf_counter()
                subprocess.run([args.python, "-I", "-S", "-c", "pass"], env=env, check=True)
                subprocess.run(query, env=env, check=True, capture_output=True)
                samples["floor"].append(time.perf_counter() - start)
            conc: dict[str, list[tuple[float, int, bool]]] = {"installed": [], "pod": [], "flink": []}
            conc_dir = work / "conc"
            conc_dir.mkdir()
            for _ in range(repeats):
                for who, cmd in (*((w, [*ours[w], "1", *cargs]) for w in ways), ("flink", [str(flink), "1", *cargs])):
                    coord.write_bytes(b"")
                    conc[who].append(concurrent_round(cmd, env, gpus, conc_dir, procs))
            if any(image_cache.iterdir()):
                raise SystemExit("pod, node image: the stub wrote bytecode where the image's should have served")
    finally:
        procs.kill_all()
    load_after = os.getloadavg()

    def ms(x: float) -> str:
        return f"{x * 1000:.1f} ms"

    our_python = subprocess.run([args.python, "-c", "import platform; print(platform.python_version())"],
                                capture_output=True, text=True, check=True).stdout.strip()
    print(f"GPU discovery benchmark: fake {gpus}-GPU node (fake nvidia-smi), {runs} runs per latency "
          f"scenario, {repeats} concurrency repeat(s); {os.cpu_count()} CPUs, {platform.system()}; ours on "
          f"Python {our_python} ({args.python}); load average {load_before[0]:.1f} -> {load_after[0]:.1f}\n")
    print("Ours **installed** (entry stub, `python3 -I -S`, module precompiled at install time: YARN/standalone "
          "hosts, node image) and **pod** (Kubernetes TaskManagers in the node image: the ConfigMap's entry stub, "
          "`sh`, then `python3 -I -S` on the ConfigMap's module with the image's precompiled bytecode of the "
          "same script).\n")
    print("| scenario | ours installed median / p95 | ours pod median / p95 | Flink median / p95 |")
    print("|---|---:|---:|---:|")
    for name, (inst, pod_row), (fm, fp) in rows:
        print(f"| {name} | {ms(inst[0])} / {ms(inst[1])} | {ms(pod_row[0])} / {ms(pod_row[1])} | "
              f"{ms(fm)} / {ms(fp)} |")
    done = {who: [c[0] for c in conc[who]] for who in conc}
    print(f"| {gpus} concurrent allocations: all done (median / max of {repeats}) | "
          + " | ".join(f"{statistics.median(done[w]):.2f} s / {max(done[w]):.2f} s" for w in (*ways, "flink")) + " |")
    print(f"| {gpus} concurrent: runs slower than GPUDriver's 10 s timeout (total) | "
          + " | ".join(str(sum(c[1] for c in conc[w])) for w in (*ways, "flink")) + " |")
    print(f"| {gpus} concurrent: every GPU to exactly one owner | "
          + " | ".join("yes" if all(c[2] for c in conc[w]) else "NO" for w in (*ways, "flink")) + " |")

    fmed, fmin = stats(samples["floor"])
    print(f"\n| per call, non-coordination ({runs} samples each, interleaved) | ours median / min | floor: "
          f"`{Path(args.python).name} -I -S -c pass` + the nvidia-smi query, median / min | ratio of medians | "
          "ratio of minimums |")
    print("|---|---:|---:|---:|---:|")
    for w, label in (("installed", "installed (entry stub + precompiled module)"),
                     ("pod", "pod, node image (ConfigMap stub, the image's bytecode of the same script): any call"),
                     ("pod-foreign-first", "pod, image without our bytecode: first call (the preflight's, compiles)"),
                     ("pod-foreign", "pod, image without our bytecode: later calls (the bytecode the first cached)")):
        omed, omin = stats(samples[w])
        print(f"| {label} | {ms(omed)} / {ms(omin)} | {ms(fmed)} / {ms(fmin)} | {omed / fmed:.2f}× | "
              f"{omin / fmin:.2f}× |")

if __name__ == "__main__":
    main()
