"""The test suite's one fake ``nvidia-smi``, for harnesses that need it in a directory of their own.

The fake itself is ``tests/discovery/fakes/nvidia-smi`` (a POSIX ``sh`` script; its header lists
every invocation and ``FAKE_*`` variable it models: hosts, containers given some GPUs or MIG
devices, MIG, broken drivers). The discovery tests put that directory on ``PATH``; the real-Flink
harness calls :func:`install_fake_nvidia_smi`, which copies the same script into a directory and
writes ``nvidia-smi.defaults`` next to it: the GPU count and model the copy reports unless the
caller's ``FAKE_GPU_COUNT`` / ``FAKE_GPU_NAME`` say otherwise (the Flink daemons' environment is
not always the test's).
"""

from __future__ import annotations

import shutil
import stat
from pathlib import Path

FAKE_NVIDIA_SMI = Path(__file__).resolve().parent.parent / "discovery" / "fakes" / "nvidia-smi"
DEFAULT_GPU_NAME = "NVIDIA A100-SXM4-80GB"


def fake_gpu_uuid(index: int) -> str:
    """The UUID the fake reports for host GPU ``index``."""
    return f"GPU-{(index * 2654435761 + 12345) % 2**32:08x}-1111-2222-3333-{index:012x}"


def fake_mig_uuid(gpu: int, device: int) -> str:
    """The UUID the fake reports for MIG device ``device`` of host GPU ``gpu``."""
    return f"MIG-{(gpu * 2654435761 + 12345) % 2**32:08x}-4444-5555-{gpu:04x}-{device:012x}"


def fake_gpu_bus_id(index: int) -> str:
    """The PCI bus id the fake reports for host GPU ``index``."""
    return f"00000000:{0x10 + index:02X}:00.0"


def install_fake_nvidia_smi(directory: Path, count: int, name: str = DEFAULT_GPU_NAME) -> Path:
    """Copy the fake ``nvidia-smi`` into ``directory`` and return its path.

    ``count`` GPUs (indexes ``0..count-1``) and the model ``name`` become the copy's defaults;
    ``FAKE_GPU_COUNT`` / ``FAKE_GPU_NAME`` in the caller's environment still override them.
    Prepend ``directory`` to ``PATH`` of whatever should see the fake.
    """
    if count < 0:
        raise ValueError(f"count must be >= 0, got {count}")
    if any(c in name for c in "\"'\\$`\n"):
        raise ValueError(f"unsupported characters in GPU name: {name!r}")
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "nvidia-smi"
    shutil.copyfile(FAKE_NVIDIA_SMI, path)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    (directory / "nvidia-smi.defaults").write_text(
        f': "${{FAKE_GPU_COUNT:={count}}}"\n: "${{FAKE_GPU_NAME:={name}}}"\n', encoding="utf-8"
    )
    return path
