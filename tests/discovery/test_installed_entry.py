"""The script as nodes install it: the module byte-compiled by ``COMPILE_PROGRAM`` and run by the
entry stub (``python3 -I -S``). It answers like the script run directly, loads the compiled
bytecode, never writes bytecode itself, finds pynvml in its interpreter's venv only when it is
there, and the compile step refuses directories other users could write."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from accelplane.discovery import gpu_discovery as gd
from accelplane.discovery_install import COMPILE_PROGRAM, MODULE_NAME, entry_stub

from tests.support.discovery_runs import PYTHON_CMD, SCRIPT, gpu_uuid, run

FAKE_PYNVML = f"""\
NVML_DEVICE_MIG_ENABLE = 1
def nvmlInit(): pass
def nvmlShutdown(): pass
def nvmlDeviceGetCount(): return 2
def nvmlDeviceGetHandleByIndex(i): return i
def nvmlDeviceGetIndex(h): return h
def nvmlDeviceGetUUID(h): return ["{gpu_uuid(0)}", "{gpu_uuid(1)}"][h]
def nvmlDeviceGetName(h): return "NVIDIA A100-SXM4-80GB"
class _Pci:
    def __init__(self, h): self.busId = "00000000:%02X:00.0" % (7 + h)
def nvmlDeviceGetPciInfo(h): return _Pci(h)
def nvmlDeviceGetMigMode(h): return (0, 0)
"""


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv (no pip, no pynvml) of the interpreter running the tests: a node's python3."""
    path = tmp_path_factory.mktemp("venv") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True, capture_output=True)
    return path


def install(root: Path, python: Path, compiled: bool = True) -> Path:
    """Install like node provisioning below ``root``: module (0644, directory 0755), compiled by
    ``python`` unless told not to, and the entry stub; returns the stub."""
    module_dir = root / "discovery"
    module_dir.mkdir(mode=0o755, parents=True)
    module_dir.chmod(0o755)
    module = module_dir / f"{MODULE_NAME}.py"
    module.write_bytes(SCRIPT.read_bytes())
    module.chmod(0o644)
    if compiled:
        out = subprocess.run([str(python), "-I", "-S", "-c", COMPILE_PROGRAM, str(module)],
                             capture_output=True, text=True, check=True)
        assert out.stdout.strip().startswith(str(module_dir / "__pycache__" / MODULE_NAME))
    stub = root / "accelplane-gpu-discovery"
    stub.write_text(entry_stub(str(python), str(module_dir)))
    stub.chmod(0o755)
    return stub


@pytest.mark.parametrize("args", [["1"], ["3"], ["2", "--format", "json"], ["0"], ["9"], ["--help"], ["x"]],
                         ids=["one", "three", "json", "zero", "too-many", "help", "usage-error"])
def test_installed_answers_like_the_direct_script(tmp_path: Path, venv: Path, env: Callable[..., dict[str, str]],
                                                  args: list[str]) -> None:
    stub = install(tmp_path, venv / "bin" / "python3")
    e = env(4)
    installed, direct = run([str(stub), *args], e), run([*PYTHON_CMD, str(SCRIPT), *args], e)
    assert (installed.returncode, installed.stdout, installed.stderr) == (direct.returncode, direct.stdout, direct.stderr)


def test_coordination_through_the_installed_stub(tmp_path: Path, venv: Path,
                                                 env: Callable[..., dict[str, str]]) -> None:
    stub = install(tmp_path / "inst", venv / "bin" / "python3")
    coord = tmp_path / "coord" / "file"
    coord.parent.mkdir()
    owners = [subprocess.Popen(["sleep", "60"]) for _ in range(2)]
    try:
        got = [run([str(stub), "2", "--enable-coordination-mode", "--coordination-file", str(coord),
                    "--owner-pid", str(o.pid)], env(4)) for o in owners]
    finally:
        for o in owners:
            o.kill()
            o.wait()
    assert [(r.returncode, r.stdout) for r in got] == [(0, "0,1\n"), (0, "2,3\n")], [r.stderr for r in got]


def test_the_stub_loads_the_compiled_bytecode(tmp_path: Path, venv: Path, env: Callable[..., dict[str, str]]) -> None:
    stub = install(tmp_path, venv / "bin" / "python3")
    r = run([str(venv / "bin" / "python3"), "-I", "-S", "-v", str(stub), "1"], env(4))
    assert r.stdout == "0\n"
    assert f"code object from '{tmp_path}/discovery/__pycache__/{MODULE_NAME}." in r.stderr


