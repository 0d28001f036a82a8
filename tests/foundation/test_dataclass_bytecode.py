"""The bytecode cache of dataclass methods (`accelplane.dataclass_bytecode`, a cold-start measure).

It must change nothing but speed: every method built for an accelplane class has exactly the code
``dataclasses`` builds (cold cache and warm cache), the cache is written once and then used, other
modules' dataclasses are left to ``dataclasses``, and an unsafe or foreign cache file is ignored.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from accelplane import dataclass_bytecode

pytestmark = pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="installed on CPython 3.11 only")

IMPORT_ALL = """
import importlib, pkgutil, accelplane
for m in pkgutil.walk_packages(accelplane.__path__, "accelplane."):
    if not m.name.startswith(("accelplane.job_helpers", "accelplane.discovery.")):
        importlib.import_module(m.name)
"""

CHECK = """
import dataclasses
import accelplane
from accelplane import dataclass_bytecode as d
ours = dataclasses._create_fn
original = ours.__wrapped__
checked = []
def both(name, args, body, *, globals=None, locals=None, return_type=dataclasses.MISSING):
    a = ours(name, args, body, globals=globals, locals=dict(locals or {}), return_type=return_type)
    b = original(name, args, body, globals=globals, locals=dict(locals or {}), return_type=return_type)
    if d._ours(globals):
        assert a.__code__ == b.__code__, (globals["__name__"], name)
        assert a.__defaults__ == b.__defaults__ and a.__kwdefaults__ == b.__kwdefaults__, name
        assert [c.cell_contents for c in a.__closure__ or ()] == [c.cell_contents for c in b.__closure__ or ()]
        checked.append(name)
    return a
dataclasses._create_fn = both
""" + IMPORT_ALL + """
print(len(checked), d.hits, d.misses)
"""


def _run(program: str, prefix: Path) -> list[int]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    proc = subprocess.run(
        [sys.executable, "-X", f"pycache_prefix={prefix}", "-c", program],
        env=env, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    return [int(x) for x in proc.stdout.split()]


def test_methods_are_exactly_those_dataclasses_builds_cold_and_warm(tmp_path: Path) -> None:
    checked, hits, misses = _run(CHECK, tmp_path)
    assert checked > 200 and hits == 0 and misses > 0  # cold: compiled, then written at exit
    (cache,) = tmp_path.rglob("dataclass-methods.*.marshal")
    assert cache.stat().st_mode & 0o777 == 0o644
    checked2, hits2, misses2 = _run(CHECK, tmp_path)
    assert (checked2, hits2, misses2) == (checked, misses, 0)  # warm: every method from the cache


def test_cached_code_is_the_code_of_its_text(tmp_path: Path) -> None:
    _run(IMPORT_ALL, tmp_path)
    (cache,) = tmp_path.rglob("dataclass-methods.*.marshal")
    entries = dataclass_bytecode._load(str(cache))
    assert entries
    for text, code in entries.items():
        assert code == compile(text, "<string>", "exec", dont_inherit=True)


def test_other_modules_dataclasses_are_left_to_dataclasses() -> None:
    before = (dataclass_bytecode.hits, dataclass_bytecode.misses)

    @dataclass(frozen=True)
    class Elsewhere:
        x: int

    assert Elsewhere(1) == Elsewhere(1)
    assert (dataclass_bytecode.hits, dataclass_bytecode.misses) == before


def test_unsafe_or_foreign_cache_files_are_ignored(tmp_path: Path) -> None:
    good = tmp_path / "good.marshal"
    import marshal

    good.write_bytes(dataclass_bytecode.FORMAT + marshal.dumps({"x = 1": compile("x = 1", "<string>", "exec")}))
    good.chmod(0o644)
    assert list(dataclass_bytecode._load(str(good))) == ["x = 1"]
    writable = tmp_path / "writable.marshal"
    writable.write_bytes(good.read_bytes())
    writable.chmod(0o666)
    assert dataclass_bytecode._load(str(writable)) == {}
    link = tmp_path / "link.marshal"
    link.symlink_to(good)
    assert dataclass_bytecode._load(str(link)) == {}
    foreign = tmp_path / "foreign.marshal"
    foreign.write_bytes(b"not ours" + good.read_bytes())
    foreign.chmod(0o644)
    assert dataclass_bytecode._load(str(foreign)) == {}
    truncated = tmp_path / "truncated.marshal"
    truncated.write_bytes(good.read_bytes()[:-3])
    truncated.chmod(0o644)
    assert dataclass_bytecode._load(str(truncated)) == {}
    assert dataclass_bytecode._load(str(tmp_path / "missing.marshal")) == {}
