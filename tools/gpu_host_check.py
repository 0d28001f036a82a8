#!/usr/bin/env python3
"""Check what accelplane renders against a real NVIDIA driver, on a host with NVIDIA GPUs.

Two steps (docs/discovery.md, "Checking on a real GPU"):

    .venv/bin/python tools/gpu_host_check.py --write-facts build/gpu-facts.json   # here: needs accelplane + PyYAML
    python3 tools/gpu_host_check.py --out DIR [--build build] [--facts build/gpu-facts.json]

The first step (after ``make demo``) writes what accelplane's own tables and functions say about
every NVIDIA GPU of ``schemas/gpu-names.yaml`` (`accelplane.gpu_names.lookup`, the GPU Feature
Discovery product label, the YARN node label, the MIG tables of `accelplane.mig_profiles`) and
which example clusters run on YARN/standalone hosts, so the second step compares the real driver
with the very functions the product uses. The second step needs only the standard library (Python
>= 3.10), ``nvidia-smi`` and ``bash``; it never changes a GPU setting (no MIG mode change, no
reset, no clocks: it only runs ``nvidia-smi`` queries, ``nvidia-smi mig -lgip``/``-lgipp`` and
NVML's read calls) and writes only below a private temporary directory (mode 0700) and ``--out``.
Every check records pass, fail or skipped with its evidence (the commands and what they printed);
a failure never stops the later checks.

1. ``facts.*``: ``nvidia-smi --query-gpu=...`` and ``-L``, NVML's name (ctypes,
   ``libnvidia-ml.so.1``) against the name table: the name is a captured row, the GFD label and the
   YARN node label follow from it, the memory fits the MIG table's full-GPU profile; with MIG mode
   enabled, ``nvidia-smi mig -lgip``/``-lgipp`` against the MIG table.
2. ``discovery.*``: per example stack, the discovery script installed the way hosts get it (the
   rendered ``node/provision.sh --root``, else the node image's files as its Dockerfile copies
   them, byte-compiled by ``COMPILE_PROGRAM``), then every rendered Flink config that points
   ``external-resource.<r>.param.discovery-script.path`` at it is run as Flink's GPUDriver runs it:
   ``<script> <amount> <args>`` split on whitespace, as the child of a stand-in TaskManager JVM,
   with absolute paths in the arguments moved below the private directory; stdout must be the
   comma-separated index list GPUDriver parses (amount 1, and the rendered amount).
3. ``shared-host.*``: two YARN/standalone clusters in coordination mode on this one host: A's
   TaskManager takes every GPU it may use (GPU 0 on a one-GPU host); B's is refused while A lives
   (allocation and the start scripts' ``--check-free``, both naming A), the host start lock
   excludes a second holder, B gets GPU 0 once A's process exits, and ``--release`` hands it back.
   Two TaskManagers of one cluster: both get GPU 0 without coordination, the second is refused
   with it (``discovery.two-taskmanagers.*``).
4. ``metrics.*``: the node-exporter textfile the script wrote (``--metrics-file``) after B's
   allocation and after its release, copied into ``--out`` for ``promtool check metrics``.
5. ``bench``: ``bench/bench_discovery_gpu.py --python python3 --runs N`` when time is left.

Output (``--out``, created): ``report.json`` (every check with status and evidence),
``check.log`` (the same, readable), and ``metrics-<stack>.<cluster>-{held,released}.prom`` (at
most 4 such files). Exit status 0 when no check failed, 1 otherwise (2: wrong usage).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import select
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT / "components"))

# Standard library only, like bench/bench_discovery_gpu.py: the install program and the script itself.
from accelplane.discovery import gpu_discovery as discovery  # noqa: E402
from accelplane.discovery_install import COMPILE_PROGRAM, MODULE_NAME  # noqa: E402

FACT_FIELDS = "name,memory.total,compute_cap,mig.mode.current,pci.device_id,driver_version"
FACT_QUERY = ["nvidia-smi", f"--query-gpu={FACT_FIELDS}", "--format=csv,noheader"]
OUR_SCRIPT = "accelplane-gpu-discovery"
TASKMANAGER_CLASS = "org.apache.flink.runtime.taskexecutor.TaskManagerRunner"
SCRUBBED_ENV = ("CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES",
                "ACCELPLANE_GPU_DISCOVERY_BACKEND", "ACCELPLANE_START_LOCK_HELD", "PYTHONPATH")
"""Variables a host's TaskManager would not have (a container runtime's, a test's)."""
MAX_PROM_FILES = 4
MAX_TEXT = 20_000
"""Characters of one command's stdout/stderr kept as evidence."""
SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")
GROUPS = ("facts", "discovery", "shared-host", "bench")
"""Check groups (``--checks``): facts always run; shared-host needs discovery's install and also
writes the metrics snapshots (check 4)."""

NVML_PROBE = r"""
import ctypes, json, sys
out = {"library": sys.argv[1]}
try:
    lib = ctypes.CDLL(sys.argv[1])
except OSError as e:
    out["loaded"] = False
    out["error"] = str(e)
    print(json.dumps(out))
    sys.exit(0)
out["loaded"] = True
def call(name, *args):
    rc = getattr(lib, name)(*args)
    if rc != 0:
        raise RuntimeError(f"{name} returned NVML error {rc}")
try:
    call("nvmlInit_v2")
    try:
        buf = ctypes.create_string_buffer(96)
        call("nvmlSystemGetDriverVersion", buf, ctypes.c_uint(96))
        out["driver_version"] = buf.value.decode()
        count = ctypes.c_uint()
        call("nvmlDeviceGetCount_v2", ctypes.byref(count))
        gpus = []
        for i in range(count.value):
            h = ctypes.c_void_p()
            call("nvmlDeviceGetHandleByIndex_v2", ctypes.c_uint(i), ctypes.byref(h))
            name = ctypes.create_string_buffer(96)
            call("nvmlDeviceGetName", h, name, ctypes.c_uint(96))
            cur, pend = ctypes.c_uint(), ctypes.c_uint()
            mig = lib.nvmlDeviceGetMigMode(h, ctypes.byref(cur), ctypes.byref(pend))
            gpus.append({"index": i, "name": name.value.decode(), "mig_current": cur.value if mig == 0 else None})
        out["gpus"] = gpus
    finally:
        lib.nvmlShutdown()
except Exception as e:
    out["error"] = f"{type(e).__name__}: {e}"
print(json.dumps(out))
"""
"""NVML's read calls through ctypes (run in a child with a timeout: a wedged driver cannot hang
the check): init, driver version, count, per GPU handle, name and MIG mode, shutdown."""

STAND_IN = r"""
import json, os, subprocess, sys
cmd = json.loads(os.environ.pop("ACCELPLANE_CHECK_CMD"))
try:
    p = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60)
    result = {"rc": p.returncode, "stdout": p.stdout, "stderr": p.stderr}
except Exception as e:
    result = {"rc": None, "stdout": "", "stderr": f"{type(e).__name__}: {e}"}
sys.stdout.write(json.dumps(result) + "\n")
sys.stdout.flush()
sys.stdin.read()
"""
"""A TaskManager JVM's stand-in: run as ``java`` (a link to python3 named so) with the command line
of one (``TaskManagerRunner --configDir <conf> -D taskmanager.resource-id=<id>``), it runs the
discovery command as its child, the way GPUDriver does, reports the result on stdout and lives
until its stdin closes: the owner whose pid and start time the coordination file records."""


# ---------------------------------------------------------------------------------------- report


