"""The device check bench/bench_discovery_gpu.py (the NVML path's cost per call, where a GPU is lent)
runs here against the fakes: the fake nvidia-smi, and a wheel holding the stub pynvml. What it
measures on this machine means nothing; that it installs, verifies and measures what it says does.
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.support.discovery_runs import fake_env
from tests.support.paths import REPO_ROOT

from .test_installed_entry import FAKE_PYNVML, venv  # noqa: F401  (venv: a fixture)

BENCH = REPO_ROOT / "bench" / "bench_discovery_gpu.py"


def fake_wheel(path: Path, module: str | None = FAKE_PYNVML) -> Path:
    """A wheel laid out as nvidia-ml-py's (pynvml.py at the top), holding ``module`` if given."""
    with zipfile.ZipFile(path, "w") as wheel:
        if module is not None:
            wheel.writestr("pynvml.py", module)
        wheel.writestr("nvidia_ml_py-0.0.0.dist-info/METADATA", "Name: nvidia-ml-py\nVersion: 0.0.0\n")
    return path


def bench(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(BENCH), "--base-python", sys.executable, *args],
                          env=env, capture_output=True, text=True, timeout=300, check=False)


def test_measures_ours_through_nvml_and_nvidia_smi_next_to_their_floors(tmp_path: Path) -> None:
    r = bench("--pynvml-wheel", str(fake_wheel(tmp_path / "nvidia_ml_py-0.0.0-py3-none-any.whl")), "--runs", "2",
              env=fake_env(4))
    assert r.returncode == 0, r.stderr
    assert "on real GPUs (4× NVIDIA H100 80GB HBM3); 2 samples each" in r.stdout
    rows = [line for line in r.stdout.splitlines() if line.startswith("| ours through")]
    assert [row.split(" | ")[0] for row in rows] == [
        "| ours through NVML (entry stub, precompiled module)",
        "| ours through nvidia-smi (entry stub, precompiled module)",
    ]
    assert "python3 -I + the NVML query" in rows[0]
    assert "python3 -I -S -c pass + the nvidia-smi query" in rows[1]
    assert all(row.endswith("× |") for row in rows)


def test_refuses_an_interpreter_without_pynvml(tmp_path: Path) -> None:
    """Our script would answer through nvidia-smi then: the NVML row would measure the fallback."""
    r = bench("--pynvml-wheel", str(fake_wheel(tmp_path / "empty.whl", None)), "--runs", "1", env=fake_env(4))
    assert r.returncode == 2
    assert "cannot run here: our script found no GPU through NVML with " in r.stderr
    assert "(nvidia-ml-py is not installed for it: use --pynvml-wheel)" in r.stderr


def test_refuses_a_machine_without_nvidia_smi(tmp_path: Path) -> None:
    env = fake_env(4)
    env["PATH"] = "/usr/bin:/bin"
    r = bench("--pynvml-wheel", str(fake_wheel(tmp_path / "w.whl")), "--runs", "1", env=env)
    assert (r.returncode, r.stderr.strip()) == (
        2, "bench_discovery_gpu: cannot run here: nvidia-smi is not on PATH: this is not an NVIDIA GPU machine"
    )


def test_puts_flinks_script_next_to_ours_when_given(tmp_path: Path, flink_sh: Path) -> None:
    r = bench("--pynvml-wheel", str(fake_wheel(tmp_path / "w.whl")), "--runs", "1", "--flink-script", str(flink_sh),
              env=fake_env(4))
    assert r.returncode == 0, r.stderr
    row = next(line for line in r.stdout.splitlines() if line.startswith("| Flink's script"))
    assert "| ours, NVML |" in row


def test_a_bare_python_name_is_resolved_on_path(tmp_path: Path, venv: Path) -> None:  # noqa: F811
    """Issue 42: ``--python python3`` (as the usage suggests) wrote the entry stub's ``#!python3``
    line unresolved, which no kernel runs; the name is looked up on PATH first."""
    lib = venv / "lib" / "python{}.{}".format(*sys.version_info[:2]) / "site-packages"
    (lib / "pynvml.py").write_text(FAKE_PYNVML)
    try:
        env = fake_env(2)
        env["PATH"] = f"{venv / 'bin'}:{env['PATH']}"
        r = bench("--python", "python3", "--runs", "1", env=env)
        assert r.returncode == 0, r.stderr
        assert f"({venv / 'bin' / 'python3'})" in r.stdout
    finally:
        (lib / "pynvml.py").unlink()


def test_an_unknown_python_name_cannot_run(tmp_path: Path) -> None:
    r = bench("--python", "no-such-python3", "--runs", "1", env=fake_env(2))
    assert (r.returncode, r.stderr.strip()) == (
        2, "bench_discovery_gpu: cannot run here: --python 'no-such-python3' is not an executable (nor one on PATH)"
    )


def test_make_bench_skips_the_gpu_benchmark_without_a_gpu_and_says_why() -> None:
    """Issue 42: `make bench` (bench.run) names the GPU benchmark and why it did not run here."""
    from bench.run import bench_discovery_gpu

    assert bench_discovery_gpu(quick=True, path="/nonexistent") == (
        "GPU discovery on real GPUs (bench/bench_discovery_gpu.py): skipped, no nvidia-smi on PATH: this "
        "machine has no NVIDIA GPU (docs/benchmarks.md has the figures of a real H100)"
    )


def test_make_bench_skips_the_gpu_benchmark_where_the_driver_does_not_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    from bench.run import bench_discovery_gpu

    monkeypatch.setenv("FAKE_NVIDIA_SMI_FAIL", "1")
    text = bench_discovery_gpu(quick=True, path=fake_env(2)["PATH"])
    assert text.startswith("GPU discovery on real GPUs (bench/bench_discovery_gpu.py): skipped, ")
    assert "\n" not in text
