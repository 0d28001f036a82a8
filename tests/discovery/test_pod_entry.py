"""The pods' entry stub (the discovery ConfigMap's `CONFIGMAP_KEY`) picks the module's bytecode.

Pods mount the ConfigMap's module over the node image's copy, whose ``__pycache__`` holds the
checked-hash ``.pyc`` the image's build wrote (`COMPILE_PROGRAM`) and a marker named after the
sha256 of the script it compiled (`compiled_marker`). Laid out here as a pod sees it (the stub's
two fixed directories moved under a temporary directory, ``python3`` on PATH the interpreter that
compiled the image's bytecode), the stub

* runs the image's bytecode exactly when the image's build compiled the script the ConfigMap
  carries, in every call of the pod (the preflight's first one too), and writes nothing; Python
  validates that checked-hash bytecode against the mounted script as it loads it, so bytecode
  replaced after the build never runs;
* otherwise (an image built with another script, or one that is not accelplane's) consults no
  bytecode beside the module -- neither the image's of another script nor an unchecked-hash or
  timestamp ``.pyc`` that Python's own import would run, nor another interpreter's -- and runs
  the mounted script, compiled once into the pod's ``emptyDir`` cache and loaded from there by
  later calls.

The image's own files are trusted as much as its ``python3`` (whoever writes them could replace
the interpreter). Import tracing (``python3 -v``) says which code object each call loaded. No
timing here: the per-call cost of each path is in bench/bench_discovery.py.
"""

from __future__ import annotations

import marshal
import os
import py_compile
import subprocess
import sys
from dataclasses import dataclass
from importlib.util import MAGIC_NUMBER, cache_from_source, source_hash
from pathlib import Path

import pytest
from accelplane.discovery_install import (
    COMPILE_PROGRAM,
    CONFIGMAP_KEY,
    MODULE_KEY,
    MODULE_NAME,
    compiled_marker,
    configmap_data,
    pod_entry_stub,
)

from tests.support.discovery_runs import fake_env

IMAGE_CHANGE = '''
_accelplane_console_main = console_main


def console_main() -> None:
    print("run from the image's script", file=sys.stderr)
    _accelplane_console_main()
'''
"""Appended to the script an image was built with: another script, whose calls say so on stderr."""

FOREIGN = """import sys
def console_main():
    print("FOREIGN BYTECODE RAN")
    sys.exit(0)
print("FOREIGN BYTECODE RAN")
"""
"""Source of the bytecode planted where the image's should be: it must never run."""


@dataclass
class Pod:
    """A pod's discovery layout below a temporary directory."""

    stub: Path
    module: Path
    cache: Path
    python: Path
    trace: dict[str, str]
    marker: str

    @property
    def image_pyc(self) -> Path:
        """Where the node image's build writes the module's bytecode (beside the image's copy)."""
        return Path(cache_from_source(str(self.module)))

    def call(self, *args: str, trace: bool = True) -> subprocess.CompletedProcess[str]:
        """One discovery call (Flink's GPUDriver or the preflight running the stub)."""
        env = {**fake_env(4), "PATH": f"{self.python.parent}{os.pathsep}{fake_env(4)['PATH']}",
               **(self.trace if trace else {})}
        return subprocess.run([str(self.stub), *args], env=env, capture_output=True, text=True, timeout=60,
                              check=False)

    def cached(self) -> list[Path]:
        """The module's bytecode in the pod's cache."""
        return sorted(p for p in self.cache.rglob("*.pyc") if p.name.startswith(f"{MODULE_NAME}."))