@dataclass
class Check:
    """One check: its name, status (pass, fail, skipped), a one-line summary and the evidence."""

    name: str
    status: str = "pass"
    summary: str = ""
    evidence: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def fail(self, why: str) -> None:
        """Mark the check failed; the first reason becomes its summary, later ones notes."""
        if self.status != "fail":
            self.status, self.summary = "fail", why
        else:
            self.notes.append(why)

    def skip(self, why: str) -> None:
        """Mark the check skipped (never over a failure)."""
        if self.status != "fail":
            self.status, self.summary = "skipped", why

    def note(self, text: str) -> None:
        self.notes.append(text)


@dataclass
class Report:
    """Every check in order, with the host's facts; written as report.json and check.log."""

    checks: list[Check] = field(default_factory=list)
    host: dict[str, Any] = field(default_factory=dict)
    started: float = field(default_factory=time.monotonic)

    @contextmanager
    def check(self, name: str) -> Iterator[Check]:
        """A new check; an unexpected exception inside fails it (with the exception as evidence)
        and the run goes on with the next check."""
        c = Check(name)
        self.checks.append(c)
        try:
            yield c
        except Exception as e:  # one check's bug or surprise must not cost the others
            import traceback

            c.fail(f"the check itself raised {type(e).__name__}: {e}")
            c.evidence.append({"cmd": "(traceback)", "text": traceback.format_exc()})
        if c.status == "pass" and not c.summary:
            c.summary = "ok"

    def counts(self) -> dict[str, int]:
        out = {"pass": 0, "fail": 0, "skipped": 0}
        for c in self.checks:
            out[c.status] += 1
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "tool": "tools/gpu_host_check.py",
            "seconds": round(time.monotonic() - self.started, 2),
            "host": self.host,
            "counts": self.counts(),
            "checks": [
                {"name": c.name, "status": c.status, "summary": c.summary, "notes": c.notes, "evidence": c.evidence}
                for c in self.checks
            ],
        }

    def log_text(self) -> str:
        """The report for people: a summary table first, then each check with its evidence."""
        doc = self.to_json()
        lines = [f"accelplane GPU host check: {doc['counts']} in {doc['seconds']} s",
                 f"host: {json.dumps(self.host, sort_keys=True)}", ""]
        lines += [f"{c.status.upper():8} {c.name}: {c.summary}" for c in self.checks]
        for c in self.checks:
            lines += ["", "=" * 100, f"{c.status.upper()} {c.name}: {c.summary}"]
            lines += [f"  note: {n}" for n in c.notes]
            for ev in c.evidence:
                lines.append(f"  $ {ev.get('cmd', '')}")
                for key in ("rc", "seconds"):
                    if key in ev:
                        lines.append(f"    {key}: {ev[key]}")
                for key in ("stdout", "stderr", "text"):
                    if ev.get(key):
                        lines.append(f"    {key}:")
                        lines += [f"      | {line}" for line in str(ev[key]).rstrip("\n").split("\n")]
        return "\n".join(lines) + "\n"


