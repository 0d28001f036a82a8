"""Bytecode cache for the methods ``dataclasses`` generates for accelplane's own classes.

Why: CPython 3.11 compiles every method a dataclass gets (``__init__``, ``__repr__``,
``__eq__``, ``__hash__``, and ``__setattr__``/``__delattr__`` when frozen) from generated source
text, one ``compile`` per method, each time the defining module is imported. For the ~45 frozen
dataclasses ``accelplane validate`` imports that is about 40 % of its imports and a third of the
command's cold start (README, *Benchmarks*). Python caches the bytecode of modules
(``__pycache__/*.pyc``) but not of these generated functions; this module does for them what the
import system does for modules.

How: `install` (called by ``accelplane/__init__.py``, before any other accelplane module is
imported) wraps ``dataclasses._create_fn``. For a class defined in an ``accelplane`` module it
builds exactly the text ``dataclasses`` would build and executes the code compiled from that text,
taken from the cache when the text is in it (the key is the whole text, so a cached entry is the
code of exactly that text); classes of every other module go through ``dataclasses`` unchanged.
At exit, newly compiled entries are written next to the package's ``.pyc`` files
(``__pycache__/dataclass-methods.<cache tag>.marshal``, atomically, mode 0644) unless bytecode
writing is off (``-B``, ``PYTHONDONTWRITEBYTECODE``) or the directory is not writable: then every
run compiles, as before. A cache file that is a symlink, writable by group or others, unreadable or
not in the expected format is ignored. Only CPython 3.11's ``_create_fn`` is reproduced (3.12
changed it, 3.13 builds all of a class's methods with one ``exec`` and has none): on any other
version nothing is installed and dataclasses work as usual. tests/foundation/test_dataclass_bytecode.py
checks that every method built for an accelplane class, from the cache or compiled, has exactly
the code ``dataclasses`` itself builds.
"""

from __future__ import annotations

import dataclasses
import marshal
import os
import stat
import sys
from types import CodeType
from typing import Any

FORMAT = b"accelplane-dataclass-methods-1\n"
"""First bytes of a cache file (then a marshalled ``{source text: code}`` dict)."""

_codes: dict[str, CodeType] = {}
_new: dict[str, CodeType] = {}
_path: str | None = None
hits = 0
"""Methods taken from the cache in this process (tests read these counters)."""
misses = 0
"""Methods of accelplane classes compiled in this process (written to the cache at exit)."""


def cache_path() -> str:
    """Where the cache of this interpreter lives: beside the package's ``.pyc`` files."""
    package = os.path.dirname(os.path.abspath(__file__))
    directory = os.path.join(package, "__pycache__")
    if sys.pycache_prefix:  # the import system mirrors the source tree below the prefix
        directory = os.path.join(sys.pycache_prefix, package.lstrip(os.sep))
    return os.path.join(directory, f"dataclass-methods.{sys.implementation.cache_tag}.marshal")


def _load(path: str) -> dict[str, CodeType]:
    """The cached entries, or none when the file is missing, unsafe or not ours."""
    try:
        st = os.lstat(path)  # not followed: a symlink is not a regular file here
        if not stat.S_ISREG(st.st_mode) or st.st_mode & 0o022:
            return {}
        with open(path, "rb") as f:
            if f.read(len(FORMAT)) != FORMAT:
                return {}
            data = marshal.load(f)
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, CodeType)}


def _save() -> None:
    """Write the cache when this process compiled entries it lacked (registered with atexit)."""
    if not _new or _path is None or sys.dont_write_bytecode:
        return
    entries = {**_codes, **_new}
    directory = os.path.dirname(_path)
    tmp = f"{_path}.{os.getpid()}.tmp"
    try:
        os.makedirs(directory, mode=0o755, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        with os.fdopen(fd, "wb") as f:
            f.write(FORMAT)
            marshal.dump(entries, f)
        os.replace(tmp, _path)
    except (OSError, ValueError):
        import contextlib

        with contextlib.suppress(OSError):
            os.unlink(tmp)


def _ours(globals: dict[str, Any] | None) -> bool:
    name = (globals or {}).get("__name__", "")
    return isinstance(name, str) and (name == "accelplane" or name.startswith("accelplane."))


def install() -> bool:
    """Wrap ``dataclasses._create_fn`` with the cache; True when installed (see the module docstring)."""
    global _path, _codes
    original = getattr(dataclasses, "_create_fn", None)
    if (
        sys.version_info[:2] != (3, 11)  # the one implementation reproduced below (3.13 has none)
        or original is None
        or getattr(original, "_accelplane_cached", False)
        or original.__code__.co_varnames[:6] != ("name", "args", "body", "globals", "locals", "return_type")
    ):
        return False
    missing = dataclasses.MISSING

    def _create_fn(
        name: str,
        args: list[str],
        body: list[str],
        *,
        globals: dict[str, Any] | None = None,
        locals: dict[str, Any] | None = None,
        return_type: Any = missing,
    ) -> Any:
        """CPython 3.11's ``dataclasses._create_fn``, with the compiled text cached."""
        global hits, misses
        if not _ours(globals):
            return original(name, args, body, globals=globals, locals=locals, return_type=return_type)
        if locals is None:
            locals = {}
        return_annotation = ""
        if return_type is not missing:
            locals["_return_type"] = return_type
            return_annotation = "->_return_type"
        joined_args = ",".join(args)
        joined_body = "\n".join(f"  {b}" for b in body)
        txt = f" def {name}({joined_args}){return_annotation}:\n{joined_body}"
        local_vars = ", ".join(locals.keys())
        txt = f"def __create_fn__({local_vars}):\n{txt}\n return {name}"
        code = _codes.get(txt)
        if code is None:
            code = _new.get(txt)
        if code is None:
            code = _new[txt] = compile(txt, "<string>", "exec", dont_inherit=True)
            misses += 1
        else:
            hits += 1
        ns: dict[str, Any] = {}
        exec(code, globals, ns)
        return ns["__create_fn__"](**locals)

    _create_fn._accelplane_cached = True  # type: ignore[attr-defined]
    _create_fn.__wrapped__ = original  # type: ignore[attr-defined]
    _path = cache_path()
    _codes = _load(_path)
    dataclasses._create_fn = _create_fn  # type: ignore[attr-defined]
    import atexit

    atexit.register(_save)
    return True