def _pod(root: Path, *, image_script: str | None, configmap_script: str) -> Pod:
    """The ConfigMap's stub and module (``configmap_script``) as a pod mounts them, over an image
    whose build compiled ``image_script`` beside the module path with the pod's ``python3`` (None:
    an image without our module, e.g. a plain ``python:3`` image)."""
    bin_dir = root / "bin"
    bin_dir.mkdir()
    python = bin_dir / "python3"  # the image's python3 on PATH; -v on request (import tracing)
    python.write_text(f'#!/bin/sh\nexec {sys.executable} ${{ACCELPLANE_TEST_TRACE:+-v}} "$@"\n')
    python.chmod(0o755)
    module_dir, cache = root / "opt" / "discovery", root / "opt" / "bytecode"
    module_dir.mkdir(parents=True)
    cache.mkdir()
    module = module_dir / MODULE_KEY
    if image_script is not None:  # the node image's build: its copy, compiled by its python3
        module.write_text(image_script)
        subprocess.run([str(python), "-I", "-S", "-c", COMPILE_PROGRAM, str(module)], check=True, capture_output=True)
    module.write_text(configmap_script)  # the ConfigMap's copy, mounted over the image's
    module.chmod(0o444)
    stub = root / "accelplane-gpu-discovery"
    rendered = configmap_data()[CONFIGMAP_KEY]
    assert rendered == pod_entry_stub(), "the ConfigMap carries the stub tested here (paths moved)"
    stub.write_text(pod_entry_stub(str(module_dir), str(cache)))
    stub.chmod(0o555)
    return Pod(stub, module, cache, python, {"ACCELPLANE_TEST_TRACE": "1"}, compiled_marker(str(module_dir)))


SCRIPT_TEXT = configmap_data()[MODULE_KEY]


def loaded_from(proc: subprocess.CompletedProcess[str], pyc: Path) -> bool:
    return f"code object from '{pyc}'" in proc.stderr


def compiled_from_source(proc: subprocess.CompletedProcess[str], module: Path) -> bool:
    return f"code object from {module}\n" in proc.stderr


def test_the_image_bytecode_serves_every_call_when_the_configmap_carries_its_script(tmp_path: Path) -> None:
    pod = _pod(tmp_path, image_script=SCRIPT_TEXT, configmap_script=SCRIPT_TEXT)
    assert pod.image_pyc.is_file()
    image_pyc = pod.image_pyc.read_bytes()
    for call in ("preflight", "taskmanager"):  # a pod's first call and a later one
        proc = pod.call("2", "--isolated-devices")
        assert (proc.returncode, proc.stdout) == (0, "0,1\n"), (call, proc.stderr)
        assert loaded_from(proc, pod.image_pyc), call
        assert not compiled_from_source(proc, pod.module), call
        assert pod.cached() == [] and not any(pod.cache.iterdir()), "nothing written into the pod's cache"
    assert pod.image_pyc.read_bytes() == image_pyc


def test_another_script_in_the_configmap_is_not_run_from_the_image_bytecode(tmp_path: Path) -> None:
    """The image was built with another script (an older accelplane) than the ConfigMap carries
    (stub and module are rendered together): the image's marker names the other script, so the
    ConfigMap's script runs, compiled once into the pod's cache, never the image's bytecode."""
    pod = _pod(tmp_path, image_script=SCRIPT_TEXT + IMAGE_CHANGE, configmap_script=SCRIPT_TEXT)
    assert list(pod.image_pyc.parent.glob("*.source-*")) and not Path(pod.marker).exists()
    first = pod.call("1")
    assert (first.returncode, first.stdout) == (0, "0\n"), first.stderr
    assert "run from the image's script" not in first.stderr
    assert not loaded_from(first, pod.image_pyc)
    assert compiled_from_source(first, pod.module), "the first call compiles the mounted script"
    (pyc,) = pod.cached()
    later = pod.call("1")
    assert (later.returncode, later.stdout) == (0, "0\n"), later.stderr
    assert "run from the image's script" not in later.stderr
    assert loaded_from(later, pyc) and not loaded_from(later, pod.image_pyc)
    assert not compiled_from_source(later, pod.module)


def test_an_image_bytecode_replaced_after_the_build_is_validated_by_python(tmp_path: Path) -> None:
    """The image's marker names this script but its ``.pyc`` was replaced by the checked-hash
    bytecode of another script: Python checks the hash against the mounted script as it loads it
    and compiles the mounted script instead (in memory: ``-B``); the other bytecode never runs."""
    pod = _pod(tmp_path, image_script=SCRIPT_TEXT, configmap_script=SCRIPT_TEXT)
    assert Path(pod.marker).exists()
    other = pod.module.parent / "other.py"
    other.write_text(FOREIGN)
    pod.image_pyc.chmod(0o644)
    py_compile.compile(str(other), cfile=str(pod.image_pyc), doraise=True,
                       invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)
    proc = pod.call("2")
    assert (proc.returncode, proc.stdout) == (0, "0,1\n"), proc.stderr
    assert "FOREIGN BYTECODE RAN" not in proc.stdout
    assert compiled_from_source(proc, pod.module)
    assert pod.cached() == []