def clip(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + f"\n... ({len(text) - MAX_TEXT} more characters)"


@dataclass
class Deadline:
    """The run's time budget: every command gets at most what is left (and at most ``cap``)."""

    end: float

    def left(self) -> float:
        return self.end - time.monotonic()

    def timeout(self, cap: float = 30.0) -> float:
        return max(1.0, min(cap, self.left()))


def run_cmd(cmd: Sequence[str], deadline: Deadline, *, env: dict[str, str] | None = None, cap: float = 30.0,
            cwd: Path | None = None) -> dict[str, Any]:
    """Run ``cmd`` (no shell) with a timeout; returns the evidence: the command, exit status
    (None: it could not run or timed out), stdout, stderr and seconds."""
    start = time.monotonic()
    ev: dict[str, Any] = {"cmd": shlex.join(cmd)}
    try:
        p = subprocess.run(list(cmd), capture_output=True, text=True, errors="replace", stdin=subprocess.DEVNULL,
                           timeout=deadline.timeout(cap), env=env, cwd=cwd, check=False)
        ev.update(rc=p.returncode, stdout=clip(p.stdout), stderr=clip(p.stderr))
    except (OSError, subprocess.TimeoutExpired) as e:
        ev.update(rc=None, stdout="", stderr=f"{type(e).__name__}: {e}")
    ev["seconds"] = round(time.monotonic() - start, 3)
    return ev


# ---------------------------------------------------------------------------------------- facts file (here)


def write_facts(path: Path) -> None:
    """Write the expectations file: accelplane's answers for every NVIDIA driver name of the name
    table, and the YARN/standalone GPU clusters (and host-sharing pairs) of each example stack.
    Needs accelplane's dependencies (PyYAML): run it with the project's venv."""
    from accelplane.derive.shared_hosts import node_clusters, sharings
    from accelplane.derive.yarn_labels import label_for_model
    from accelplane.discovery_install import script_digest
    from accelplane.gpu_names import lookup, table
    from accelplane.mig_profiles import mig_table
    from accelplane.names import gfd_product_label, normalize_gpu_model
    from accelplane.pipeline import load_validated

    gpus: dict[str, Any] = {}
    for row in table():
        if row.vendor != "nvidia":
            continue
        found = lookup("nvidia", row.name)
        cap = mig_table("nvidia", row.name)
        gpus[row.name] = {
            "product": row.product,
            "captured": row.captured,
            "lookup": found.match.value,
            "lookupRows": [r.name for r in found.rows],
            "gfdProduct": row.gfd_product,
            "gfdProductComputed": gfd_product_label(row.name),
            "yarnNodeLabel": label_for_model(row.name),
            "modelToken": normalize_gpu_model(row.name),
            "migTables": [
                {"key": t.key, "computeSlices": t.compute_slices, "memorySlices": t.memory_slices,
                 "profiles": [{"name": p.name, "compute": p.compute, "memory": p.memory, "max": p.max_instances,
                               "placements": list(p.placements)} for p in t.profiles]}
                for t in cap.tables
            ],
        }
    stacks: dict[str, Any] = {}
    for spec_path in sorted((REPO_ROOT / "stacks").glob("*.yaml")):
        if spec_path.name.startswith("Pulumi."):
            continue
        model = load_validated(spec_path).model
        stacks[spec_path.stem] = {
            "nodeClusters": {c.name: c.platform for c in node_clusters(model)},
            "sharedHosts": [{"first": s.first.name, "second": s.second.name, "hosts": list(s.hosts)}
                            for s in sharings(model)],
        }
    doc = {"generatedBy": "tools/gpu_host_check.py --write-facts", "scriptSha256": script_digest(),
           "gpus": gpus, "stacks": stacks}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")


# ---------------------------------------------------------------------------------------- 1. GPU facts


@dataclass(frozen=True)
class HostGpu:
    """One GPU as ``nvidia-smi --query-gpu`` reports it (index = line number)."""

    index: int
    name: str
    memory_mib: int | None
    compute_cap: str
    mig_mode: str
    device_id: str
    driver: str


def parse_fact_lines(stdout: str) -> list[HostGpu]:
    """The GPUs of the fact query's CSV (fields split from the right: ``name`` comes first and
    may hold a comma); lines that do not have six fields (warnings) are skipped."""
    out: list[HostGpu] = []
    for line in stdout.splitlines():
        parts = line.rsplit(",", 5)
        if len(parts) != 6:
            continue
        name, mem, cap, mig, dev, drv = (p.strip() for p in parts)
        m = re.fullmatch(r"(\d+)\s*MiB", mem)
        out.append(HostGpu(len(out), name, int(m.group(1)) if m else None, cap, mig, dev, drv))
    return out


LIST_LINE = re.compile(r"GPU (\d+): (.*) \(UUID: ([^)]*)\)\s*$")


def parse_list(stdout: str) -> dict[int, str]:
    """``nvidia-smi -L``: GPU index → name (MIG device lines are not GPUs)."""
    return {int(m.group(1)): m.group(2) for m in map(LIST_LINE.match, stdout.splitlines()) if m}


LGIP_LINE = re.compile(r"^\|\s*(\d+)\s+MIG\s+(\S+)\s+(\d+)\s+(\d+)/(\d+)\s+([\d.]+)\s")
LGIPP_LINE = re.compile(r"GPU\s+(\d+)\s+Profile ID\s+(\d+)\s+Placements?\s*:\s*\{([\d,\s]*)\}:(\d+)")


def parse_lgip(stdout: str) -> dict[int, dict[str, tuple[int, int]]]:
    """``nvidia-smi mig -lgip``: per GPU, profile name → (profile id, total instances)."""
    out: dict[int, dict[str, tuple[int, int]]] = {}
    for line in stdout.splitlines():
        m = LGIP_LINE.match(line)
        if m:
            out.setdefault(int(m.group(1)), {})[m.group(2)] = (int(m.group(3)), int(m.group(5)))
    return out


def parse_lgipp(stdout: str) -> dict[int, dict[int, tuple[tuple[int, ...], int]]]:
    """``nvidia-smi mig -lgipp``: per GPU, profile id → (start slices, memory slices)."""
    out: dict[int, dict[int, tuple[tuple[int, ...], int]]] = {}
    for line in stdout.splitlines():
        m = LGIPP_LINE.search(line)
        if m:
            starts = tuple(int(s) for s in m.group(3).replace(" ", "").split(",") if s)
            out.setdefault(int(m.group(1)), {})[int(m.group(2))] = (starts, int(m.group(4)))
    return out


def compare_mig(table_row: dict[str, Any], lgip: dict[str, tuple[int, int]],
                lgipp: dict[int, tuple[tuple[int, ...], int]]) -> list[str]:
    """Differences between a MIG table of ours and what the driver lists for one GPU (empty: same):
    profile names, instances per GPU, and (where ``-lgipp`` answered) placements and memory slices."""
    ours = {p["name"]: p for p in table_row["profiles"]}
    diffs = []
    for name in sorted(set(ours) - set(lgip)):
        diffs.append(f"profile {name} is in our table but the driver does not list it")
    for name in sorted(set(lgip) - set(ours)):
        diffs.append(f"the driver lists profile {name}, our table does not")
    for name in sorted(set(ours) & set(lgip)):
        pid, total = lgip[name]
        if total != ours[name]["max"]:
            diffs.append(f"{name}: the driver offers {total} instances, our table says {ours[name]['max']}")
        if pid in lgipp:
            starts, size = lgipp[pid]
            if list(starts) != ours[name]["placements"]:
                diffs.append(f"{name}: placements {list(starts)} on the driver, {ours[name]['placements']} in our table")
            if size != ours[name]["memory"]:
                diffs.append(f"{name}: {size} memory slices on the driver, {ours[name]['memory']} in our table")
    return diffs


def check_facts(report: Report, facts: dict[str, Any] | None, deadline: Deadline, nvml_library: str,
                python: str) -> list[HostGpu]:
    """Check 1; returns the GPUs the fact query reported (empty when it failed)."""
    gpus: list[HostGpu] = []
    with report.check("facts.nvidia-smi-query") as c:
        ev = run_cmd(FACT_QUERY, deadline)
        c.evidence.append(ev)
        gpus = parse_fact_lines(ev["stdout"]) if ev["rc"] == 0 else []
        if ev["rc"] != 0:
            c.fail(f"nvidia-smi failed (exit {ev['rc']})")
        elif not gpus:
            c.fail("nvidia-smi listed no GPU")
        else:
            c.summary = "; ".join(f"GPU {g.index}: {g.name}, {g.memory_mib} MiB, compute {g.compute_cap}, "
                                  f"MIG {g.mig_mode}, device {g.device_id}, driver {g.driver}" for g in gpus)
            report.host["gpus"] = [g.__dict__ for g in gpus]
    with report.check("facts.nvidia-smi-list") as c:
        ev = run_cmd(["nvidia-smi", "-L"], deadline)
        c.evidence.append(ev)
        listed = parse_list(ev["stdout"]) if ev["rc"] == 0 else {}
        if ev["rc"] != 0 or not listed:
            c.fail(f"nvidia-smi -L failed or listed no GPU (exit {ev['rc']})")
        elif gpus and listed != {g.index: g.name for g in gpus}:
            c.fail(f"-L names {listed}, the query {({g.index: g.name for g in gpus})}")
        else:
            c.summary = f"-L names the same GPUs: {listed}"
    with report.check("facts.nvml-name") as c:
        ev = run_cmd([python, "-I", "-S", "-c", NVML_PROBE, nvml_library], deadline)
        c.evidence.append(ev)
        try:
            probe = json.loads(ev["stdout"].strip().splitlines()[-1])
        except (IndexError, ValueError):
            probe = {"loaded": None, "error": "the probe printed nothing readable"}
        if probe.get("loaded") is False:
            c.skip(f"NVML not loadable: {probe.get('error')}")
        elif "gpus" not in probe:
            c.fail(f"NVML: {probe.get('error')}")
        else:
            names = {g["index"]: g["name"] for g in probe["gpus"]}
            if gpus and names != {g.index: g.name for g in gpus}:
                c.fail(f"NVML names {names}, nvidia-smi {({g.index: g.name for g in gpus})}")
            else:
                c.summary = f"NVML names {names} (driver {probe.get('driver_version')})"
            if gpus and probe.get("driver_version") not in {g.driver for g in gpus}:
                c.fail(f"NVML's driver version {probe.get('driver_version')} is not nvidia-smi's")
    for name in sorted({g.name for g in gpus}):
        check_name(report, facts, name, [g for g in gpus if g.name == name], deadline)
    return gpus


def check_name(report: Report, facts: dict[str, Any] | None, name: str, gpus: list[HostGpu],
               deadline: Deadline) -> None:
    """The driver's name against accelplane's name table and MIG table (via the facts file)."""
    key = SAFE_NAME.sub("-", name).strip("-")
    row = (facts or {}).get("gpus", {}).get(name)
    with report.check(f"facts.name-table.{key}") as c:
        name_in_table(c, facts, name, row)
    tables: list[dict[str, Any]] = row["migTables"] if row else []
    with report.check(f"facts.memory.{key}") as c:
        memory_fits(c, tables, gpus)
    with report.check(f"facts.mig.{key}") as c:
        mig_matches(c, tables, gpus, deadline)


def name_in_table(c: Check, facts: dict[str, Any] | None, name: str, row: dict[str, Any] | None) -> None:
    """The name is an exact, captured row whose GFD label and model token follow from it."""
    if facts is None:
        c.skip("no facts file (run --write-facts with the project's venv first)")
        return
    c.evidence.append({"cmd": f"facts[gpus][{name!r}]", "text": json.dumps(row, indent=1)})
    if row is None:
        near = [n for n in facts["gpus"] if discovery.normalize_model(n) == discovery.normalize_model(name)]
        c.fail(f"the driver names this GPU {name!r}, which schemas/gpu-names.yaml does not list"
               + (f" (same token as {near})" if near else ""))
        return
    if row["lookup"] != "exact":
        c.fail(f"accelplane.gpu_names.lookup says {row['lookup']!r} for the driver's own name (expected 'exact')")
    if row["gfdProduct"] != row["gfdProductComputed"]:
        c.fail(f"table gfdProduct {row['gfdProduct']!r} is not GFD's label of the name {row['gfdProductComputed']!r}")
    if row["modelToken"] != discovery.normalize_model(name):
        c.fail(f"accelplane's model token {row['modelToken']!r} differs from the script's "
               f"{discovery.normalize_model(name)!r}")
    if c.status == "pass":
        c.summary = (f"{name!r}: exact table row (product {row['product']}), GFD nvidia.com/gpu.product="
                     f"{row['gfdProduct']}, YARN node label {row['yarnNodeLabel']}, MIG tables "
                     f"{[t['key'] for t in row['migTables']] or 'none'}")


def memory_fits(c: Check, tables: list[dict[str, Any]], gpus: list[HostGpu]) -> None:
    """memory.total is within 10% of the memory the MIG table's full-GPU profile names (7g.80gb)."""
    full = [p for t in tables[:1] for p in t["profiles"] if p["compute"] == t["computeSlices"]]
    gb = re.search(r"\.(\d+)gb$", full[0]["name"]) if full else None
    mems = sorted({g.memory_mib for g in gpus if g.memory_mib is not None})
    if gb is None or not mems:
        c.skip("no full-GPU MIG profile to compare the memory with" if mems else "no memory.total reported")
        return
    want = int(gb.group(1))
    for mib in mems:
        if abs(mib / 1024 - want) > 0.1 * want:
            c.fail(f"memory.total {mib} MiB ({mib / 1024:.1f} GiB) does not fit the table's {full[0]['name']}")
    if c.status == "pass":
        c.summary = f"memory.total {mems} MiB fits the full-GPU profile {full[0]['name']} ({tables[0]['key']})"


def mig_matches(c: Check, tables: list[dict[str, Any]], gpus: list[HostGpu], deadline: Deadline) -> None:
    """With MIG mode enabled: the driver's GPU instance profiles (-lgip) and placements (-lgipp)
    are one of our MIG tables of the GPU; disabled: recorded and skipped (never enabled here)."""
    modes = {g.mig_mode for g in gpus}
    lgip_ev = run_cmd(["nvidia-smi", "mig", "-lgip"], deadline)
    c.evidence.append(lgip_ev)
    if "Enabled" not in modes:
        c.skip(f"MIG mode is {sorted(modes)} (this check never enables it); "
               f"our table: {[t['key'] for t in tables] or 'no MIG'}")
        return
    lgipp_ev = run_cmd(["nvidia-smi", "mig", "-lgipp"], deadline)
    c.evidence.append(lgipp_ev)
    if not tables:
        c.fail("MIG mode is enabled but our tables say this GPU has no MIG")
        return
    lgip, lgipp = parse_lgip(lgip_ev["stdout"]), parse_lgipp(lgipp_ev["stdout"])
    for g in gpus:
        if g.mig_mode != "Enabled":
            continue
        if g.index not in lgip:
            c.fail(f"GPU {g.index}: nvidia-smi mig -lgip listed no profile")
            continue
        best = min(tables, key=lambda t: len(compare_mig(t, lgip[g.index], lgipp.get(g.index, {}))))
        diffs = compare_mig(best, lgip[g.index], lgipp.get(g.index, {}))
        if diffs:
            c.fail(f"GPU {g.index} vs table {best['key']}: " + "; ".join(diffs))
        else:
            c.note(f"GPU {g.index}: every profile, instance count and placement matches table {best['key']}")
    if c.status == "pass":
        c.summary = "the driver's MIG profiles are our table's"


# ---------------------------------------------------------------------------------------- 2. discovery


def flink_conf_values(path: Path) -> dict[str, str]:
    """Top-level ``key: value`` pairs of a rendered Flink config: the legacy ``flink-conf.yaml``
    read as Flink's ``GlobalConfiguration`` does (text after ``#`` dropped, split at the first
    ``": "``), ``config.yaml`` as flat YAML scalars (double-quoted: JSON-compatible escapes;
    single-quoted; plain). Nested or list values are returned as written."""
    legacy = path.name == "flink-conf.yaml"
    out: dict[str, str] = {}
    for raw in path.read_text(encoding="utf-8").splitlines():
        if legacy:
            line = raw.split("#", 1)[0].strip()
            key, sep, value = line.partition(": ")
            if sep and key.strip():
                out[key.strip()] = value.strip()
            continue
        if not raw or raw[0] in " \t#-" or ":" not in raw:
            continue
        key, _, value = raw.partition(":")
        value = value.strip()
        if value.startswith('"'):
            value = json.loads(value)
        elif value.startswith("'"):
            value = value[1:-1].replace("''", "'")
        else:
            value = value.split(" #", 1)[0].strip()
        out[key.strip()] = value
    return out


@dataclass(frozen=True)
class Resource:
    """One external resource of a rendered Flink config that runs our discovery script."""

    stack: str
    cluster: str
    name: str
    config: Path
    script: str
    args: tuple[str, ...]
    amount: int
    platform: str
    """``yarn``/``standalone`` (a host cluster), ``kubernetes`` or ``unknown``."""

    @property
    def label(self) -> str:
        return f"{self.stack}.{self.cluster}" + ("" if self.name == "gpu" else f".{self.name}")

    @property
    def coordination(self) -> bool:
        return any(a in ("--enable-coordination-mode", "--privilege", "--enable-coordination") for a in self.args)

    def model(self) -> str | None:
        for i, a in enumerate(self.args[:-1]):
            if a == "--model":
                return self.args[i + 1]
        return None


KEY = re.compile(r"external-resource\.([^.]+)\.param\.discovery-script\.path")


def rendered_resources(build: Path, facts: dict[str, Any] | None) -> list[Resource]:
    """Every external resource of every rendered Flink config in ``build`` whose discovery
    script is ours, in stack, cluster and resource order."""
    out = []
    for conf in sorted([*build.glob("*/flink/*/config.yaml"), *build.glob("*/flink/*/flink-conf.yaml")]):
        stack, cluster = conf.parts[-4], conf.parts[-2]
        values = flink_conf_values(conf)
        node = ((facts or {}).get("stacks", {}).get(stack) or {}).get("nodeClusters")
        for key in sorted(values):
            m = KEY.fullmatch(key)
            if not m or Path(values[key]).name != OUR_SCRIPT:
                continue
            r = m.group(1)
            args = values.get(f"external-resource.{r}.param.discovery-script.args", "")
            if node is not None:
                platform = node.get(cluster, "kubernetes")
            elif (conf.parent / "taskmanagers").is_dir():
                platform = "standalone"
            elif any(k.startswith("yarn.") for k in values):
                platform = "yarn"
            else:
                platform = "unknown"
            out.append(Resource(stack, cluster, r, conf, values[key], tuple(args.split()),
                                int(values.get(f"external-resource.{r}.amount", "1")), platform))
    return out


@dataclass
class Installed:
    """The discovery script of one stack installed below a private root."""

    root: Path
    stub: Path
    how: str


def installed_script(stack_dir: Path, root: Path, script_path: str, deadline: Deadline, c: Check,
                     python: str) -> Installed | None:
    """Install the stack's discovery script below ``root`` the way its hosts get it: the rendered
    ``node/provision.sh --root`` (YARN/standalone hosts), else the node image's two files where its
    Dockerfile copies them; then byte-compile the module with ``COMPILE_PROGRAM`` (what
    provision.sh runs without --root and the Dockerfile runs) and point the stub at the module
    below ``root`` (and at ``python`` when the stub's interpreter is missing here)."""
    provision = stack_dir / "node" / "provision.sh"
    image = stack_dir / "node-image"
    if provision.is_file():
        text = provision.read_text(encoding="utf-8")
        ev = run_cmd(["bash", str(provision), "--root", str(root)], deadline, env={**os.environ, "LC_ALL": "C"})
        c.evidence.append(ev)
        if ev["rc"] != 0:
            c.fail(f"{provision} --root failed (exit {ev['rc']})")
            return None
        m = re.search(r"^readonly MODULE_PATH=(\S+)$", text, re.M)
        s = re.search(r"^readonly SCRIPT_PATH=(\S+)$", text, re.M)
        if not m or not s:
            c.fail("provision.sh names no MODULE_PATH / SCRIPT_PATH")
            return None
        module_path, stub_path, how = m.group(1), s.group(1), "node/provision.sh --root"
        if f"readonly COMPILE_PROGRAM='{COMPILE_PROGRAM}'" not in text:
            c.fail("provision.sh's COMPILE_PROGRAM is not accelplane.discovery_install's")
    elif (image / OUR_SCRIPT).is_file():
        dockerfile = (image / "Dockerfile").read_text(encoding="utf-8")
        m = re.search(rf"^COPY .*\b{MODULE_NAME}\.py (\S+)$", dockerfile, re.M)
        s = re.search(rf"^COPY .*\b{OUR_SCRIPT} (\S+)$", dockerfile, re.M)
        if not m or not s:
            c.fail("the node image's Dockerfile copies no module / entry stub")
            return None
        module_path, stub_path, how = m.group(1), s.group(1), "node-image files where its Dockerfile copies them"
        for src, dest in ((image / f"{MODULE_NAME}.py", module_path), (image / OUR_SCRIPT, stub_path)):
            target = root / dest.lstrip("/")
            target.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
            shutil.copyfile(src, target)
            target.chmod(0o755 if src.name == OUR_SCRIPT else 0o644)
        if json.dumps(COMPILE_PROGRAM) not in dockerfile:
            c.fail("the Dockerfile's compile step is not accelplane.discovery_install's COMPILE_PROGRAM")
    else:
        c.fail(f"{stack_dir} has neither node/provision.sh nor node-image/{OUR_SCRIPT}")
        return None
    if stub_path != script_path:
        c.fail(f"the config runs {script_path} but the install puts the entry stub at {stub_path}")
    stub = root / stub_path.lstrip("/")
    module = root / module_path.lstrip("/")
    text = stub.read_text(encoding="utf-8")
    first, _, rest = text.partition("\n")
    interpreter = first[2:].split()[0]
    if not os.access(interpreter, os.X_OK):
        c.note(f"the stub's interpreter {interpreter} is missing here: {python} runs it instead")
        interpreter = python
        first = f"#!{python} -IS"
    module_dir = str(Path(module_path).parent)
    if f"sys.path.append({module_dir!r})" not in rest:
        c.fail(f"the entry stub does not load {module_dir}")
    stub.write_text(first + "\n" + rest.replace(f"sys.path.append({module_dir!r})",
                                                 f"sys.path.append({str(module.parent)!r})"), encoding="utf-8")
    ev = run_cmd([interpreter, "-I", "-S", "-c", COMPILE_PROGRAM, str(module)], deadline)
    c.evidence.append(ev)
    if ev["rc"] != 0:
        c.fail(f"byte-compiling {module_path} failed")
    if c.status == "pass":
        c.summary = f"installed by {how}: stub {stub_path}, module {module_path} (compiled), run by {interpreter}"
    return Installed(root, stub, how)


class StandIns:
    """Stand-in TaskManager JVMs (`STAND_IN`): started, asked for their discovery result, ended."""

    def __init__(self, base: Path, python: str) -> None:
        bindir = base / "jvm"
        bindir.mkdir(mode=0o700)
        self.java = bindir / "java"
        self.java.symlink_to(os.path.realpath(python))
        self.procs: list[subprocess.Popen[str]] = []

    def start(self, cmd: Sequence[str], conf_dir: Path, resource_id: str, env: dict[str, str],
              deadline: Deadline) -> tuple[subprocess.Popen[str], dict[str, Any]]:
        """A live stand-in whose child ran ``cmd``; returns it and the child's evidence."""
        conf_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        argv = [str(self.java), "-I", "-S", "-c", STAND_IN, TASKMANAGER_CLASS, "--configDir", str(conf_dir),
                "-D", f"taskmanager.resource-id={resource_id}"]
        start = time.monotonic()
        p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                             env={**env, "ACCELPLANE_CHECK_CMD": json.dumps(list(cmd))})
        self.procs.append(p)
        assert p.stdout is not None
        ev: dict[str, Any] = {"cmd": f"(child of TaskManager stand-in pid {p.pid}, {resource_id}) {shlex.join(cmd)}"}
        ready, _, _ = select.select([p.stdout], [], [], deadline.timeout(70))
        line = p.stdout.readline() if ready else ""
        try:
            result = json.loads(line)
        except ValueError:
            result = {"rc": None, "stdout": "", "stderr": f"no result from the stand-in: {line!r}"}
        ev.update(rc=result["rc"], stdout=clip(result["stdout"]), stderr=clip(result["stderr"]),
                  seconds=round(time.monotonic() - start, 3))
        return p, ev

    @staticmethod
    def end(p: subprocess.Popen[str]) -> None:
        """Let the stand-in exit (its stdin closes) and reap it: its GPUs' owner is then dead."""
        with suppress(OSError):
            if p.stdin is not None:
                p.stdin.close()
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        if p.stdout is not None:
            p.stdout.close()

    def end_all(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                self.end(p)
            elif p.stdout is not None:
                p.stdout.close()


def host_args(args: Sequence[str], root: Path) -> list[str]:
    """The rendered arguments with every absolute path moved below ``root`` (nothing else changed)."""
    return [str(root / a.lstrip("/")) if a.startswith("/") else a for a in args]


def discovery_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in SCRUBBED_ENV}


