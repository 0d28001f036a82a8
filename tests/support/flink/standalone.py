"""One sandboxed standalone Flink cluster: its configuration directory and the lifecycle of its
JobManager and TaskManager daemons (started with the distribution's own scripts).

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
directories, HA mode, checkpoint directories -- never the JVM options
(``env.java.opts.all``): a rendered file must carry what Flink needs on Java 17
itself.  With ``addresses_only`` the harness changes nothing but addresses and
ports (:data:`ADDRESS_KEYS`; pid and log directories go through the scripts'
environment, not the file): the cluster runs the rendered file as a user gets it.  After writing the
sandbox configuration the harness loads it with Flink's own parser and checks
that every override took effect and that every ``external-resource*`` key is
byte-for-byte what Flink read from the original file (except the two opt-in
keys above); a violation raises :class:`HarnessError`.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import time
import urllib.error
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Literal, Self

from tests.support.flink.config_files import (
    ADDRESS_KEYS,
    CONF_FILE_NAMES,
    ConfFormat,
    ConfigValue,
    apply_overrides,
    conf_format_of,
    legacy_value,
    render_flat_config,
    with_coordination_file,
)
from tests.support.flink.config_probe import load_with_flink
from tests.support.flink.errors import HarnessError
from tests.support.flink.home import java_opts_from_distribution
from tests.support.flink.java import FAST_DAEMON_GC, FAST_JVM_FLAGS, build_gpu_probe_jar
from tests.support.flink.jobs import ProbeReport, flink_run, parse_gpu_probe_output
from tests.support.flink.logs import TM_LOG_NAME, DiscoveryOutcome, parse_discovery_log
from tests.support.flink.processes import free_port, pid_alive, pid_cmdline, read_pids, run_checked, tail
from tests.support.flink.rest import RestClient


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
    (:data:`SANDBOX_KEYS`: ports, bind addresses, memory, pid/log/tmp dirs, HA off,
    local checkpoint dirs, and ``taskmanager.numberOfTaskSlots`` only when
    ``taskmanager_slots`` is given; with ``addresses_only`` just :data:`ADDRESS_KEYS`) and never ``external-resource*`` keys --
    except ``external-resource.<gpu_resource>.param.discovery-script.path``
    when ``discovery_script_path`` is given and ``...discovery-script.args``
    when ``discovery_args`` or ``coordination_file`` is given (see
    :func:`with_coordination_file`).  ``extra_overrides`` lets a caller add
    more sandbox keys (``external-resource*`` keys are rejected there).  The JVM
    options are never overridden: a mapping ``base_config`` (a hand-written
    config, like a user's edit of the distribution's file) gets the
    distribution's ``env.java.opts.all`` unless it sets its own; a rendered
    file is used as it is.

    ``extra_env`` is added to the daemons' and the CLI's environment (e.g.
    ``PATH`` with a fake ``nvidia-smi`` first).  ``fast_jvm`` (default on)
    adds :data:`FAST_JVM_FLAGS` and ``-XX:+UseSerialGC`` via ``JAVA_TOOL_OPTIONS``
    -- JVM tuning only, it changes nothing Flink reads from its configuration.  Each TaskManager gets
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
    addresses_only: bool = False

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

    @property
    def rest(self) -> RestClient:
        """Client of this cluster's JobManager REST API."""
        return RestClient(self.rest_url)

    @property
    def env(self) -> dict[str, str]:
        """The environment the cluster's scripts run with (sandbox FLINK_CONF_DIR, log and pid
        directories); callers that start Flink scripts of their own start from a copy of it."""
        return dict(self._env)

    def _discovery_key(self, suffix: str) -> str:
        return f"external-resource.{self.gpu_resource}.param.discovery-script.{suffix}"

    def sandbox_overrides(self, configured: Mapping[str, str]) -> dict[str, ConfigValue]:
        """The overrides written for this sandbox (``configured``: Flink's view of the base)."""
        tmp_dir = self.work_dir / "tmp"
        addresses: dict[str, ConfigValue] = {
            "jobmanager.rpc.address": "localhost",
            "jobmanager.rpc.port": str(self.rpc_port),
            "jobmanager.bind-host": "localhost",
            "taskmanager.host": "localhost",
            "taskmanager.bind-host": "localhost",
            "taskmanager.rpc.port": "0",
            "taskmanager.data.port": "0",
            "rest.address": "localhost",
            "rest.bind-address": "localhost",
            "rest.port": str(self.rest_port),
            "blob.server.port": "0",
            "metrics.internal.query-service.port": "0",
        }
        assert set(addresses) == ADDRESS_KEYS
        if self.addresses_only:
            if self.taskmanager_slots is not None or self.extra_overrides:
                raise HarnessError("addresses_only changes addresses and ports only")
            return {**addresses, **self._discovery_overrides(configured)}
        overrides: dict[str, ConfigValue] = {
            **addresses,
            "jobmanager.memory.process.size": self.memory,
            "taskmanager.memory.process.size": self.memory,
            "env.pid.dir": str(self.pid_dir),
            "env.log.dir": str(self.log_dir),
            "io.tmp.dirs": str(tmp_dir),
            "web.tmpdir": str(tmp_dir / "web"),
            "high-availability.type": "NONE",
            "state.checkpoints.dir": (self.work_dir / "checkpoints").as_uri(),
            "state.savepoints.dir": (self.work_dir / "savepoints").as_uri(),
        }
        if self.taskmanager_slots is not None:
            overrides["taskmanager.numberOfTaskSlots"] = str(self.taskmanager_slots)
        overrides.update(self.extra_overrides or {})
        overrides.update(self._discovery_overrides(configured))
        return overrides

    def _discovery_overrides(self, configured: Mapping[str, str]) -> dict[str, ConfigValue]:
        """The opt-in discovery-script path/args overrides (see the module docstring)."""
        overrides: dict[str, ConfigValue] = {}
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
        base = dict(self.base_config or {})
        if "env.java.opts.all" not in base and "env.java.opts" not in base:
            java_opts = java_opts_from_distribution(self.flink_home)
            if java_opts:
                base["env.java.opts.all"] = java_opts
        return render_flat_config(base, format_), format_

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
        conf_file = self.conf_dir / CONF_FILE_NAMES[format_]
        other = self.conf_dir / CONF_FILE_NAMES["legacy" if format_ == "yaml" else "yaml"]
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
            want = legacy_value(value)
            got = self.effective_config.get(key)
            if got != want and not (isinstance(value, (list, tuple)) and got is not None):
                problems.append(f"{key}: wanted {want!r}, Flink reads {got!r}")
        allowed = {self._discovery_key("path"), self._discovery_key("args")} & set(overrides)
        for key in sorted(set(base_view) | set(self.effective_config)):
            if (
                self.addresses_only
                and key not in ADDRESS_KEYS | allowed
                and base_view.get(key) != self.effective_config.get(key)
            ):
                problems.append(f"{key} changed in addresses_only mode")
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
            flags = [env.get("JAVA_TOOL_OPTIONS", ""), *FAST_JVM_FLAGS, FAST_DAEMON_GC]
            tool_options = " ".join(flags).strip()
            env["JAVA_TOOL_OPTIONS"] = tool_options
        env.update(self.extra_env or {})
        return env

    # -- daemons -------------------------------------------------------------

    def _pid_file(self, kind: str) -> Path:
        return self.pid_dir / f"flink-accelplane-{kind}.pid"

    def _script(self, name: str, *args: str, timeout: float = 120.0) -> str:
        proc = run_checked(
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
        before = read_pids(self._pid_file(kind))
        output = self._script(script, "start", *args)
        after = read_pids(self._pid_file(kind))
        new = [p for p in after if p not in before]
        if len(new) != 1:
            raise HarnessError(f"{script} start did not record exactly one new pid ({after}):\n{output}")
        self._daemons.append(_Daemon(kind, new[0]))
        return new[0]

    def _log_file(self, kind: str, number: int) -> Path | None:
        matches = sorted(self.log_dir.glob(f"flink-accelplane-{kind}-{number}-*.log"))
        return matches[0] if matches else None

    def _diagnostics(self, kind: str, number: int) -> str:
        parts = []
        log = self._log_file(kind, number)
        if log is not None:
            parts.append(f"--- {log.name} (tail) ---\n{tail(log)}")
            out = log.with_suffix(".out")
            if out.is_file() and out.stat().st_size:
                parts.append(f"--- {out.name} (tail) ---\n{tail(out)}")
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
            if not pid_alive(pid):
                raise HarnessError(
                    f"JobManager (pid {pid}) died during startup\n"
                    + self._diagnostics("standalonesession", 0)
                )
            try:
                self.rest.get_json("/overview")
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
        return self.rest.taskmanagers()

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
            if not pid_alive(pid):
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
            match = TM_LOG_NAME.match(path.name)
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
        """Slots the JobManager knows of (``GET /overview``)."""
        return self.rest.total_slots()

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
        return flink_run(
            self.flink_home,
            self.rest_port,
            jar,
            main_class,
            args,
            env=self._env,
            cwd=self.work_dir,
            log_dir=self.log_dir,
            parallelism=parallelism,
            timeout=timeout,
        )

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
            pids += [p for p in read_pids(self._pid_file(kind)) if p not in pids]
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
                budget = timeout + 12.0 * len(read_pids(self._pid_file(kind)))
                try:
                    self._script(script, "stop-all", timeout=budget)
                except HarnessError as exc:
                    errors.append(str(exc))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and any(pid_alive(p) for p in pids):
            time.sleep(0.2)
        survivors = [p for p in pids if pid_alive(p)]
        killed = []
        for pid in survivors:
            if str(self.conf_dir) in pid_cmdline(pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                killed.append(pid)
        kill_deadline = time.monotonic() + 10
        while time.monotonic() < kill_deadline and any(pid_alive(p) for p in killed):
            time.sleep(0.1)
        still = [p for p in pids if pid_alive(p)]
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
