"""Shared pieces of the GPU task slot tests: a multi-model standalone spec and a fake nvidia-smi
that reports a given list of GPU models (one "host" each)."""

from __future__ import annotations

import os
import stat
import textwrap
from pathlib import Path

from tests.support.render import files_for as render_files

A100 = "NVIDIA A100-SXM4-80GB"
T4 = "Tesla T4"
A100_RESOURCE = "gpu-nvidiaa100sxm480gb"
T4_RESOURCE = "gpu-teslat4"
HOST_A100 = "gpu-a100-01.test.internal"
HOST_T4 = "gpu-t4-01.test.internal"
HOST_MIX = "gpu-mix-01.test.internal"
# GPU models of each host, in nvidia-smi index order.
HOST_GPUS = {HOST_A100: [A100, A100], HOST_T4: [T4, T4], HOST_MIX: [A100, A100, T4, T4]}


def multimodel_spec(tmp: Path, *, install_dir: Path, coordination_file: Path, memory: str = "1280Mi") -> Path:
    """A standalone spec: three hosts (A100, T4, both), one TaskManager each with 2 GPUs per model,
    and three slot groups (CPU-only default, embed on A100, detect on T4). Discovery is installed
    under ``install_dir`` so the rendered config names a real script path."""
    spec = tmp / "multimodel.yaml"
    spec.write_text(
        textwrap.dedent(
            f"""\
            cluster: {{name: slots-test, platforms: [standalone]}}
            discovery: {{installDir: {install_dir}, coordinationFile: {coordination_file}}}
            nodePools:
              - name: a100
                platform: standalone
                nodes: 2
                hosts: [{HOST_A100}, {HOST_MIX}]
                gpu: {{vendor: nvidia, model: {A100}, perNode: 2}}
              - name: t4
                platform: standalone
                nodes: 2
                hosts: [{HOST_T4}, {HOST_MIX}]
                gpu: {{vendor: nvidia, model: {T4}, perNode: 2}}
            flink:
              clusters:
                - name: vision
                  target: standalone
                  mode: session
                  version: "1.20"
                  jobManager: {{cpu: 1, memory: {memory}}}
                  taskManager: {{replicas: 3, slots: 4, cpu: 4, memory: {memory}, gpu: {{amount: 2}}}}
                  slotGroups:
                    - {{name: default, slots: 1, cpu: 0.5, taskHeap: 16Mi}}
                    - {{name: embed, slots: 4, cpu: 0.5, taskHeap: 16Mi, gpu: 1, gpuModel: {A100}}}
                    - {{name: detect, slots: 2, cpu: 0.5, taskHeap: 16Mi, gpu: 1, gpuModel: {T4}}}
            """
        ),
        encoding="utf-8",
    )
    return spec


def write_rendered(spec: Path, out: Path) -> dict[str, Path]:
    """Render ``spec`` into ``out``; relative path → written file."""
    written = {}
    for rel, (text, mode) in render_files(spec).items():
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        path.chmod(mode)
        written[rel] = path
    return written


FAKE_SMI = """#!/usr/bin/env python3
# Fake nvidia-smi for tests/gpu_slots (test use only): GPU models from $FAKE_GPU_MODELS
# (';'-separated, index order), UUIDs unique per $FAKE_GPU_HOST; exits $FAKE_NVIDIA_SMI_FAIL if set.
import os, sys
if os.environ.get("FAKE_NVIDIA_SMI_FAIL"):
    sys.stderr.write("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\\n")
    sys.exit(9)
models = [m for m in os.environ.get("FAKE_GPU_MODELS", "").split(";") if m]
host = int(os.environ.get("FAKE_GPU_HOST", "0"))
query = next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--query-gpu=")), None)
if query is None:
    print("NVIDIA-SMI fake")
    sys.exit(0)
values = {
    "index": lambda i, m: str(i),
    "uuid": lambda i, m: "GPU-%08d-0000-0000-0000-%012d" % (host, i),
    "pci.bus_id": lambda i, m: "00000000:%02X:00.0" % (i + 1),
    "mig.mode.current": lambda i, m: "[N/A]",
    "name": lambda i, m: m,
}
fields = query.split(",")
for f in fields:
    if f not in values:
        print('Field "%s" is not a valid field to query.' % f)
        sys.exit(2)
for i, m in enumerate(models):
    print(", ".join(values[f](i, m) for f in fields))
"""


def install_fake_smi(directory: Path) -> Path:
    """Write the fake ``nvidia-smi`` into ``directory``; returns the directory (put it first on PATH)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "nvidia-smi"
    path.write_text(FAKE_SMI, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return directory


def host_env(fake_dir: Path, host: str) -> dict[str, str]:
    """Environment that makes the fake nvidia-smi report ``host``'s GPUs."""
    return {
        "PATH": f"{fake_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "FAKE_GPU_MODELS": ";".join(HOST_GPUS[host]),
        "FAKE_GPU_HOST": str(sorted(HOST_GPUS).index(host) + 1),
    }