def eligible(r: Resource, gpus: list[HostGpu]) -> list[int]:
    """Indexes of this host's GPUs the resource's ``--model`` (if any) accepts, in nvidia-smi order."""
    model = r.model()
    return [g.index for g in gpus if model is None or discovery.model_matches(g.name, model)]


def expected_indexes(r: Resource, gpus: list[HostGpu], amount: int) -> list[int] | None:
    """The indexes GPUDriver should get for ``amount`` GPUs on this host with nothing held (the first
    eligible ones, in nvidia-smi order), or None when the host has too few; MIG-mode GPUs are not
    predicted (None is returned only for too few; a MIG host is checked for the format alone)."""
    ok = eligible(r, gpus)
    return ok[:amount] if len(ok) >= amount else None


def judge(ev: dict[str, Any], want: list[int] | None, mig: bool) -> str | None:
    """What is wrong with one discovery call's result (None: it is what GPUDriver needs)."""
    first = ev["stdout"].split("\n", 1)[0]
    if want is None:
        if ev["rc"] == 1 and not first.strip() and ev["stderr"].strip():
            return None
        return f"expected exit 1 with a reason on stderr and nothing on stdout (too few GPUs), got exit {ev['rc']}"
    if ev["rc"] != 0:
        return f"exit {ev['rc']}: {ev['stderr'].strip()[-300:]}"
    if not re.fullmatch(r"\d+(,\d+)*", first):
        return f"stdout {first!r} is not the comma-separated index list GPUDriver parses"
    got = [int(i) for i in first.split(",")]
    if len(got) != len(want) or len(set(got)) != len(got):
        return f"got indexes {got}, expected {len(want)} distinct"
    if not mig and got != want:
        return f"got indexes {got}, expected {want}"
    return None


