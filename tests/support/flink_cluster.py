"""Real-Flink test harness: standalone Flink daemons in a per-test sandbox.

This module starts a real Apache Flink (1.20) JobManager and TaskManagers with
the distribution's own ``bin/jobmanager.sh`` / ``bin/taskmanager.sh`` so tests
can prove that a *rendered* Flink configuration and a GPU discovery script work
inside Flink's own TaskManager (the external resource framework only runs in
real TaskManagers -- MiniCluster / local environments never call the drivers).

Main entry points
-----------------
* :func:`find_flink_home` / :func:`require_flink_home` -- locate the Flink
  distribution (``$ACCELPLANE_FLINK_HOME`` -> ``<repo>/.venv/flink/pyflink`` ->
  ``/work/flinkdist/pyflink``); ``require_*`` fails the test when ``$CI`` is set
  and skips it otherwise.
* :class:`FlinkStandalone` -- context manager owning one sandboxed cluster.
* :func:`run_gpu_scenario` -- one call: N TaskManagers + fake ``nvidia-smi`` +
  GPU probe job -> per-TaskManager GPU sets.
* :func:`load_with_flink` / :func:`probe_flink_config` -- what Flink's own
  ``GlobalConfiguration.loadConfiguration(confDir)`` reads from a conf dir.
* :func:`build_java_job` -- compile a small Java job against ``<flink>/lib/*``.

Sandbox overrides
-----------------
The harness never edits ``external-resource*`` keys of the configuration under
test, with exactly two opt-in exceptions, both for the resource named
``gpu_resource`` (default ``gpu``):

* ``external-resource.<gpu_resource>.param.discovery-script.path`` -- replaced
  when ``discovery_script_path`` is given (rendered configs point at an image
  path such as ``/opt/flink/plugins/accelplane-gpu/accelplane-gpu-discovery``
  that does not exist on the test machine);
* ``external-resource.<gpu_resource>.param.discovery-script.args`` -- replaced
  when ``discovery_args`` is given (``{coordination_file}`` in it is replaced by
  the sandbox's coordination file path), or, when only ``coordination_file`` is
  given, the ``--coordination-file <path>`` value inside the *configured* args
  is rewritten (or appended when the args enable coordination mode without a
  file) so parallel test runs never share ``/var/tmp/flink-gpu-coordination``.

Everything else the harness sets is a *sandbox key* (see
:data:`SANDBOX_KEYS`): bind addresses, ports, memory sizes, pid/log/tmp
directories, JVM options, HA mode, checkpoint directories.  After writing the
sandbox configuration the harness loads it with Flink's own parser and checks
that every override took effect and that every ``external-resource*`` key is
byte-for-byte what Flink read from the original file (except the two opt-in
keys above); a violation raises :class:`HarnessError`.

Findings about Flink 1.20.5 configuration parsing (observed with
``tests/support/java/ConfigProbe.java``; the renderer relies on them)
-----------------------------------------------------------------------------
Which file: ``GlobalConfiguration.loadConfiguration(dir)`` reads
``flink-conf.yaml`` with the *legacy* parser when that file exists in ``dir``
(even if ``config.yaml`` exists too) and ``config.yaml`` with the
*standard YAML* parser otherwise.

Standard YAML (``config.yaml``, snakeyaml-engine, YAML 1.2 core schema):

* Nested mappings are flattened to dotted keys (``a: {b: 1}`` -> ``a.b``); flat
  dotted keys are fine too.  When the same flattened key appears both nested
  and flat, the occurrence that comes *last in the document wins* (no error).
* The same key twice in one mapping is a hard error (``found duplicate key``;
  ``RuntimeException: Error parsing YAML configuration``) -- every daemon and
  the CLI refuse to start.
* A null value (``key: ~`` or ``key:``) is a hard error
  (``NullPointerException: Value must not be null``).
* ``#`` starts a comment only after whitespace: ``a: x#y`` -> ``x#y``,
  ``a: x # y`` -> ``x``, ``a: "x # y"`` -> ``x # y``.
* Quotes are YAML quotes (removed).  Scalars are typed by YAML 1.2 and then
  re-stringified: ``0123`` -> ``123``, ``1.10`` -> ``1.1``, ``1e3`` ->
  ``1000.0``, ``0x1F`` -> ``31``, ``yes`` stays ``yes`` (YAML 1.2: not a bool).
  Quote anything that must survive verbatim (versions, ids).
* Lists: ``[gpu, fpga]`` -> ``toMap()`` string ``[gpu, fpga]``, read as a list
  ``[gpu, fpga]``; ``"gpu;fpga"`` or plain ``gpu;fpga`` (a string) is *also*
  read as the list ``[gpu, fpga]``; inside a YAML list ``;`` is literal
  (``[a;b, c]`` -> ``["a;b", "c"]``); items containing ``,`` are quoted in the
  string form (``["x y", "a,b"]`` -> ``[x y, 'a,b']``) and survive as list
  items.  ``[]`` -> empty list.
* Block scalars work: ``|`` keeps newlines.

Legacy (``flink-conf.yaml``, line parser):

* One ``key: value`` per line, split at the first ``": "`` (``a: b: c`` ->
  key ``a``, value ``b: c``); key and value are trimmed (leading indentation
  is ignored -- there is NO nesting); lines without ``": "`` (``a:b``,
  ``a:<TAB>b``) and lines with an empty value (``a: ``) are skipped.
* Everything after the first ``#`` on a line is a comment, even inside quotes:
  ``a: x#y`` -> ``x``, ``a: "x#y"`` -> ``"x``.
* Quotes are NOT removed: ``a: "q"`` -> ``"q"`` (with the quotes).
* A duplicate key is allowed; the *last* line wins.
* Lists are ``;``-separated strings: ``gpu;fpga`` -> ``[gpu, fpga]``;
  ``[gpu, fpga]`` is one item ``"[gpu, fpga]"``.
* Values are never typed: ``yes`` -> ``yes``, ``0123`` -> ``0123``,
  ``{q: 1}`` -> ``{q: 1}``.
* ``config.yaml`` next to ``flink-conf.yaml`` is ignored entirely.

Both formats: the TaskManager start script (``BashJavaUtils``) also re-passes
``external-resources`` and ``external-resource.<name>.amount`` to the TM JVM
as ``-D`` dynamic properties derived from the file (visible in the TM log as
``dynamic_configs: ... -D external-resources="gpu" ...``), so what the TM uses
is what Flink parsed from the file.  The harness adds
``-D taskmanager.resource-id=tm-<n>`` the same way.

Where GPU discovery outcomes appear
-----------------------------------
In ``<log dir>/flink-<ident>-taskexecutor-<n>-<host>.log`` (see
:func:`parse_discovery_log` for the exact lines matched):

* ``INFO  org.apache.flink.runtime.externalresource.ExternalResourceUtils [] -
  Enabled external resources: [gpu]``
* success: ``INFO  org.apache.flink.externalresource.gpu.GPUDriver [] -
  Discover GPU resources: [GPU Device(0), GPU Device(1)].``
* script failure: ``WARN  org.apache.flink.externalresource.gpu.GPUDriver [] -
  Discovery script exit with 1.`` followed by ``STDOUT: ...`` and
  ``STDERR: ...`` lines, then ``WARN  ...ExternalResourceUtils [] - Failed to
  retrieve information of external resource gpu.`` with the stack trace
  ``org.apache.flink.util.FlinkException: Discovery script exit with non-zero
  return code: 1.``; the TaskManager starts anyway, without GPUs.
* driver not created (script missing / not executable / not configured):
  ``WARN  ...ExternalResourceUtils [] - Could not instantiate driver with
  factory org.apache.flink.externalresource.gpu.GPUDriverFactory for gpu.
  <exception>``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Literal, Self

import yaml

from tests.support.fake_nvidia_smi import install_fake_nvidia_smi

# --------------------------------------------------------------------------- #
# Locating Flink and Java
# --------------------------------------------------------------------------- #

FLINK_HOME_ENV = "ACCELPLANE_FLINK_HOME"
REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_FLINK_HOME_CANDIDATES: tuple[Path, ...] = (
    REPO_ROOT / ".venv" / "flink" / "pyflink",
    Path("/work/flinkdist/pyflink"),
)
JAVA_SOURCES_DIR = Path(__file__).resolve().parent / "java"
GPU_PROBE_SOURCE = JAVA_SOURCES_DIR / "GpuProbe.java"
CONFIG_PROBE_SOURCE = JAVA_SOURCES_DIR / "ConfigProbe.java"

#: JVM flags that cut JVM CPU time by ~40% for short-lived test JVMs on small
#: machines (C1 only, no hsperfdata files).  Put into ``JAVA_TOOL_OPTIONS`` of
#: the sandbox (so Flink's BashJavaUtils helper JVMs, daemons and CLI get them)
#: and used for ConfigProbe; the daemons additionally get ``-XX:+UseSerialGC``
#: in ``env.java.opts.all``.  Disable with ``FlinkStandalone(fast_jvm=False)``.
FAST_JVM_FLAGS: tuple[str, ...] = ("-XX:TieredStopAtLevel=1", "-XX:-UsePerfData")
FAST_DAEMON_GC = "-XX:+UseSerialGC"

#: Install hint shown when Flink cannot be found.
FLINK_INSTALL_HINT = (
    "install it with `pip install --no-deps --target .venv/flink "
    "apache-flink==1.20.5 apache-flink-libraries==1.20.5` or point "
    f"${FLINK_HOME_ENV} at an unpacked distribution (the directory holding "
    "bin/, lib/flink-dist-*.jar and conf/)"
)


class FlinkHomeNotFound(LookupError):
    """No usable Flink distribution was found."""


class HarnessError(RuntimeError):
    """The harness could not do what it was asked (with diagnostics)."""


def _flink_home_problem(path: Path) -> str | None:
    """Why ``path`` is not a usable Flink distribution, or ``None`` if it is."""
    if not path.is_dir():
        return f"{path} is not a directory"
    missing = [
        rel
        for rel in ("bin/jobmanager.sh", "bin/taskmanager.sh", "bin/flink", "conf")
        if not (path / rel).exists()
    ]
    if not list((path / "lib").glob("flink-dist*.jar")):
        missing.append("lib/flink-dist-*.jar")
    if missing:
        return f"{path} lacks {', '.join(missing)}"
    return None


def find_flink_home() -> Path:
    """Return the Flink distribution directory (``FLINK_HOME``) to test with.

    Order: ``$ACCELPLANE_FLINK_HOME`` (if set it must be valid -- no silent
    fallback), ``<repo>/.venv/flink/pyflink`` (where ``pip install --no-deps
    --target .venv/flink apache-flink==1.20.5 apache-flink-libraries==1.20.5``
    puts it), ``/work/flinkdist/pyflink``.

    Raises :class:`FlinkHomeNotFound` naming everything that was tried.
    """
    explicit = os.environ.get(FLINK_HOME_ENV)
    if explicit:
        path = Path(explicit).expanduser().resolve()
        problem = _flink_home_problem(path)
        if problem:
            raise FlinkHomeNotFound(f"${FLINK_HOME_ENV}={explicit!r}: {problem}")
        return path
    problems = []
    for candidate in DEFAULT_FLINK_HOME_CANDIDATES:
        problem = _flink_home_problem(candidate)
        if problem is None:
            return candidate.resolve()
        problems.append(problem)
    raise FlinkHomeNotFound(
        f"no Flink distribution found (${FLINK_HOME_ENV} unset; "
        + "; ".join(problems)
        + f"); {FLINK_INSTALL_HINT}"
    )


def _missing_java_tools() -> list[str]:
    return [tool for tool in ("java", "javac", "jar") if shutil.which(tool) is None]


def require_flink_home() -> Path:
    """:func:`find_flink_home` for tests: fail in CI, skip elsewhere.

    Also requires ``java``, ``javac`` and ``jar`` on ``PATH``.  When something
    is missing the current test FAILS if ``$CI`` is set (non-empty) and is
    SKIPPED with the reason otherwise.  An explicitly set but broken
    ``$ACCELPLANE_FLINK_HOME`` always fails (it is a misconfiguration, not a
    missing optional dependency).  Usable from fixtures of any scope.
    """
    import pytest  # local: the module is importable without pytest

    try:
        home = find_flink_home()
    except FlinkHomeNotFound as exc:
        if os.environ.get("CI") or os.environ.get(FLINK_HOME_ENV):
            pytest.fail(f"real-Flink tests need Flink: {exc}", pytrace=False)
        pytest.skip(f"real-Flink tests need Flink: {exc}")
    missing = _missing_java_tools()
    if missing:
        message = f"real-Flink tests need a JDK (17): {', '.join(missing)} not on PATH"
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return home


def flink_version(flink_home: Path) -> str:
    """Version from ``lib/flink-dist-<version>.jar`` (e.g. ``1.20.5``)."""
    for jar in sorted((flink_home / "lib").glob("flink-dist*.jar")):
        match = re.fullmatch(r"flink-dist(?:_[0-9.]+)?-(.+)\.jar", jar.name)
        if match:
            return match.group(1)
    raise FlinkHomeNotFound(f"no lib/flink-dist-<version>.jar in {flink_home}")


def gpu_plugin_dir(flink_home: Path) -> Path:
    """``<flink>/plugins/external-resource-gpu`` (GPU driver jar + Flink's scripts)."""
    return flink_home / "plugins" / "external-resource-gpu"


def flink_gpu_discovery_script(flink_home: Path) -> Path:
    """Flink's own ``nvidia-gpu-discovery.sh``."""
    return gpu_plugin_dir(flink_home) / "nvidia-gpu-discovery.sh"


def _flatten_yaml(node: object, prefix: str = "") -> dict[str, object]:
    """Flatten nested mappings to dotted keys, later entries winning (like Flink)."""
    flat: dict[str, object] = {}
    if isinstance(node, Mapping):
        for key, value in node.items():
            full = f"{prefix}{key}"
            if isinstance(value, Mapping):
                flat.update(_flatten_yaml(value, full + "."))
            else:
                flat[full] = value
    return flat


def java_opts_from_distribution(flink_home: Path) -> str:
    """``env.java.opts.all`` of ``<flink>/conf/config.yaml`` (nested or flat).

    On Java 17 the Flink daemons *and* the ``flink`` CLI need this
    ``--add-exports/--add-opens`` list; the sandbox copies it.  Returns ``""``
    when the distribution does not set it.
    """
    conf = flink_home / "conf" / "config.yaml"
    if not conf.is_file():
        return ""
    data = yaml.safe_load(conf.read_text(encoding="utf-8")) or {}
    value = _flatten_yaml(data).get("env.java.opts.all", "")
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    return str(value or "")


# --------------------------------------------------------------------------- #
# Java jobs
# --------------------------------------------------------------------------- #

_PROCESS_CACHE_DIR: Path | None = None


def _process_cache_dir() -> Path:
    """A per-process scratch directory used when callers pass no cache dir."""
    global _PROCESS_CACHE_DIR
    if _PROCESS_CACHE_DIR is None:
        _PROCESS_CACHE_DIR = Path(tempfile.mkdtemp(prefix="accelplane-java-"))
    return _PROCESS_CACHE_DIR


def _java_sources(source: Path | str, class_name: str) -> dict[str, str]:
    """File name -> text for every source file of a job."""
    if isinstance(source, Path):
        if source.is_dir():
            files = sorted(source.rglob("*.java"))
            if not files:
                raise HarnessError(f"no .java files under {source}")
            return {str(f.relative_to(source)): f.read_text(encoding="utf-8") for f in files}
        return {source.name: source.read_text(encoding="utf-8")}
    simple = class_name.rsplit(".", 1)[-1]
    return {f"{simple}.java": source}


def build_java_job(
    source: Path | str,
    class_name: str,
    flink_home: Path,
    out_dir: Path | None = None,
    *,
    timeout: float = 180.0,
) -> Path:
    """Compile a Java job against ``<flink>/lib/*`` and package it as a jar.

    ``source`` is a ``.java`` file, a directory of ``.java`` files, or the
    source text of ``class_name`` (a ``str``).  The jar is content-addressed
    (``<Class>-<hash>.jar`` over sources, class name and Flink version) inside
    ``out_dir`` and reused when it already exists, so passing a session-wide
    directory (``tmp_path_factory.mktemp(...)``) compiles each job once per
    test session.  Compiled with ``--release 11`` (runs on Java 11 and 17).
    """
    out_dir = out_dir or _process_cache_dir()
    out_dir.mkdir(parents=True, exist_ok=True)
    sources = _java_sources(source, class_name)
    digest = hashlib.sha256()
    digest.update(class_name.encode())
    digest.update(flink_version(flink_home).encode())
    for name, text in sorted(sources.items()):
        digest.update(name.encode() + b"\0" + text.encode() + b"\0")
    jar = out_dir / f"{class_name.rsplit('.', 1)[-1]}-{digest.hexdigest()[:16]}.jar"
    if jar.is_file():
        return jar

    with tempfile.TemporaryDirectory(prefix="javac-", dir=out_dir) as tmp:
        src_dir = Path(tmp) / "src"
        cls_dir = Path(tmp) / "classes"
        cls_dir.mkdir()
        paths = []
        for name, text in sources.items():
            path = src_dir / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            paths.append(str(path))
        classpath = str(flink_home / "lib") + os.sep + "*"
        _run_checked(
            [
                "javac",
                *(f"-J{flag}" for flag in FAST_JVM_FLAGS),
                "--release",
                "11",
                "-nowarn",
                "-cp",
                classpath,
                "-d",
                str(cls_dir),
                *paths,
            ],
            what=f"javac {class_name}",
            timeout=timeout,
        )
        tmp_jar = Path(tmp) / jar.name
        _run_checked(
            ["jar", "cf", str(tmp_jar), "-C", str(cls_dir), "."],
            what=f"jar {class_name}",
            timeout=timeout,
        )
        os.replace(tmp_jar, jar)
    return jar


def build_gpu_probe_jar(flink_home: Path, out_dir: Path | None = None) -> Path:
    """Jar of ``tests/support/java/GpuProbe.java`` (main class ``GpuProbe``)."""
    return build_java_job(GPU_PROBE_SOURCE, "GpuProbe", flink_home, out_dir)


def build_config_probe_jar(flink_home: Path, out_dir: Path | None = None) -> Path:
    """Jar of ``tests/support/java/ConfigProbe.java`` (main class ``ConfigProbe``)."""
    return build_java_job(CONFIG_PROBE_SOURCE, "ConfigProbe", flink_home, out_dir)


def _run_checked(
    cmd: Sequence[str],
    *,
    what: str,
    timeout: float,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    try:
        proc = subprocess.run(
            list(cmd),
            capture_output=True,
            text=True,
            timeout=timeout,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise HarnessError(
            f"{what} timed out after {timeout:.0f}s: {shlex.join(cmd)}\n"
            f"--- stdout ---\n{_text(exc.stdout)}\n--- stderr ---\n{_text(exc.stderr)}"
        ) from exc
    if proc.returncode != 0:
        raise HarnessError(
            f"{what} failed with exit code {proc.returncode}: {shlex.join(cmd)}\n"
            f"--- stdout ---\n{proc.stdout}\n--- stderr ---\n{proc.stderr}"
        )
    return proc


def _text(data: str | bytes | None) -> str:
    if data is None:
        return ""
    if isinstance(data, bytes):
        return data.decode("utf-8", "replace")
    return data


# --------------------------------------------------------------------------- #
# Flink's view of a configuration directory
# --------------------------------------------------------------------------- #


@dataclass(frozen=True)
class ProbedConfig:
    """What ``GlobalConfiguration.loadConfiguration(confDir)`` produced.

    ``values`` is ``Configuration.toMap()`` (flattened keys -> strings),
    ``lists`` the requested keys read as ``List<String>`` options (``None``
    when absent; a parse failure raises in :func:`probe_flink_config`),
    ``standard_yaml`` whether Flink used the standard YAML parser
    (``config.yaml``) rather than the legacy one (``flink-conf.yaml``).
    """

    values: dict[str, str]
    lists: dict[str, list[str] | None]
    standard_yaml: bool
    file_name: str


_PROBE_MARKER = "CONFIGPROBE_JSON="


def probe_flink_config(
    conf_dir: Path,
    flink_home: Path,
    list_keys: Iterable[str] = (),
    *,
    cache_dir: Path | None = None,
    timeout: float = 60.0,
) -> ProbedConfig:
    """Load ``conf_dir`` with Flink's own parser (``ConfigProbe.java``).

    Raises :class:`HarnessError` (with Flink's error output) when Flink cannot
    load the directory at all, e.g. for a YAML duplicate key or a null value.
    """
    list_keys = list(list_keys)
    jar = build_config_probe_jar(flink_home, cache_dir)
    classpath = os.pathsep.join([str(jar), str(flink_home / "lib") + os.sep + "*"])
    env = dict(os.environ)
    env.pop("FLINK_CONF_DIR", None)
    proc = _run_checked(
        ["java", *FAST_JVM_FLAGS, "-cp", classpath, "ConfigProbe", str(conf_dir), *list_keys],
        what=f"Flink ConfigProbe on {conf_dir}",
        timeout=timeout,
        env=env,
    )
    for line in proc.stdout.splitlines():
        if line.startswith(_PROBE_MARKER):
            data = json.loads(line[len(_PROBE_MARKER) :])
            break
    else:
        raise HarnessError(
            f"ConfigProbe printed no {_PROBE_MARKER} line\n--- stdout ---\n"
            f"{proc.stdout}\n--- stderr ---\n{proc.stderr}"
        )
    lists: dict[str, list[str] | None] = {}
    for key, value in data["lists"].items():
        if isinstance(value, dict):
            raise HarnessError(f"Flink cannot read {key!r} as a list: {value['error']}")
        lists[key] = value
    return ProbedConfig(
        values=dict(data["values"]),
        lists=lists,
        standard_yaml=bool(data["standardYaml"]),
        file_name=str(data["file"]),
    )


def load_with_flink(conf_dir: Path, flink_home: Path, *, cache_dir: Path | None = None) -> dict[str, str]:
    """Flat ``key -> value`` map Flink reads from ``conf_dir`` (``toMap()``).

    See the module docstring for how YAML and legacy files are interpreted.
    """
    return probe_flink_config(conf_dir, flink_home, cache_dir=cache_dir).values


def load_file_with_flink(
    conf_file: Path,
    flink_home: Path,
    list_keys: Iterable[str] = (),
    *,
    cache_dir: Path | None = None,
) -> ProbedConfig:
    """Like :func:`probe_flink_config` for one file, whose *name* picks the parser.

    The file is copied alone into a scratch directory (``config.yaml`` ->
    standard YAML, ``flink-conf.yaml`` -> legacy).
    """
    format_ = conf_format_of(conf_file)
    with tempfile.TemporaryDirectory(prefix="accelplane-probe-") as tmp:
        target = Path(tmp) / _CONF_FILE_NAMES[format_]
        shutil.copyfile(conf_file, target)
        return probe_flink_config(Path(tmp), flink_home, list_keys, cache_dir=cache_dir)


# --------------------------------------------------------------------------- #
# Writing sandbox configurations
# --------------------------------------------------------------------------- #

ConfFormat = Literal["yaml", "legacy"]
ConfigScalar = str | int | float | bool
ConfigValue = ConfigScalar | Sequence[str]

_CONF_FILE_NAMES: dict[ConfFormat, str] = {"yaml": "config.yaml", "legacy": "flink-conf.yaml"}

#: Keys the harness may set (besides the two opt-in discovery-script keys).
SANDBOX_KEYS: frozenset[str] = frozenset(
    {
        "jobmanager.rpc.address",
        "jobmanager.rpc.port",
        "jobmanager.bind-host",
        "jobmanager.memory.process.size",
        "taskmanager.host",
        "taskmanager.bind-host",
        "taskmanager.rpc.port",
        "taskmanager.data.port",
        "taskmanager.memory.process.size",
        "taskmanager.numberOfTaskSlots",
        "rest.address",
        "rest.bind-address",
        "rest.port",
        "blob.server.port",
        "metrics.internal.query-service.port",
        "env.pid.dir",
        "env.log.dir",
        "env.java.opts.all",
        "io.tmp.dirs",
        "web.tmpdir",
        "high-availability.type",
        "state.checkpoints.dir",
        "state.savepoints.dir",
        "parallelism.default",
    }
)


def conf_format_of(conf_file: Path) -> ConfFormat:
    """``yaml`` for ``config.yaml``, ``legacy`` for ``flink-conf.yaml``."""
    if conf_file.name == "config.yaml":
        return "yaml"
    if conf_file.name == "flink-conf.yaml":
        return "legacy"
    raise HarnessError(
        f"cannot tell the Flink config format of {conf_file}: name it config.yaml "
        "(standard YAML) or flink-conf.yaml (legacy flat format)"
    )


def _legacy_value(value: ConfigValue) -> str:
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, (str, int, float)):
        text = str(value)
    else:
        text = ";".join(str(v) for v in value)
    if "\n" in text or "#" in text:
        raise HarnessError(f"value {text!r} cannot be written to a legacy flink-conf.yaml")
    return text


def _yaml_value(value: ConfigValue) -> object:
    if isinstance(value, (str, int, float, bool)):
        return value
    return [str(v) for v in value]


def render_flat_config(values: Mapping[str, ConfigValue], format_: ConfFormat) -> str:
    """Write flat Flink keys as ``config.yaml`` (``yaml``) or ``flink-conf.yaml`` text."""
    for key, value in values.items():
        if value is None:
            raise HarnessError(f"{key}: None is not a Flink value (YAML null crashes Flink)")
    if format_ == "legacy":
        return "".join(f"{key}: {_legacy_value(value)}\n" for key, value in values.items())
    if not values:
        return ""
    return yaml.safe_dump(
        {key: _yaml_value(value) for key, value in values.items()},
        default_flow_style=False,
        sort_keys=False,
        width=1 << 20,
        allow_unicode=True,
    )


def _top_level_spans(text: str, keys: Iterable[str]) -> list[tuple[int, int]]:
    """Character spans of top-level ``key: value`` entries named in ``keys``."""
    wanted = set(keys)
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    if root is None:
        return []
    if not isinstance(root, yaml.MappingNode) or root.flow_style:
        raise HarnessError("a rendered config.yaml must be a block mapping at the top level")
    spans = []
    for key_node, value_node in root.value:
        if isinstance(key_node, yaml.ScalarNode) and key_node.value in wanted:
            start = text.rfind("\n", 0, key_node.start_mark.index) + 1
            end = value_node.end_mark.index
            if end == 0 or text[end - 1] != "\n":  # block scalars/mappings end at a line start
                newline = text.find("\n", end)
                end = len(text) if newline == -1 else newline + 1
            spans.append((start, end))
    return spans


def apply_overrides(text: str, format_: ConfFormat, overrides: Mapping[str, ConfigValue]) -> str:
    """Return ``text`` with ``overrides`` applied *in the file's own format*.

    * legacy: the original text verbatim, then one ``key: value`` line per
      override appended (Flink's legacy parser lets the last duplicate win).
    * YAML: the original text verbatim except that top-level *flat* entries for
      overridden keys are cut out (a duplicate key is fatal in YAML); then the
      overrides are appended as flat keys.  Nested spellings of the same key
      stay in place -- Flink lets the last occurrence win.  This keeps every
      scalar's original spelling (a PyYAML load/dump round trip would turn
      e.g. ``0123`` into ``83`` or ``yes`` into ``true``: PyYAML is YAML 1.1,
      Flink YAML 1.2).
    """
    if not overrides:
        return text
    if format_ == "legacy":
        body = text if not text or text.endswith("\n") else text + "\n"
        return (
            body + "# --- accelplane test harness overrides ---\n" + render_flat_config(overrides, "legacy")
        )
    spans = _top_level_spans(text, overrides.keys())
    pieces = []
    cursor = 0
    for start, end in sorted(spans):
        pieces.append(text[cursor:start])
        cursor = end
    pieces.append(text[cursor:])
    body = "".join(pieces)
    if body and not body.endswith("\n"):
        body += "\n"
    return body + "# --- accelplane test harness overrides ---\n" + render_flat_config(overrides, "yaml")


def with_coordination_file(args: str, coordination_file: Path) -> str:
    """Point ``--coordination-file`` in discovery ``args`` at ``coordination_file``.

    Rewrites ``--coordination-file X`` / ``--coordination-file=X``; appends
    ``--coordination-file <path>`` when ``--enable-coordination-mode`` is
    present without a file (Flink's script would otherwise share
    ``/var/tmp/flink-gpu-coordination`` between unrelated test runs).  Args
    without coordination are returned unchanged.  Flink passes the args to
    ``Runtime.exec(String)``, which splits on whitespace (no shell quoting),
    so the path must not contain whitespace.
    """
    path = str(coordination_file)
    if any(c.isspace() for c in path):
        raise HarnessError(f"coordination file path must not contain whitespace: {path!r}")
    tokens = args.split()
    out: list[str] = []
    found = False
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token == "--coordination-file":
            out += [token, path]
            found = True
            i += 2
            continue
        if token.startswith("--coordination-file="):
            out.append(f"--coordination-file={path}")
            found = True
        else:
            out.append(token)
        i += 1
    if not found and "--enable-coordination-mode" in tokens:
        out += ["--coordination-file", path]
    return " ".join(out)


# --------------------------------------------------------------------------- #
# Discovery outcome from TaskManager logs
# --------------------------------------------------------------------------- #

_LOG_LINE = re.compile(
    r"^\d{4}-\d\d-\d\d[ T][\d:,.]+\s+(?P<level>[A-Z]+)\s+(?P<logger>\S+)\s+\[[^\]]*\]\s+-\s(?P<msg>.*)$"
)
_TM_LOG_NAME = re.compile(r"^flink-.*-taskexecutor-(?P<n>\d+)-.*\.log$")
_GPU_DEVICE = re.compile(r"GPU Device\(([^)]*)\)")


@dataclass(frozen=True)
class DiscoveryOutcome:
    """GPU discovery result of one TaskManager, as its log tells it.

    ``gpu_indexes`` is the set of ``GPUInfo`` indexes the driver produced
    (``None`` when no ``Discover GPU resources`` line was logged);
    ``failures`` every failure message in log order, each followed by
    `` (<exception line>)`` when a stack trace follows it (e.g.
    ``Discovery script exit with 1.`` then ``Failed to retrieve information of
    external resource gpu. (org.apache.flink.util.FlinkException: Discovery
    script exit with non-zero return code: 1.)``); ``lines`` every
    discovery-related log line (with the STDOUT/STDERR continuation lines and
    the exception line of failures), in log order.
    """

    log_file: Path
    taskmanager_number: int
    resource_id: str | None
    enabled_resources: str | None
    gpu_indexes: frozenset[str] | None
    failures: tuple[str, ...]
    lines: tuple[str, ...]

    @property
    def failure(self) -> str | None:
        """The first failure message (``None`` when there was none)."""
        return self.failures[0] if self.failures else None

    @property
    def ok(self) -> bool:
        """GPUs were discovered and nothing failed."""
        return self.gpu_indexes is not None and not self.failures


def parse_discovery_log(text: str, log_file: Path, resource: str = "gpu") -> DiscoveryOutcome:
    """Extract the GPU discovery outcome from one TaskManager log.

    Matched (logger abbreviated; the log layout is Flink's default
    ``%d{yyyy-MM-dd HH:mm:ss,SSS} %-5p %-60c %x - %m%n``):

    * ``ExternalResourceUtils - Enabled external resources: [gpu]``
    * ``GPUDriver - Discover GPU resources: [GPU Device(0), GPU Device(1)].``
    * ``GPUDriver - Discovery script exit with <rc>.`` + ``STDOUT: ...`` +
      ``STDERR: ...`` continuation lines
    * ``ExternalResourceUtils - Failed to retrieve information of external
      resource gpu.`` + the exception line of the stack trace below it
    * ``ExternalResourceUtils - Could not instantiate driver with factory ...``,
      ``Could not find factory class ...``, ``Could not find driver class name
      ...``, ``The amount of the ... should be ...``,
      ``GPUDriver - The output of the discovery script should only contain one
      single line...``
    """
    match = _TM_LOG_NAME.match(log_file.name)
    number = int(match.group("n")) if match else -1
    resource_id: str | None = None
    enabled: str | None = None
    indexes: frozenset[str] | None = None
    failures: list[str] = []
    lines: list[str] = []
    raw = text.splitlines()
    failure_markers = (
        "Discovery script exit with",
        f"Failed to retrieve information of external resource {resource}",
        "Could not instantiate driver with factory",
        "Could not find factory class",
        "Could not find driver class name",
        "Will ignore that resource",
        "Could not found legal amount configuration",
    )
    i = 0
    while i < len(raw):
        line = raw[i]
        parsed = _LOG_LINE.match(line)
        i += 1
        if not parsed:
            continue
        msg = parsed.group("msg")
        if msg.startswith("Starting TaskManager with ResourceID: "):
            resource_id = msg.split(": ", 1)[1].strip()
            continue
        if msg.startswith("Enabled external resources: "):
            enabled = msg.split(": ", 1)[1].strip()
            lines.append(line)
            continue
        # continuation lines (STDOUT/STDERR of the script, stack traces)
        continuation: list[str] = []
        while i < len(raw) and not _LOG_LINE.match(raw[i]):
            continuation.append(raw[i])
            i += 1
        if msg.startswith("Discover GPU resources: "):
            found = frozenset(v.strip() for v in _GPU_DEVICE.findall(msg))
            indexes = found if indexes is None else indexes | found
            lines.append(line)
        elif any(marker in msg for marker in failure_markers) or (
            "discovery script" in msg.lower() and parsed.group("level") in ("WARN", "ERROR")
        ):
            lines.append(line)
            kept = [c for c in continuation if c.startswith(("STDOUT:", "STDERR:"))]
            exception = next((c for c in continuation if re.match(r"^[\w.$]+(Exception|Error)", c)), None)
            if exception:
                kept.append(exception)
            lines.extend(kept)
            failures.append(msg if not exception else f"{msg} ({exception})")
    return DiscoveryOutcome(
        log_file=log_file,
        taskmanager_number=number,
        resource_id=resource_id,
        enabled_resources=enabled,
        gpu_indexes=indexes,
        failures=tuple(failures),
        lines=tuple(lines),
    )


@dataclass(frozen=True)
class ProbeReport:
    """One line of ``GpuProbe`` output (one subtask)."""

    subtask: int
    parallelism: int
    taskmanager: str
    pid: int
    host: str
    indexes: frozenset[str]


_PROBE_LINE = re.compile(
    r"^GPUPROBE subtask=(?P<subtask>\d+) parallelism=(?P<par>\d+) tm=(?P<tm>\S+) "
    r"pid=(?P<pid>\d+) host=(?P<host>\S*) indexes=(?P<idx>\S*)$"
)


def parse_gpu_probe_output(stdout: str) -> list[ProbeReport]:
    """Parse ``GpuProbe`` client output; requires the ``GPUPROBE_DONE`` trailer."""
    reports = []
    done = None
    for line in stdout.splitlines():
        match = _PROBE_LINE.match(line.strip())
        if match:
            reports.append(
                ProbeReport(
                    subtask=int(match["subtask"]),
                    parallelism=int(match["par"]),
                    taskmanager=match["tm"],
                    pid=int(match["pid"]),
                    host=match["host"],
                    indexes=frozenset(x for x in match["idx"].split(";") if x),
                )
            )
        elif line.startswith("GPUPROBE_DONE count="):
            done = int(line.split("=", 1)[1])
    if done is None or done != len(reports):
        raise HarnessError(f"incomplete GpuProbe output ({len(reports)} lines, trailer {done}):\n{stdout}")
    return reports


# --------------------------------------------------------------------------- #
# Process helpers
# --------------------------------------------------------------------------- #


def free_port() -> int:
    """A currently free TCP port on localhost (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _pid_alive(pid: int) -> bool:
    """True if ``pid`` exists and is not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    state = stat.rsplit(")", 1)[-1].split()[0]
    return state not in ("Z", "X")


def _pid_cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""


def _read_pids(pid_file: Path) -> list[int]:
    if not pid_file.is_file():
        return []
    return [int(x) for x in pid_file.read_text().split() if x.strip().isdigit()]


def _tail(path: Path, lines: int = 60) -> str:
    try:
        content = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as exc:
        return f"<cannot read {path}: {exc}>"
    return "\n".join(content[-lines:])


# --------------------------------------------------------------------------- #
# The cluster
# --------------------------------------------------------------------------- #


@dataclass
class TaskManagerHandle:
    """A TaskManager the harness started."""

    number: int  #: 0-based start order == ``-<n>-`` in the log file name
    pid: int
    resource_id: str  #: ``taskmanager.resource-id`` given as ``-D`` (``tm-<n>``)
    log_file: Path


@dataclass
class _Daemon:
    kind: Literal["standalonesession", "taskexecutor"]
    pid: int


@dataclass
class FlinkStandalone:
    """A sandboxed standalone Flink cluster (context manager).

    ``base_config`` is either a mapping of flat Flink keys (written as
    ``config.yaml``, or ``flink-conf.yaml`` with ``conf_format="legacy"``) or
    the path of a rendered ``config.yaml`` / ``flink-conf.yaml`` whose text is
    used *verbatim*, with the harness overrides appended in the SAME format
    (see :func:`apply_overrides`).  Overrides only touch sandbox keys
    (:data:`SANDBOX_KEYS`: ports, bind addresses, memory, pid/log/tmp dirs,
    ``env.java.opts.all`` replaced by the distribution's Java 17 list, HA off,
    local checkpoint dirs, and ``taskmanager.numberOfTaskSlots`` only when
    ``taskmanager_slots`` is given) and never ``external-resource*`` keys --
    except ``external-resource.<gpu_resource>.param.discovery-script.path``
    when ``discovery_script_path`` is given and ``...discovery-script.args``
    when ``discovery_args`` or ``coordination_file`` is given (see
    :func:`with_coordination_file`).  ``extra_overrides`` lets a caller add
    more sandbox keys (``external-resource*`` keys are rejected there).

    ``extra_env`` is added to the daemons' and the CLI's environment (e.g.
    ``PATH`` with a fake ``nvidia-smi`` first).  ``fast_jvm`` (default on)
    adds :data:`FAST_JVM_FLAGS` via ``JAVA_TOOL_OPTIONS`` and
    ``-XX:+UseSerialGC`` to ``env.java.opts.all`` -- JVM tuning only, it
    changes nothing Flink reads from its configuration otherwise.  Each TaskManager gets
    ``-D taskmanager.resource-id=tm-<n>`` so logs, REST and probe output can
    be correlated.  Ports: ``rest.port`` and ``jobmanager.rpc.port`` are
    free ports picked at construction; TaskManager RPC/data and blob ports are
    ``0`` (ephemeral), so parallel runs do not collide.

    All daemons are stopped by :meth:`stop` (also on ``__exit__``) through
    Flink's own ``stop-all`` with the sandbox's pid files, then verified dead
    by pid; survivors whose command line names this sandbox's conf dir are
    ``SIGKILL``-ed as a last resort.
    """

    flink_home: Path
    work_dir: Path
    base_config: Mapping[str, ConfigValue] | Path | None = None
    extra_env: Mapping[str, str] | None = None
    conf_format: ConfFormat | None = None
    discovery_script_path: Path | None = None
    discovery_args: str | None = None
    coordination_file: Path | None = None
    gpu_resource: str = "gpu"
    taskmanager_slots: int | None = None
    memory: str = "1024m"
    extra_overrides: Mapping[str, ConfigValue] | None = None
    startup_timeout: float = 180.0
    java_cache_dir: Path | None = None
    verify_config: bool = True
    fast_jvm: bool = True

    conf_dir: Path = field(init=False)
    log_dir: Path = field(init=False)
    pid_dir: Path = field(init=False)
    rest_port: int = field(init=False)
    rpc_port: int = field(init=False)
    taskmanagers: list[TaskManagerHandle] = field(init=False, default_factory=list)
    effective_config: dict[str, str] = field(init=False, default_factory=dict)
    _daemons: list[_Daemon] = field(init=False, default_factory=list)
    _env: dict[str, str] = field(init=False, default_factory=dict)
    _prepared: bool = field(init=False, default=False)

    # -- setup -------------------------------------------------------------

    def __post_init__(self) -> None:
        self.flink_home = Path(self.flink_home).resolve()
        self.work_dir = Path(self.work_dir).resolve()
        self.conf_dir = self.work_dir / "conf"
        self.log_dir = self.work_dir / "log"
        self.pid_dir = self.work_dir / "pid"
        self.rest_port = free_port()
        self.rpc_port = free_port()
        while self.rpc_port == self.rest_port:
            self.rpc_port = free_port()
        if self.java_cache_dir is None:
            self.java_cache_dir = self.work_dir / "java-cache"
        for key in self.extra_overrides or {}:
            if key.startswith("external-resource"):
                raise HarnessError(
                    f"extra_overrides may not touch {key!r}: the harness never changes "
                    "external-resource keys except discovery-script.path/args"
                )

    @property
    def rest_url(self) -> str:
        return f"http://localhost:{self.rest_port}"

    def _discovery_key(self, suffix: str) -> str:
        return f"external-resource.{self.gpu_resource}.param.discovery-script.{suffix}"

    def sandbox_overrides(self, configured: Mapping[str, str]) -> dict[str, ConfigValue]:
        """The overrides written for this sandbox (``configured``: Flink's view of the base)."""
        tmp_dir = self.work_dir / "tmp"
        overrides: dict[str, ConfigValue] = {
            "jobmanager.rpc.address": "localhost",
            "jobmanager.rpc.port": str(self.rpc_port),
            "jobmanager.bind-host": "localhost",
            "jobmanager.memory.process.size": self.memory,
            "taskmanager.host": "localhost",
            "taskmanager.bind-host": "localhost",
            "taskmanager.rpc.port": "0",
            "taskmanager.data.port": "0",
            "taskmanager.memory.process.size": self.memory,
            "rest.address": "localhost",
            "rest.bind-address": "localhost",
            "rest.port": str(self.rest_port),
            "blob.server.port": "0",
            "metrics.internal.query-service.port": "0",
            "env.pid.dir": str(self.pid_dir),
            "env.log.dir": str(self.log_dir),
            "io.tmp.dirs": str(tmp_dir),
            "web.tmpdir": str(tmp_dir / "web"),
            "high-availability.type": "NONE",
            "state.checkpoints.dir": (self.work_dir / "checkpoints").as_uri(),
            "state.savepoints.dir": (self.work_dir / "savepoints").as_uri(),
        }
        java_opts = java_opts_from_distribution(self.flink_home)
        if self.fast_jvm:
            java_opts = f"{java_opts} {FAST_DAEMON_GC}".strip()
        if java_opts:
            overrides["env.java.opts.all"] = java_opts
        if self.taskmanager_slots is not None:
            overrides["taskmanager.numberOfTaskSlots"] = str(self.taskmanager_slots)
        overrides.update(self.extra_overrides or {})
        if self.discovery_script_path is not None:
            script = Path(self.discovery_script_path).resolve()
            if any(c.isspace() for c in str(script)):
                raise HarnessError(f"discovery script path must not contain whitespace: {script}")
            overrides[self._discovery_key("path")] = str(script)
        coordination = str(self.coordination_file) if self.coordination_file else None
        if self.discovery_args is not None:
            args = self.discovery_args
            if "{coordination_file}" in args:
                if coordination is None:
                    raise HarnessError("discovery_args uses {coordination_file} but none was given")
                args = args.replace("{coordination_file}", coordination)
            overrides[self._discovery_key("args")] = args
        elif self.coordination_file is not None:
            current = configured.get(self._discovery_key("args"), "")
            rewritten = with_coordination_file(current, self.coordination_file)
            if rewritten != current:
                overrides[self._discovery_key("args")] = rewritten
        return overrides

    def _base_text_and_format(self) -> tuple[str, ConfFormat]:
        if isinstance(self.base_config, Path):
            format_ = conf_format_of(self.base_config)
            if self.conf_format is not None and self.conf_format != format_:
                raise HarnessError(f"{self.base_config.name} is not {self.conf_format} format")
            return self.base_config.read_text(encoding="utf-8"), format_
        format_ = self.conf_format or "yaml"
        return render_flat_config(dict(self.base_config or {}), format_), format_

    def prepare(self) -> Path:
        """Write the sandbox conf dir (idempotent); returns it."""
        if self._prepared:
            return self.conf_dir
        for d in (self.conf_dir, self.log_dir, self.pid_dir, self.work_dir / "tmp"):
            d.mkdir(parents=True, exist_ok=True)
        dist_conf = self.flink_home / "conf"
        for name in (
            "log4j.properties",
            "log4j-cli.properties",
            "log4j-console.properties",
            "log4j-session.properties",
            "logback.xml",
            "logback-console.xml",
            "logback-session.xml",
        ):
            if (dist_conf / name).is_file():
                shutil.copyfile(dist_conf / name, self.conf_dir / name)
        (self.conf_dir / "masters").write_text(f"localhost:{self.rest_port}\n")
        (self.conf_dir / "workers").write_text("localhost\n")

        text, format_ = self._base_text_and_format()
        conf_file = self.conf_dir / _CONF_FILE_NAMES[format_]
        other = self.conf_dir / _CONF_FILE_NAMES["legacy" if format_ == "yaml" else "yaml"]
        if other.exists():
            other.unlink()

        # Flink's view of the unmodified base (needed to rewrite args and to verify).
        base_dir = self.work_dir / "conf-base"
        base_dir.mkdir(exist_ok=True)
        (base_dir / conf_file.name).write_text(text, encoding="utf-8")
        base_view: dict[str, str] = {}
        if self.verify_config or (self.coordination_file is not None and self.discovery_args is None):
            base_view = load_with_flink(base_dir, self.flink_home, cache_dir=self.java_cache_dir)

        overrides = self.sandbox_overrides(base_view)
        conf_file.write_text(apply_overrides(text, format_, overrides), encoding="utf-8")
        if self.verify_config:
            self.effective_config = load_with_flink(
                self.conf_dir, self.flink_home, cache_dir=self.java_cache_dir
            )
            self._verify(base_view, overrides)
        self._env = self._build_env()
        self._prepared = True
        return self.conf_dir

    def _verify(self, base_view: Mapping[str, str], overrides: Mapping[str, ConfigValue]) -> None:
        problems = []
        for key, value in overrides.items():
            want = _legacy_value(value)
            got = self.effective_config.get(key)
            if got != want and not (isinstance(value, (list, tuple)) and got is not None):
                problems.append(f"{key}: wanted {want!r}, Flink reads {got!r}")
        allowed = {self._discovery_key("path"), self._discovery_key("args")} & set(overrides)
        for key in sorted(set(base_view) | set(self.effective_config)):
            if (
                key.startswith("external-resource")
                and key not in allowed
                and base_view.get(key) != self.effective_config.get(key)
            ):
                problems.append(
                    f"{key} changed: {base_view.get(key)!r} -> {self.effective_config.get(key)!r}"
                )
        if problems:
            raise HarnessError("sandbox configuration check failed:\n  " + "\n  ".join(problems))

    def _build_env(self) -> dict[str, str]:
        env = dict(os.environ)
        for var in (
            "FLINK_HOME",
            "FLINK_CONF_DIR",
            "FLINK_PLUGINS_DIR",
            "FLINK_LIB_DIR",
            "FLINK_OPT_DIR",
            "FLINK_BIN_DIR",
            "FLINK_ENV_JAVA_OPTS",
            "FLINK_PID_DIR",
            "FLINK_LOG_DIR",
        ):
            env.pop(var, None)
        env.update(
            {
                "FLINK_CONF_DIR": str(self.conf_dir),
                "FLINK_LOG_DIR": str(self.log_dir),
                "FLINK_PID_DIR": str(self.pid_dir),
                "FLINK_IDENT_STRING": "accelplane",
            }
        )
        if self.fast_jvm:
            tool_options = " ".join([env.get("JAVA_TOOL_OPTIONS", ""), *FAST_JVM_FLAGS]).strip()
            env["JAVA_TOOL_OPTIONS"] = tool_options
        env.update(self.extra_env or {})
        return env

    # -- daemons -------------------------------------------------------------

    def _pid_file(self, kind: str) -> Path:
        return self.pid_dir / f"flink-accelplane-{kind}.pid"

    def _script(self, name: str, *args: str, timeout: float = 120.0) -> str:
        proc = _run_checked(
            [str(self.flink_home / "bin" / name), *args],
            what=f"{name} {' '.join(args)}",
            timeout=timeout,
            env=self._env,
            cwd=self.work_dir,
        )
        return proc.stdout + proc.stderr

    def _start_daemon(
        self, kind: Literal["standalonesession", "taskexecutor"], script: str, *args: str
    ) -> int:
        before = _read_pids(self._pid_file(kind))
        output = self._script(script, "start", *args)
        after = _read_pids(self._pid_file(kind))
        new = [p for p in after if p not in before]
        if len(new) != 1:
            raise HarnessError(f"{script} start did not record exactly one new pid ({after}):\n{output}")
        self._daemons.append(_Daemon(kind, new[0]))
        return new[0]

    def _get_json(self, path: str, timeout: float = 5.0) -> object:
        with urllib.request.urlopen(self.rest_url + path, timeout=timeout) as resp:
            return json.loads(resp.read().decode("utf-8"))

    def _log_file(self, kind: str, number: int) -> Path | None:
        matches = sorted(self.log_dir.glob(f"flink-accelplane-{kind}-{number}-*.log"))
        return matches[0] if matches else None

    def _diagnostics(self, kind: str, number: int) -> str:
        parts = []
        log = self._log_file(kind, number)
        if log is not None:
            parts.append(f"--- {log.name} (tail) ---\n{_tail(log)}")
            out = log.with_suffix(".out")
            if out.is_file() and out.stat().st_size:
                parts.append(f"--- {out.name} (tail) ---\n{_tail(out)}")
        else:
            parts.append(f"<no {kind} log in {self.log_dir}>")
        return "\n".join(parts)

    def start_jobmanager(self) -> int:
        """Start the JobManager and wait for its REST API; returns its pid."""
        self.prepare()
        pid = self._start_daemon("standalonesession", "jobmanager.sh")
        deadline = time.monotonic() + self.startup_timeout
        last_error: Exception | None = None
        while time.monotonic() < deadline:
            if not _pid_alive(pid):
                raise HarnessError(
                    f"JobManager (pid {pid}) died during startup\n"
                    + self._diagnostics("standalonesession", 0)
                )
            try:
                self._get_json("/overview")
                return pid
            except (urllib.error.URLError, OSError, ValueError) as exc:
                last_error = exc
            time.sleep(0.25)
        raise HarnessError(
            f"JobManager REST API {self.rest_url} not up after {self.startup_timeout:.0f}s "
            f"({last_error})\n" + self._diagnostics("standalonesession", 0)
        )

    def registered_taskmanagers(self) -> list[dict[str, object]]:
        """``GET /taskmanagers`` entries."""
        data = self._get_json("/taskmanagers")
        assert isinstance(data, dict)
        tms = data.get("taskmanagers", [])
        assert isinstance(tms, list)
        return tms

    def start_taskmanager(self, extra_dynamic: Mapping[str, str] | None = None) -> TaskManagerHandle:
        """Start one TaskManager and wait until ``/taskmanagers`` lists it.

        The TM gets ``-D taskmanager.resource-id=tm-<n>`` (plus ``extra_dynamic``
        as further ``-D`` options).  GPU discovery runs before registration, so
        once this returns its discovery outcome is in the log.
        """
        if not any(d.kind == "standalonesession" for d in self._daemons):
            raise HarnessError("start_jobmanager() first")
        number = len(self.taskmanagers)
        resource_id = f"tm-{number}"
        args = ["-D", f"taskmanager.resource-id={resource_id}"]
        for key, value in (extra_dynamic or {}).items():
            if key.startswith("external-resource"):
                raise HarnessError(f"extra_dynamic may not set {key!r}")
            args += ["-D", f"{key}={value}"]
        pid = self._start_daemon("taskexecutor", "taskmanager.sh", *args)
        deadline = time.monotonic() + self.startup_timeout
        while True:
            log = self._log_file("taskexecutor", number)
            try:
                registered = self.registered_taskmanagers()
                ids = {str(tm.get("id")) for tm in registered}
                # /taskmanagers lists a TM before the slot manager reports its slots in /overview;
                # wait for both, or a job sized by total_slots() under-deploys (seen under load).
                expected_slots = sum(int(str(tm.get("slotsNumber", 0))) for tm in registered)
                slots_ready = (
                    resource_id in ids and expected_slots > 0 and self.total_slots() >= expected_slots
                )
            except (urllib.error.URLError, OSError, ValueError):
                ids, slots_ready = set(), False
            if resource_id in ids and slots_ready and log is not None:
                handle = TaskManagerHandle(number=number, pid=pid, resource_id=resource_id, log_file=log)
                self.taskmanagers.append(handle)
                return handle
            if not _pid_alive(pid):
                raise HarnessError(
                    f"TaskManager {resource_id} (pid {pid}) died during startup\n"
                    + self._diagnostics("taskexecutor", number)
                )
            if time.monotonic() > deadline:
                raise HarnessError(
                    f"TaskManager {resource_id} (pid {pid}) did not register within "
                    f"{self.startup_timeout:.0f}s (registered: {sorted(ids)})\n"
                    + self._diagnostics("taskexecutor", number)
                )
            time.sleep(0.25)

    def start(self, taskmanagers: int = 1) -> Self:
        """JobManager plus ``taskmanagers`` TaskManagers, started one after another."""
        self.start_jobmanager()
        for _ in range(taskmanagers):
            self.start_taskmanager()
        return self

    # -- inspection ------------------------------------------------------------

    def taskmanager_log_files(self) -> list[Path]:
        """TaskManager log files, ordered by TaskManager number."""

        def number(path: Path) -> int:
            match = _TM_LOG_NAME.match(path.name)
            return int(match.group("n")) if match else 1 << 30

        return sorted(self.log_dir.glob("flink-*-taskexecutor-*.log"), key=number)

    def taskmanager_logs(self) -> list[str]:
        """Text of every TaskManager log (``flink-*-taskexecutor-<n>-*.log``), by number."""
        return [p.read_text(encoding="utf-8", errors="replace") for p in self.taskmanager_log_files()]

    def jobmanager_log(self) -> str:
        log = self._log_file("standalonesession", 0)
        return log.read_text(encoding="utf-8", errors="replace") if log else ""

    def discovery_results(self) -> list[DiscoveryOutcome]:
        """Per-TaskManager GPU discovery outcome parsed from the TM logs."""
        return [
            parse_discovery_log(p.read_text(encoding="utf-8", errors="replace"), p, self.gpu_resource)
            for p in self.taskmanager_log_files()
        ]

    def total_slots(self) -> int:
        data = self._get_json("/overview")
        assert isinstance(data, dict)
        return int(data["slots-total"])

    # -- jobs --------------------------------------------------------------

    def submit_jar(
        self,
        jar: Path,
        main_class: str,
        args: Sequence[str] = (),
        *,
        parallelism: int | None = None,
        timeout: float = 180.0,
    ) -> str:
        """``flink run`` (attached) against this cluster; returns the client's stdout.

        Raises :class:`HarnessError` with stdout, stderr and the client log tail
        when the client exits non-zero or times out.
        """
        self.prepare()
        cmd = [str(self.flink_home / "bin" / "flink"), "run", "-m", f"localhost:{self.rest_port}"]
        if parallelism is not None:
            cmd += ["-p", str(parallelism)]
        cmd += ["-c", main_class, str(jar), *args]
        try:
            proc = _run_checked(cmd, what="flink run", timeout=timeout, env=self._env, cwd=self.work_dir)
        except HarnessError as exc:
            client_logs = sorted(self.log_dir.glob("flink-*-client-*.log"))
            tail = _tail(client_logs[-1]) if client_logs else "<no client log>"
            raise HarnessError(f"{exc}\n--- client log (tail) ---\n{tail}") from exc
        return proc.stdout

    def run_gpu_probe(
        self, parallelism: int | None = None, *, jar: Path | None = None, timeout: float = 180.0
    ) -> list[ProbeReport]:
        """Run ``GpuProbe`` with one subtask per slot (default: all slots)."""
        jar = jar or build_gpu_probe_jar(self.flink_home, self.java_cache_dir)
        parallelism = parallelism or self.total_slots()
        stdout = self.submit_jar(
            jar, "GpuProbe", [str(parallelism), self.gpu_resource], parallelism=parallelism, timeout=timeout
        )
        return parse_gpu_probe_output(stdout)

    # -- teardown ----------------------------------------------------------

    def daemon_pids(self) -> list[int]:
        """Pids of every daemon started here (tracked + still in pid files)."""
        pids = [d.pid for d in self._daemons]
        for kind in ("standalonesession", "taskexecutor"):
            pids += [p for p in _read_pids(self._pid_file(kind)) if p not in pids]
        return pids

    def stop(self, timeout: float = 30.0) -> None:
        """Stop every daemon; raise :class:`HarnessError` if any survives.

        ``taskmanager.sh stop-all`` then ``jobmanager.sh stop-all`` (SIGTERM,
        Flink's scripts SIGKILL after 10 s), then wait for each pid; a
        survivor is ``SIGKILL``-ed only if its command line still names this
        sandbox's conf dir (pid-reuse safety).  Idempotent.
        """
        pids = self.daemon_pids()
        if not pids:
            return
        errors = []
        if self._env:
            # Sequential on purpose: flink-daemon.sh holds an flock on the pid dir
            # for its whole run, so concurrent stop-all calls serialise anyway.
            for script, kind in (("taskmanager.sh", "taskexecutor"), ("jobmanager.sh", "standalonesession")):
                # flink-daemon.sh waits up to 10 s per daemon before it SIGKILLs.
                budget = timeout + 12.0 * len(_read_pids(self._pid_file(kind)))
                try:
                    self._script(script, "stop-all", timeout=budget)
                except HarnessError as exc:
                    errors.append(str(exc))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and any(_pid_alive(p) for p in pids):
            time.sleep(0.2)
        survivors = [p for p in pids if _pid_alive(p)]
        killed = []
        for pid in survivors:
            if str(self.conf_dir) in _pid_cmdline(pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                killed.append(pid)
        kill_deadline = time.monotonic() + 10
        while time.monotonic() < kill_deadline and any(_pid_alive(p) for p in killed):
            time.sleep(0.1)
        still = [p for p in pids if _pid_alive(p)]
        self._daemons.clear()
        if still or killed:
            raise HarnessError(
                f"Flink daemons did not stop cleanly: SIGKILLed {killed}, still alive {still}"
                + ("\n" + "\n".join(errors) if errors else "")
            )

    def __enter__(self) -> Self:
        self.prepare()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            self.stop()
        except HarnessError as stop_error:
            if exc is None:
                raise
            exc.add_note(f"while cleaning up after it: {stop_error}")


#: Type of the ``flink_cluster_factory`` fixture (tests/flink_e2e/conftest.py):
#: ``make(**FlinkStandalone kwargs) -> FlinkStandalone``, stopped at teardown.
FlinkClusterFactory = Callable[..., FlinkStandalone]


# --------------------------------------------------------------------------- #
# One-call GPU scenario
# --------------------------------------------------------------------------- #


@dataclass(frozen=True)
class TaskManagerGpus:
    """Everything known about one TaskManager's GPUs after a scenario."""

    number: int
    resource_id: str
    pid: int
    discovery: DiscoveryOutcome
    probe_indexes: frozenset[str] | None  #: what an operator saw (None: probe not run)

    @property
    def gpus(self) -> frozenset[str] | None:
        """GPU indexes from the log (``None`` when discovery failed)."""
        return self.discovery.gpu_indexes if self.discovery.ok else None


@dataclass(frozen=True)
class GpuScenarioResult:
    taskmanagers: tuple[TaskManagerGpus, ...]
    coordination_file: Path
    coordination_text: str
    conf_dir: Path
    log_dir: Path
    probe: tuple[ProbeReport, ...]

    @property
    def gpu_sets(self) -> list[frozenset[str] | None]:
        """Per TaskManager (start order): its GPU indexes, ``None`` if discovery failed."""
        return [tm.gpus for tm in self.taskmanagers]


def run_gpu_scenario(
    conf_file: Path | Mapping[str, ConfigValue],
    discovery_script_path: Path | None = None,
    discovery_args: str | None = None,
    gpu_count: int = 4,
    taskmanagers: int = 3,
    *,
    work_dir: Path,
    flink_home: Path | None = None,
    taskmanager_slots: int | None = 1,
    gpu_resource: str = "gpu",
    gpu_name: str | None = None,
    extra_env: Mapping[str, str] | None = None,
    run_probe: bool = True,
    java_cache_dir: Path | None = None,
    startup_timeout: float = 180.0,
) -> GpuScenarioResult:
    """Start JM + ``taskmanagers`` TMs on a host with ``gpu_count`` fake GPUs.

    ``conf_file`` is a rendered ``config.yaml`` / ``flink-conf.yaml`` (used
    verbatim plus sandbox overrides, see :class:`FlinkStandalone`) or a mapping
    of flat keys.  The ONLY external-resource keys this function may override:

    * ``external-resource.<gpu_resource>.param.discovery-script.path`` -> the
      local ``discovery_script_path`` when given (rendered configs carry an
      image path such as ``/opt/flink/plugins/accelplane-gpu/accelplane-gpu-discovery``);
    * ``external-resource.<gpu_resource>.param.discovery-script.args`` ->
      ``discovery_args`` when given (``{coordination_file}`` is replaced by a
      per-run file); when ``discovery_args`` is ``None`` the configured args are
      kept except that their ``--coordination-file`` is pointed at the per-run
      file (see :func:`with_coordination_file`).

    TaskManagers are started one after another (TM ``n`` finishes discovery
    before TM ``n+1`` starts), each with ``taskmanager_slots`` slots (``None``
    keeps the configured number).  With ``run_probe`` the ``GpuProbe`` job
    runs on every slot and its per-TM indexes are returned next to the
    log-derived ones.  All daemons are stopped before returning, also on error.
    """
    home = flink_home or find_flink_home()
    work_dir.mkdir(parents=True, exist_ok=True)
    fake_dir = work_dir / "fake-bin"
    if gpu_name is None:
        install_fake_nvidia_smi(fake_dir, gpu_count)
    else:
        install_fake_nvidia_smi(fake_dir, gpu_count, gpu_name)
    env = {"PATH": f"{fake_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.update(extra_env or {})
    coordination_file = work_dir / "gpu-coordination"
    base: Mapping[str, ConfigValue] | Path = conf_file if isinstance(conf_file, Mapping) else Path(conf_file)
    cluster = FlinkStandalone(
        flink_home=home,
        work_dir=work_dir / "flink",
        base_config=base,
        extra_env=env,
        discovery_script_path=discovery_script_path,
        discovery_args=discovery_args,
        coordination_file=coordination_file,
        gpu_resource=gpu_resource,
        taskmanager_slots=taskmanager_slots,
        java_cache_dir=java_cache_dir,
        startup_timeout=startup_timeout,
    )
    with cluster:
        cluster.start(taskmanagers)
        # one subtask per slot: explicit when the slots per TM are known (Flink then waits for
        # every slot rather than deploying to fewer TaskManagers)
        parallelism = taskmanagers * taskmanager_slots if taskmanager_slots else None
        probe = cluster.run_gpu_probe(parallelism) if run_probe else []
        outcomes = {o.taskmanager_number: o for o in cluster.discovery_results()}
    by_tm: dict[str, set[str]] = {}
    for report in probe:
        by_tm.setdefault(report.taskmanager, set()).update(report.indexes)
    results = []
    for tm in cluster.taskmanagers:
        outcome = outcomes.get(tm.number)
        if outcome is None:
            raise HarnessError(f"no log for TaskManager {tm.resource_id}")
        seen = by_tm.get(tm.resource_id)
        results.append(
            TaskManagerGpus(
                number=tm.number,
                resource_id=tm.resource_id,
                pid=tm.pid,
                discovery=outcome,
                probe_indexes=frozenset(seen) if run_probe and seen is not None else None,
            )
        )
    coordination_text = coordination_file.read_text() if coordination_file.exists() else ""
    return GpuScenarioResult(
        taskmanagers=tuple(results),
        coordination_file=coordination_file,
        coordination_text=coordination_text,
        conf_dir=cluster.conf_dir,
        log_dir=cluster.log_dir,
        probe=tuple(probe),
    )