def _plant(pod: Pod, kind: str) -> None:
    """Put bytecode that is not the image's of the mounted script where the image's would be."""
    pyc = pod.image_pyc
    pyc.parent.mkdir(exist_ok=True)
    source = pod.module.read_bytes()
    foreign = marshal.dumps(compile(FOREIGN, str(pod.module), "exec", dont_inherit=True))
    st = pod.module.stat()
    headers = {
        # Python runs an unchecked-hash .pyc without looking at the source
        "unchecked-hash": MAGIC_NUMBER + b"\x01\x00\x00\x00" + source_hash(FOREIGN.encode()),
        # ... and a timestamp .pyc whose recorded mtime and size match the source's
        "timestamp": MAGIC_NUMBER + b"\x00\x00\x00\x00" + (int(st.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little")
        + (st.st_size & 0xFFFFFFFF).to_bytes(4, "little"),
        # another interpreter's bytecode, with the right hash of the mounted script
        "other-interpreter": (int.from_bytes(MAGIC_NUMBER[:2], "little") + 1).to_bytes(2, "little")
        + MAGIC_NUMBER[2:] + b"\x03\x00\x00\x00" + source_hash(source),
    }
    if kind == "directory":
        pyc.mkdir()
    elif kind == "older-image":  # the image's own checked-hash .pyc, of another script
        (pod.module.parent / "older.py").write_text(FOREIGN)
        py_compile.compile(str(pod.module.parent / "older.py"), cfile=str(pyc), doraise=True,
                           invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)
    else:
        pyc.write_bytes(headers[kind] + foreign)


@pytest.mark.parametrize("kind", ["unchecked-hash", "timestamp", "older-image", "other-interpreter", "directory"])
def test_bytecode_that_is_not_the_image_bytecode_of_the_mounted_script_never_runs(tmp_path: Path, kind: str) -> None:
    pod = _pod(tmp_path, image_script=None, configmap_script=SCRIPT_TEXT)
    _plant(pod, kind)
    if kind in ("unchecked-hash", "timestamp"):
        # what a plain import would do with it: run it (the stub's header check is what refuses it)
        plain = subprocess.run(
            [str(pod.python), "-I", "-S", "-c", f"import sys; sys.path.append({str(pod.module.parent)!r}); "
             f"import {MODULE_NAME}"], capture_output=True, text=True, check=False)
        assert "FOREIGN BYTECODE RAN" in plain.stdout
    for _ in range(2):
        proc = pod.call("2")
        assert (proc.returncode, proc.stdout) == (0, "0,1\n"), proc.stderr
        assert not loaded_from(proc, pod.image_pyc)
    (pyc,) = pod.cached()  # the mounted script, cached by the first call, loaded by the second
    assert loaded_from(proc, pyc)


def test_an_image_that_is_not_accelplanes_runs_the_configmap_script_from_the_pod_cache(tmp_path: Path) -> None:
    """No module, no ``__pycache__`` of ours in the image (a plain ``python:3`` image): the first
    call compiles the script into the pod's cache, later calls load it from there."""
    pod = _pod(tmp_path, image_script=None, configmap_script=SCRIPT_TEXT)
    assert not pod.image_pyc.parent.exists()
    first = pod.call("3", trace=False)
    assert (first.returncode, first.stdout) == (0, "0,1,2\n"), first.stderr
    (pyc,) = pod.cached()
    later = pod.call("3")
    assert (later.returncode, later.stdout) == (0, "0,1,2\n"), later.stderr
    assert loaded_from(later, pyc) and not compiled_from_source(later, pod.module)
    assert not pod.image_pyc.parent.exists(), "nothing written beside the mounted module"