def check_discovery(report: Report, build: Path, facts: dict[str, Any] | None, gpus: list[HostGpu],
                    work: Path, deadline: Deadline, python: str, stand_ins: StandIns) -> list[Resource]:
    """Check 2; returns the resources found (for check 3)."""
    resources = rendered_resources(build, facts)
    with report.check("discovery.rendered-configs") as c:
        c.evidence.append({"cmd": f"rendered Flink configs in {build} running {OUR_SCRIPT}",
                           "text": "\n".join(f"{r.label} ({r.platform}): {r.config.relative_to(build)}: amount "
                                             f"{r.amount}, args {' '.join(r.args)}" for r in resources)})
        if not resources:
            c.fail(f"no rendered Flink config in {build} runs {OUR_SCRIPT} (run `make demo` first)")
            return []
        modes = {r.coordination for r in resources}
        c.summary = (f"{len(resources)} resources in {len({(r.stack, r.cluster) for r in resources})} clusters; "
                     f"coordination mode: {sum(r.coordination for r in resources)}, "
                     f"non-coordination: {sum(not r.coordination for r in resources)}")
        if modes != {True, False}:
            c.note("only one of the two modes is rendered")
    if facts is not None:
        with report.check("discovery.build-matches-facts") as c:
            digests = {p.parent.parent.name: discovery_sha(p) for p in build.glob(f"*/node-image/{MODULE_NAME}.py")}
            for provision in build.glob("*/node/provision.sh"):
                m = re.search(r"^readonly SCRIPT_SHA256=(\S+)$", provision.read_text(encoding="utf-8"), re.M)
                digests[f"{provision.parent.parent.name} (provision.sh)"] = m.group(1) if m else "none"
            stale = {s: d for s, d in digests.items() if d != facts["scriptSha256"]}
            if stale:
                c.fail(f"the rendered script of {sorted(stale)} is not the one the facts were written with "
                       "(re-run make demo and --write-facts together)")
            else:
                c.summary = (f"the script every node image and provision.sh of {build} carries is the one the facts "
                             f"were written with (sha256 {facts['scriptSha256'][:16]}…)")
    mig = any(g.mig_mode == "Enabled" for g in gpus)
    installs: dict[str, Installed | None] = {}
    for r in resources:
        if deadline.left() < 60:
            with report.check(f"discovery.{r.label}") as c:
                c.skip("out of time")
            continue
        if r.stack not in installs:
            with report.check(f"discovery.install.{r.stack}") as c:
                root = work / f"host-{r.stack}"
                root.mkdir(mode=0o700)
                installs[r.stack] = installed_script(build / r.stack, root, r.script, deadline, c, python)
        inst = installs[r.stack]
        with report.check(f"discovery.{r.label}") as c:
            if inst is None:
                c.fail(f"the script of stack {r.stack} could not be installed")
                continue
            args = host_args(r.args, inst.root)
            prepare_dirs(args, inst.root)
            for amount in sorted({1, r.amount}):
                cmd = [str(inst.stub), str(amount), *args]
                p, ev = stand_ins.start(cmd, work / "conf" / r.label, f"{r.label}-tm", discovery_env(), deadline)
                stand_ins.end(p)
                c.evidence.append(ev)
                want = expected_indexes(r, gpus, amount)
                wrong = judge(ev, want, mig)
                if wrong:
                    c.fail(f"amount {amount}: {wrong}")
                else:
                    c.note(f"amount {amount}: " + (f"GPUDriver gets {ev['stdout'].strip()!r}" if want is not None
                                                   else "refused loudly: this host has too few "
                                                   + (f"{r.model()} GPUs" if r.model() else "GPUs")))
            if c.status == "pass":
                c.summary = (f"{'coordination' if r.coordination else 'non-coordination'} mode ({r.platform}): "
                             + "; ".join(c.notes))
                c.notes = []
    check_modes(report, resources, installs, gpus, work, deadline, stand_ins)
    return resources


