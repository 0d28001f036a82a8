"""Device check: the GPU discovery script's cost per call on a machine with real NVIDIA GPUs.

    python3 bench/bench_discovery_gpu.py --pynvml-wheel WHEEL [--runs N] [--flink-script PATH]
    python3 bench/bench_discovery_gpu.py --python PYTHON [--runs N] [--flink-script PATH]

Issue 18 asked for the NVML path to be measured where a GPU is lent (bench/bench_discovery.py
measures the script against a fake ``nvidia-smi``). This script needs nothing but the standard library, the
machine's ``python3``, its ``nvidia-smi`` and driver, and either an interpreter that has
``nvidia-ml-py`` (``--python``, a path or a name looked up on PATH such as ``python3``) or that
package's wheel (``--pynvml-wheel``: a private venv of this
``python3`` is made with the wheel unpacked into it, nothing is downloaded). It is never run by
``make test`` (tests/discovery/test_gpu_bench.py runs it against the fakes).

It installs the script as nodes have it (the entry stub running ``python3 -I -S`` on the module
byte-compiled beforehand, `accelplane.discovery_install`), in a private temporary directory, and
interleaves ``--runs`` samples of each, non-coordination mode, 1 GPU:

* ours with ``--backend nvml`` next to its floor, the same interpreter's start plus the NVML
  inventory query itself (``python3 -I -c`` with the calls our query makes: init, count, and per
  GPU handle, index, UUID, name, PCI bus id and MIG mode, shutdown);
* ours with ``--backend nvidia-smi`` next to its floor, ``python3 -I -S -c pass`` plus the
  ``nvidia-smi`` query our script makes, as `make bench` measures with the fake;
* Flink's ``nvidia-gpu-discovery.sh`` (``--flink-script``, from the Flink distribution's
  ``plugins/external-resource-gpu``), when given.

`make bench` runs it (30 samples) where ``nvidia-smi`` answers and prints why it skipped it
elsewhere (``bench.run.bench_discovery_gpu``). Its figures on one H100 (driver 580) are in
docs/benchmarks.md; they decided the ``--backend auto`` order (nvidia-smi first).

Prints a Markdown table (medians and minimums, ratios), the GPUs as our script sees them and the
machine. Exit status 2 when the machine cannot run it (no ``nvidia-smi``, no pynvml for the
interpreter, a script that fails).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
SCRIPT = REPO_ROOT / "components" / "accelplane" / "discovery" / "gpu_discovery.py"
sys.path.insert(0, str(REPO_ROOT / "components"))

from accelplane.discovery_install import COMPILE_PROGRAM, MODULE_NAME, entry_stub  # noqa: E402

SMI_QUERY = ["nvidia-smi", "--query-gpu=index,uuid,pci.bus_id,mig.mode.current,name", "--format=csv,noheader"]
"""The inventory query our nvidia-smi backend makes (the floor's query, as in bench_discovery.py)."""

NVML_QUERY = """\
import pynvml
pynvml.nvmlInit()
try:
    for i in range(int(pynvml.nvmlDeviceGetCount())):
        h = pynvml.nvmlDeviceGetHandleByIndex(i)
        pynvml.nvmlDeviceGetIndex(h)
        pynvml.nvmlDeviceGetUUID(h)
        pynvml.nvmlDeviceGetName(h)
        pynvml.nvmlDeviceGetPciInfo(h).busId
        try:
            pynvml.nvmlDeviceGetMigMode(h)
        except Exception:
            pass
finally:
    pynvml.nvmlShutdown()
"""
"""The NVML calls our inventory makes for whole GPUs (`gpu_discovery._nvml_query`), nothing else."""


class CannotRun(Exception):
    """This machine cannot run the check; the message says why."""


def venv_with_wheel(python: str, wheel: Path, root: Path) -> str:
    """A venv of ``python`` (no pip) with ``wheel`` unpacked into its site-packages, as installing
    it would lay it out; returns the venv's python3."""
    venv = root / "venv"
    subprocess.run([python, "-m", "venv", "--without-pip", str(venv)], check=True, capture_output=True)
    version = subprocess.run([str(venv / "bin" / "python3"), "-c",
                              "import sys; print('python{}.{}'.format(*sys.version_info[:2]))"],
                             check=True, capture_output=True, text=True).stdout.strip()
    site = venv / "lib" / version / "site-packages"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    return str(venv / "bin" / "python3")


def resolve(python: str) -> str:
    """The absolute path of ``python`` (a bare name such as ``python3`` looked up on PATH): the
    entry stub's ``#!`` line needs one, a kernel does not search PATH for an interpreter."""
    found = shutil.which(python)
    if found is None:
        raise CannotRun(f"--python {python!r} is not an executable (nor one on PATH)")
    return os.path.abspath(found)


def install_like_a_node(python: str, root: Path) -> Path:
    """The module beside its checked-hash .pyc compiled by ``python``, and the entry stub (below
    ``root``, private to this run); returns the stub."""
    module_dir = root / "discovery"
    module_dir.mkdir(mode=0o755)
    module = module_dir / f"{MODULE_NAME}.py"
    module.write_bytes(SCRIPT.read_bytes())
    subprocess.run([python, "-I", "-S", "-c", COMPILE_PROGRAM, str(module)], check=True, capture_output=True)
    stub = root / "accelplane-gpu-discovery"
    stub.write_text(entry_stub(python, str(module_dir)))
    stub.chmod(0o755)
    return stub


def answer(cmd: Sequence[str]) -> subprocess.CompletedProcess[str]:
    """Run ``cmd`` once, as the benchmark will, and keep what it printed."""
    return subprocess.run(list(cmd), capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60,
                          check=False)


def preflight(stub: Path, python: str, flink: Path | None) -> list[str]:
    """Check that every command answers (ours through NVML for real, not through a fallback);
    return the names of the machine's GPUs (the nvidia-smi query); raise `CannotRun` naming what is
    missing."""
    if shutil.which("nvidia-smi") is None:
        raise CannotRun("nvidia-smi is not on PATH: this is not an NVIDIA GPU machine")
    found = answer([str(stub), "1", "--backend", "nvml", "--format", "json", "--verbose"])
    if found.returncode != 0:
        hint = " (nvidia-ml-py is not installed for it: use --pynvml-wheel)" if "not importable" in found.stderr else ""
        raise CannotRun(f"our script found no GPU through NVML with {python}{hint}:\n{found.stderr.strip()}")
    doc = json.loads(found.stdout)
    if doc.get("backend") != "nvml":
        raise CannotRun(f"our script answered through {doc.get('backend')!r}, not NVML")
    checks = [[str(stub), "1", "--backend", "nvidia-smi"], [python, "-I", "-c", NVML_QUERY], SMI_QUERY]
    if flink is not None:
        checks.append(["bash", str(flink), "1"])
    answers = []
    for cmd in checks:
        r = answer(cmd)
        if r.returncode != 0:
            raise CannotRun(f"{' '.join(cmd[:3])} failed ({r.returncode}): {r.stderr.strip()}")
        answers.append(r.stdout)
    return [line.rsplit(",", 1)[-1].strip() for line in answers[2].splitlines() if line.strip()]


def measure(commands: dict[str, list[list[str]]], runs: int) -> dict[str, list[float]]:
    """Wall time of each entry (its commands back to back) over ``runs`` rounds, one warm-up each;
    the order rotates from round to round so load that comes and goes hits every entry alike."""
    def once(cmds: list[list[str]]) -> float:
        start = time.perf_counter()
        for cmd in cmds:
            subprocess.run(cmd, check=True, capture_output=True, stdin=subprocess.DEVNULL)
        return time.perf_counter() - start

    names = list(commands)
    for name in names:
        once(commands[name])
    samples: dict[str, list[float]] = {name: [] for name in names}
    for i in range(runs):
        shift = i % len(names)
        for name in names[shift:] + names[:shift]:
            samples[name].append(once(commands[name]))
    return samples


def table(samples: dict[str, list[float]], rows: list[tuple[str, str, str]]) -> str:
    """Markdown: each row is (label, ours, floor) naming entries of ``samples``."""
    def ms(x: float) -> str:
        return f"{x * 1000:.1f} ms"

    lines = ["| per call, non-coordination, 1 GPU | ours median / min | floor | floor median / min "
             "| ratio of medians | ratio of minimums |", "|---|---:|---|---:|---:|---:|"]
    for label, ours, floor in rows:
        o, f = samples[ours], samples[floor]
        lines.append(f"| {label} | {ms(statistics.median(o))} / {ms(min(o))} | {floor} | "
                     f"{ms(statistics.median(f))} / {ms(min(f))} | "
                     f"{statistics.median(o) / statistics.median(f):.2f}× | {min(o) / min(f):.2f}× |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    which = ap.add_mutually_exclusive_group(required=True)
    which.add_argument("--python", help="an interpreter that has nvidia-ml-py (pynvml)")
    which.add_argument("--pynvml-wheel", type=Path, help="nvidia-ml-py's wheel, for a private venv of --base-python")
    ap.add_argument("--base-python", default=shutil.which("python3") or sys.executable,
                    help="interpreter of the private venv (default: python3 on PATH)")
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--flink-script", type=Path, help="Flink's nvidia-gpu-discovery.sh (beside gpu-discovery-common.sh)")
    args = ap.parse_args(argv)
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        try:
            python = resolve(args.python) if args.python else venv_with_wheel(args.base_python, args.pynvml_wheel,
                                                                                root)
            stub = install_like_a_node(python, root)
            gpus = preflight(stub, python, args.flink_script)
        except (CannotRun, OSError, subprocess.CalledProcessError, zipfile.BadZipFile) as exc:
            print(f"bench_discovery_gpu: cannot run here: {exc}", file=sys.stderr)
            return 2
        commands = {
            "ours, NVML": [[str(stub), "1", "--backend", "nvml"]],
            "python3 -I + the NVML query": [[python, "-I", "-c", NVML_QUERY]],
            "ours, nvidia-smi": [[str(stub), "1", "--backend", "nvidia-smi"]],
            "python3 -I -S -c pass + the nvidia-smi query": [[python, "-I", "-S", "-c", "pass"], SMI_QUERY],
        }
        if args.flink_script is not None:
            commands["Flink's nvidia-gpu-discovery.sh"] = [["bash", str(args.flink_script), "1"]]
        samples = measure(commands, args.runs)
        version = answer([python, "-c", "import platform; print(platform.python_version())"]).stdout.strip()
    rows = [("ours through NVML (entry stub, precompiled module)", "ours, NVML", "python3 -I + the NVML query"),
            ("ours through nvidia-smi (entry stub, precompiled module)", "ours, nvidia-smi",
             "python3 -I -S -c pass + the nvidia-smi query")]
    if args.flink_script is not None:
        rows.append(("Flink's script (nvidia-smi), next to ours through NVML", "Flink's nvidia-gpu-discovery.sh",
                     "ours, NVML"))
    load_after = os.getloadavg()
    models = ", ".join(f"{n}× {name}" for name, n in Counter(gpus).items())
    print(f"GPU discovery per call on real GPUs ({models or 'none listed'}); {args.runs} samples each, interleaved; "
          f"{os.cpu_count()} CPUs, {platform.system()}; ours on Python {version} ({python}); "
          f"load average {load_before[0]:.1f} -> {load_after[0]:.1f}\n")
    print(table(samples, rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