def test_the_stub_never_writes_bytecode(tmp_path: Path, venv: Path, env: Callable[..., dict[str, str]]) -> None:
    """Not compiled at install time (provisioning below --root): the stub still works, compiling
    in memory, and leaves no cache behind, whoever runs it (here possibly root)."""
    stub = install(tmp_path, venv / "bin" / "python3", compiled=False)
    assert run([str(stub), "2"], env(4)).stdout == "0,1\n"
    assert not (tmp_path / "discovery" / "__pycache__").exists()


def test_pynvml_in_the_interpreters_venv_is_found_without_site(tmp_path: Path, venv: Path,
                                                               env: Callable[..., dict[str, str]]) -> None:
    """The node image's case: nvidia-ml-py in the venv whose python3 runs the stub (-S: no site).
    The stub loads site because pynvml is there; the direct script under -S does not look."""
    lib = venv / "lib" / "python{}.{}".format(*sys.version_info[:2]) / "site-packages"
    (lib / "pynvml.py").write_text(FAKE_PYNVML)
    try:
        stub = install(tmp_path, venv / "bin" / "python3")
        r = run([str(stub), "2", "--format", "json"], {**env(4), "FAKE_NVIDIA_SMI_FAIL": "1"})
        assert r.returncode == 0, r.stderr
        doc = json.loads(r.stdout)
        assert doc["backend"] == "nvml" and [g["uuid"] for g in doc["gpus"]] == [gpu_uuid(0), gpu_uuid(1)]
        direct = run([str(venv / "bin" / "python3"), "-S", str(SCRIPT), "2", "--format", "json",
                      "--vendor", "nvidia"], {**env(4), "FAKE_NVIDIA_SMI_FAIL": "1"})
        assert direct.returncode == 4 and "nvml: pynvml not importable" in direct.stderr
    finally:
        (lib / "pynvml.py").unlink()


def test_an_absent_library_backend_starts_no_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """No pynvml / amdsmi anywhere: the backends give up before the thread and stdout muffling."""
    monkeypatch.setattr(sys, "meta_path", [f for f in sys.meta_path if type(f).__name__ in
                                           ("BuiltinImporter", "FrozenImporter")])
    for name in ("pynvml", "amdsmi"):
        monkeypatch.delitem(sys.modules, name, raising=False)

    def no_thread(*_: object) -> None:
        raise AssertionError("a thread was started")

    monkeypatch.setattr(gd, "_bounded_call", no_thread)
    with pytest.raises(gd.BackendUnavailable, match=r"pynvml not importable \(No module named 'pynvml'\)"):
        gd.inventory_nvml(gd.Log())
    with pytest.raises(gd.BackendUnavailable, match=r"amdsmi not importable"):
        gd.inventory_amdsmi(gd.Log())


def test_compile_program_is_idempotent_and_refuses_writable_directories(tmp_path: Path) -> None:
    module_dir = tmp_path / "discovery"
    module_dir.mkdir(mode=0o755)
    module_dir.chmod(0o755)
    module = module_dir / f"{MODULE_NAME}.py"
    module.write_bytes(SCRIPT.read_bytes())

    def compile_() -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-I", "-S", "-c", COMPILE_PROGRAM, str(module)],
                              capture_output=True, text=True, check=False)

    first = compile_()
    assert first.returncode == 0, first.stderr
    written, marker = first.stdout.splitlines()  # the .pyc, then the marker of the source compiled
    pyc = Path(written)
    assert pyc.suffix == ".pyc"
    digest = hashlib.sha256(module.read_bytes()).hexdigest()
    assert marker == str(pyc.parent / f"{MODULE_NAME}.source-{digest}") and Path(marker).read_bytes() == b""
    data = pyc.read_bytes()
    assert int.from_bytes(data[4:8], "little") == 0b11  # checked-hash: valid whatever the mtimes
    assert (compile_().returncode, compile_().stdout) == (0, "")  # up to date: nothing written
    assert pyc.read_bytes() == data
    module.write_text(module.read_text() + "# changed\n")
    again = compile_().stdout.splitlines()  # stale: compiled again, the old source's marker replaced
    assert again[0] == str(pyc) and again[1] != marker and not Path(marker).exists()
    assert sorted(p.name for p in pyc.parent.glob("*.source-*")) == [Path(again[1]).name]
    for writable in (module_dir, pyc.parent):
        writable.chmod(0o775)
        refused = compile_()
        assert refused.returncode != 0 and "refusing to write bytecode" in refused.stderr
        writable.chmod(0o755)
    if os.geteuid() == 0:
        os.chown(pyc.parent, 4321, 4321)
        assert "refusing to write bytecode" in compile_().stderr