def check_modes(report: Report, resources: list[Resource], installs: dict[str, Installed | None],
                gpus: list[HostGpu], work: Path, deadline: Deadline, stand_ins: StandIns) -> None:
    """Two TaskManagers of one cluster on this host, both alive: without coordination both ask for
    1 GPU and both get the first (Flink's behaviour: the first N visible GPUs); with coordination the
    first takes every eligible GPU and the second, asking for 1, is refused while the first lives."""
    for coordination in (False, True):
        mode = "coordination" if coordination else "non-coordination"
        with report.check(f"discovery.two-taskmanagers.{mode}") as c:
            r = next((x for x in resources if x.coordination == coordination and installs.get(x.stack)
                      and expected_indexes(x, gpus, 1) is not None), None)
            inst = installs.get(r.stack) if r else None
            if r is None or inst is None:
                c.skip(f"no installed {mode} config whose GPU model this host has")
                continue
            args = host_args(r.args, inst.root)
            ok = eligible(r, gpus)
            cmd1 = [str(inst.stub), str(len(ok) if coordination else 1), *args]
            cmd2 = [str(inst.stub), "1", *args]
            first, ev1 = stand_ins.start(cmd1, work / "conf" / f"modes-{r.label}", f"{r.label}-tm1", discovery_env(),
                                         deadline)
            second, ev2 = stand_ins.start(cmd2, work / "conf" / f"modes-{r.label}", f"{r.label}-tm2",
                                          discovery_env(), deadline)
            for p in (first, second):
                stand_ins.end(p)
            c.evidence += [ev1, ev2]
            got = [(ev["rc"], ev["stdout"].strip()) for ev in (ev1, ev2)]
            all_ok, first_ok = ",".join(map(str, ok)), str(ok[0])
            want = [(0, all_ok), (1, "")] if coordination else [(0, first_ok), (0, first_ok)]
            if got != want:
                c.fail(f"{r.label}: two live TaskManagers got {got}, expected {want}")
            else:
                c.summary = (f"{r.label}: " + (f"the second TaskManager is refused while the first holds GPU(s) "
                                               f"{all_ok}" if coordination else f"both TaskManagers get GPU "
                                               f"{first_ok}, as Flink's own script hands them out"))


def discovery_sha(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def prepare_dirs(args: Sequence[str], root: Path) -> None:
    """Create (mode 0700, ours) the directories of the path arguments below ``root``, as
    provision.sh / the node image prepare them on a host (the coordination directory, the textfile
    collector's directory)."""
    for a in args:
        if a.startswith(str(root) + "/"):
            Path(a).parent.mkdir(mode=0o700, parents=True, exist_ok=True)


# ---------------------------------------------------------------------------------------- 3. two clusters


def pick_pair(resources: list[Resource], gpus: list[HostGpu], facts: dict[str, Any] | None) -> list[Resource]:
    """Two host (YARN/standalone) resources in coordination mode whose model this host has, of two
    different clusters, sharing one coordination file: a pair the spec says shares hosts first,
    else any two; one when the render has only one such cluster."""
    def ok(r: Resource) -> bool:
        return r.platform in ("yarn", "standalone") and r.coordination and expected_indexes(r, gpus, 1) is not None

    def covers(a: Resource, b: Resource) -> bool:  # A holding all its GPUs leaves B none
        return set(eligible(b, gpus)) <= set(eligible(a, gpus))

    usable = [r for r in resources if ok(r)]
    for stack, info in ((facts or {}).get("stacks") or {}).items():
        for pair in info.get("sharedHosts", []):
            a = next((r for r in usable if (r.stack, r.cluster) == (stack, pair["first"])), None)
            b = next((r for r in usable if (r.stack, r.cluster) == (stack, pair["second"])), None)
            if a and b and covers(a, b):
                return [a, b]
    for i, a in enumerate(usable):
        for b in usable[i + 1 :]:
            if ((a.stack, a.cluster) != (b.stack, b.cluster) and coordination_file(a) == coordination_file(b)
                    and covers(a, b)):
                return [a, b]
    return usable[:1]


def coordination_file(r: Resource) -> str:
    for i, a in enumerate(r.args[:-1]):
        if a in ("--coordination-file", "--assign-file"):
            return r.args[i + 1]
    return "/var/tmp/flink-gpu-coordination"


def free_check_args(args: Sequence[str]) -> list[str]:
    """What a start script's preflight passes with ``--check-free`` (the rendered args minus what
    only an allocation uses)."""
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("--owner-label", "--metrics-file", "--file-mode"):
            skip = True
            continue
        if a not in ("--enable-coordination-mode", "--privilege", "--enable-coordination"):
            out.append(a)
    return [*out, "--check-free"]


def check_shared_host(report: Report, build: Path, resources: list[Resource], gpus: list[HostGpu],
                      facts: dict[str, Any] | None, work: Path, deadline: Deadline, python: str,
                      stand_ins: StandIns) -> list[Snapshot]:
    """Check 3; returns the metrics files the calls wrote, read right after each step."""
    pair = pick_pair(resources, gpus, facts)
    prom: list[Snapshot] = []
    with report.check("shared-host.setup") as c:
        if not pair:
            c.skip("no YARN/standalone cluster in coordination mode whose GPU model this host has is rendered")
            return prom
        if len(pair) == 1:
            c.note("only one such cluster is rendered: its config serves as both A and B (two TaskManagers)")
            pair = [pair[0], pair[0]]
        host = work / "shared-host"
        host.mkdir(mode=0o700)
        installs = {}
        for r in pair:
            if r.stack not in installs:
                installs[r.stack] = installed_script(build / r.stack, host, r.script, deadline, c, python)
        if any(i is None for i in installs.values()) or c.status == "fail":
            c.fail("the scripts could not be installed on the shared host")
            return prom
        a, b = pair
        c.summary = (f"A = {a.label} ({a.platform}), B = {b.label} ({b.platform}), one coordination file "
                     f"{coordination_file(a)} (below {host})")
        if coordination_file(a) != coordination_file(b):
            c.fail(f"A uses {coordination_file(a)}, B {coordination_file(b)}: they would not see each other")
            return prom
    stub_a, stub_b = (installs[r.stack].stub for r in (a, b))  # type: ignore[union-attr]
    args_a, args_b = host_args(a.args, host), host_args(b.args, host)
    prepare_dirs([*args_a, *args_b], host)
    env = discovery_env()
    coord = host / coordination_file(a).lstrip("/")
    conf_a, conf_b = work / "conf" / f"A-{a.label}", work / "conf" / f"B-{b.label}"
    all_a = [str(i) for i in eligible(a, gpus)]
    first_b = str(eligible(b, gpus)[0])
    want_a = ",".join(all_a)
    owner_a = owner_b = None
    try:
        with report.check("shared-host.a-takes-gpu-0") as c:
            owner_a, ev = stand_ins.start([str(stub_a), str(len(all_a)), *args_a], conf_a, "A-tm", env, deadline)
            c.evidence.append(ev)
            if (ev["rc"], ev["stdout"].strip()) != (0, want_a):
                c.fail(f"A's TaskManager got exit {ev['rc']}, stdout {ev['stdout'].strip()!r} (expected 0, {want_a!r})")
            else:
                c.summary = f"A's TaskManager (pid {owner_a.pid}) got GPU(s) {want_a}, all this host has for it"
            c.evidence.append({"cmd": f"cat {coord}", "text": read_text(coord)})
        with report.check("shared-host.b-refused-while-a-lives") as c:
            owner_b, ev = stand_ins.start([str(stub_b), "1", *args_b], conf_b, "B-tm", env, deadline)
            c.evidence.append(ev)
            stand_ins.end(owner_b)
            if ev["rc"] != 1 or ev["stdout"].strip():
                c.fail(f"B's TaskManager got exit {ev['rc']}, stdout {ev['stdout'].strip()!r} while A holds GPU 0 "
                       "(expected exit 1, nothing on stdout)")
            elif "cannot allocate 1 GPU(s)" not in ev["stderr"] or f"pid {owner_a.pid}" not in ev["stderr"]:
                c.fail("B's refusal does not say it cannot allocate and name A's pid")
            else:
                c.summary = "B's TaskManager is refused (exit 1) naming A's pid: " + last_line(ev["stderr"])
        with report.check("shared-host.b-start-preflight-names-a") as c:
            ev = run_cmd([str(stub_b), "1", *free_check_args(args_b)], deadline, env=env)
            c.evidence.append(ev)
            if ev["rc"] != 1 or f"pid {owner_a.pid}, a Flink TaskManager (A-tm)" not in ev["stderr"]:
                c.fail(f"--check-free for B: exit {ev['rc']}, expected 1 naming A's TaskManager (A-tm)")
            else:
                c.summary = "--check-free (the start scripts' preflight) names the holder: " + last_line(ev["stderr"])
        with report.check("shared-host.start-lock") as c:
            lock = Path(f"{coord}.start-lock")
            holder_cmd = [str(stub_a), "--hold-start-lock", str(lock), "--timeout", "5", "--file-mode", "0660", "--",
                          python, "-I", "-S", "-c",
                          "import os, sys, time; os.fstat(9); print(os.environ['ACCELPLANE_START_LOCK_HELD']);"
                          " sys.stdout.flush(); time.sleep(4)"]
            start = time.monotonic()
            first = subprocess.Popen(holder_cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                     stdin=subprocess.DEVNULL)
            assert first.stdout is not None
            ready, _, _ = select.select([first.stdout], [], [], deadline.timeout(20))
            held = first.stdout.readline().strip() if ready else ""
            second = run_cmd([str(stub_b), "--hold-start-lock", str(lock), "--timeout", "1", "--file-mode", "0660",
                              "--", "true"], deadline, env=env)
            try:
                out, err = first.communicate(timeout=deadline.timeout(20))
            except subprocess.TimeoutExpired:
                first.kill()
                out, err = first.communicate()
            c.evidence.append({"cmd": shlex.join(holder_cmd), "rc": first.returncode, "stdout": held + "\n" + out,
                               "stderr": err, "seconds": round(time.monotonic() - start, 3)})
            c.evidence.append(second)
            if held != str(lock) or first.returncode != 0:
                c.fail(f"the first holder did not run holding the lock (printed {held!r}, exit {first.returncode})")
            if second["rc"] != 3:
                c.fail(f"a second start while the lock is held: exit {second['rc']} (expected 3 after its timeout)")
            if c.status == "pass":
                c.summary = ("the host start lock runs a start script holding it (fd 9); a second start waits its "
                             "timeout and exits 3: " + last_line(second["stderr"]))
        with report.check("shared-host.b-gets-gpu-0-after-a-exits") as c:
            stand_ins.end(owner_a)
            c.note(f"A's TaskManager (pid {owner_a.pid}) exited")
            owner_b, ev = stand_ins.start([str(stub_b), "1", *args_b], conf_b, "B-tm", env, deadline)
            c.evidence.append(ev)
            if (ev["rc"], ev["stdout"].strip()) != (0, first_b):
                c.fail(f"B's TaskManager got exit {ev['rc']}, stdout {ev['stdout'].strip()!r} (expected 0, {first_b!r})")
            else:
                c.summary = f"B's TaskManager (pid {owner_b.pid}) got GPU {first_b} once A's owner was gone"
            c.evidence.append({"cmd": f"cat {coord}", "text": read_text(coord)})
            prom += snapshots(args_b, f"{b.label}-held", expect_gpu0=True)
        with report.check("shared-host.release-hands-gpu-0-back") as c:
            ev = run_cmd([str(stub_b), "1", *args_b, "--release", "--owner-pid", str(owner_b.pid)], deadline, env=env)
            c.evidence.append(ev)
            prom += snapshots(args_b, f"{b.label}-released", expect_gpu0=False)
            owner_a, ev2 = stand_ins.start([str(stub_a), str(len(all_a)), *args_a], conf_a, "A-tm", env, deadline)
            c.evidence.append(ev2)
            if ev["rc"] != 0:
                c.fail(f"--release for B's live TaskManager: exit {ev['rc']}")
            if (ev2["rc"], ev2["stdout"].strip()) != (0, want_a):
                c.fail(f"A after B's release: exit {ev2['rc']}, stdout {ev2['stdout'].strip()!r} (expected {want_a!r})")
            if c.status == "pass":
                c.summary = f"--release freed B's GPU while B lives; A's next TaskManager got GPU(s) {want_a}"
            prom += snapshots(args_a, f"{a.label}-held", expect_gpu0=True)
    finally:
        for p in (owner_a, owner_b):
            if p is not None:
                stand_ins.end(p)
    return prom


def last_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1] if lines else ""


def read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError as e:
        return f"({e})"


@dataclass(frozen=True)
class Snapshot:
    """A metrics file as it was after one step, with the series that step should have left."""

    name: str
    path: Path
    text: str | None
    expect_gpu0: bool


def snapshots(args: Sequence[str], name: str, *, expect_gpu0: bool) -> list[Snapshot]:
    """The ``--metrics-file`` of ``args`` (if any) read now."""
    paths = [Path(args[i + 1]) for i, a in enumerate(args[:-1]) if a == "--metrics-file"]
    return [Snapshot(name, p, read_text(p) if p.is_file() else None, expect_gpu0) for p in paths]


# ---------------------------------------------------------------------------------------- 4. metrics, 5. bench


def check_metrics(report: Report, prom: list[Snapshot], out: Path) -> list[str]:
    """Check 4: write each metrics snapshot into ``out`` (for promtool); the series must show GPU 0
    held after an allocation and no series after the release. Returns the files' names."""
    copied: list[str] = []
    with report.check("metrics.textfile") as c:
        if not prom:
            c.skip("no rendered host cluster in the shared-host check passes --metrics-file")
            return copied
        for snap in prom[:MAX_PROM_FILES]:
            c.evidence.append({"cmd": f"cat {snap.path}  # {snap.name}", "text": snap.text or "(missing)"})
            if snap.text is None:
                c.fail(f"{snap.path} was not written ({snap.name})")
                continue
            name = SAFE_NAME.sub("-", f"metrics-{snap.name}.prom")
            (out / name).write_text(snap.text, encoding="utf-8")
            copied.append(name)
            held = re.search(r'^accelplane_gpu_owner\{.*gpu_index="0".*\} 1$', snap.text, re.M) is not None
            if held != snap.expect_gpu0:
                c.fail(f"{name}: " + ("no accelplane_gpu_owner series for GPU 0" if snap.expect_gpu0
                                      else "GPU 0 still listed after its release"))
        if c.status == "pass":
            c.summary = f"wrote {copied} into {out} (check them with promtool check metrics)"
    return copied


def check_bench(report: Report, runs: int, deadline: Deadline) -> None:
    with report.check("bench.discovery-gpu") as c:
        if runs <= 0:
            c.skip("--bench-runs 0")
            return
        if deadline.left() < 45:
            c.skip(f"only {deadline.left():.0f} s left")
            return
        cmd = [sys.executable, str(REPO_ROOT / "bench" / "bench_discovery_gpu.py"), "--python", "python3",
               "--runs", str(runs)]
        ev = run_cmd(cmd, deadline, cap=deadline.left() - 15, cwd=REPO_ROOT)
        c.evidence.append(ev)
        if ev["rc"] == 2:
            c.skip("the benchmark cannot run here: " + last_line(ev["stderr"]))
        elif ev["rc"] != 0:
            c.fail(f"the benchmark failed (exit {ev['rc']})")
        else:
            c.summary = "see the table in the evidence"


# ---------------------------------------------------------------------------------------- main


def work_dir(build: Path) -> Path:
    """A private directory (mkdtemp: mode 0700, a fresh unguessable name, so nothing another user
    planted is ever used) where programs may be executed: in the temporary directory, else (a
    ``noexec`` /tmp) below ``build``."""
    for parent in (None, build):
        work = Path(tempfile.mkdtemp(prefix="accelplane-gpu-check-", dir=parent))
        probe = work / "exec-probe"
        probe.write_text("#!/bin/sh\nexit 0\n")
        probe.chmod(0o700)
        try:
            ok = subprocess.run([str(probe)], check=False, timeout=10).returncode == 0
        except OSError:
            ok = False
        probe.unlink()
        if ok or parent is not None:
            return work
        shutil.rmtree(work, ignore_errors=True)
    raise AssertionError("unreachable")


def host_facts(python: str) -> dict[str, Any]:
    import platform

    return {"node": platform.node(), "kernel": platform.release(), "python": python,
            "python_version": platform.python_version(), "uid": os.geteuid(), "cpus": os.cpu_count(),
            "visible_env": {k: os.environ[k] for k in SCRUBBED_ENV[:4] if k in os.environ}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--write-facts", type=Path, metavar="PATH",
                    help="write the expectations file (accelplane's tables; needs the project's venv) and exit")
    ap.add_argument("--out", type=Path, help="directory for report.json, check.log and metrics copies")
    ap.add_argument("--build", type=Path, default=REPO_ROOT / "build", help="the rendered stacks (make demo)")
    ap.add_argument("--facts", type=Path, help="the expectations file (default: BUILD/gpu-facts.json)")
    ap.add_argument("--nvml-library", default="libnvidia-ml.so.1", help="NVML for the ctypes name check")
    ap.add_argument("--python", default=sys.executable,
                    help="the interpreter that runs the stand-ins, and the scripts where a stub's is missing "
                         "(default: this one)")
    ap.add_argument("--bench-runs", type=int, default=10, help="samples for bench/bench_discovery_gpu.py (0: skip)")
    ap.add_argument("--budget", type=float, default=150.0, help="seconds the whole check may take")
    ap.add_argument("--checks", default=",".join(GROUPS),
                    help=f"comma-separated groups to run (default: all of {','.join(GROUPS)})")
    args = ap.parse_args(argv)
    if args.write_facts is not None:
        write_facts(args.write_facts)
        print(f"wrote {args.write_facts}")
        return 0
    if args.out is None:
        ap.error("--out is required (or --write-facts)")
    deadline = Deadline(time.monotonic() + args.budget)
    python = os.path.abspath(args.python)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    report = Report(host=host_facts(python))
    facts_path = args.facts or args.build / "gpu-facts.json"
    facts = json.loads(facts_path.read_text(encoding="utf-8")) if facts_path.is_file() else None
    report.host["facts"] = str(facts_path) if facts else f"{facts_path} missing: table checks skipped"
    groups = set(args.checks.split(","))
    if groups - set(GROUPS):
        ap.error(f"--checks: unknown {sorted(groups - set(GROUPS))} (groups: {','.join(GROUPS)})")
    work = work_dir(args.build)
    report.host["work_dir"] = str(work)
    stand_ins = StandIns(work, python)

    def write() -> None:  # after every group: a run cut short still leaves what it found
        (out / "report.json").write_text(json.dumps(report.to_json(), indent=1) + "\n", encoding="utf-8")
        (out / "check.log").write_text(report.log_text(), encoding="utf-8")

    gpus: list[HostGpu] = []
    resources: list[Resource] = []
    try:
        with report.check("run.facts") as c:  # a surprise outside the checks fails this one only
            c.summary = "the facts checks ran to the end"
            gpus = check_facts(report, facts, deadline, args.nvml_library, python)
        write()
        if groups & {"discovery", "shared-host"}:
            with report.check("run.discovery") as c:
                c.summary = "the discovery checks ran to the end"
                resources = check_discovery(report, args.build, facts, gpus, work, deadline, python, stand_ins)
            write()
        if "shared-host" in groups:
            with report.check("run.shared-host") as c:
                c.summary = "the shared-host and metrics checks ran to the end"
                prom = check_shared_host(report, args.build, resources, gpus, facts, work, deadline, python,
                                         stand_ins)
                check_metrics(report, prom, out)
            write()
    finally:
        stand_ins.end_all()
        shutil.rmtree(work, ignore_errors=True)
    if "bench" in groups:
        check_bench(report, args.bench_runs, deadline)
    write()
    counts = report.counts()
    print(f"gpu_host_check: {counts} -> {out / 'report.json'}, {out / 'check.log'}")
    for c in report.checks:
        print(f"{c.status.upper():8} {c.name}: {c.summary}")
    return 1 if counts["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
