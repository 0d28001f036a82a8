#!/usr/bin/env python3
"""accelplane GPU discovery script for Apache Flink's ``GPUDriver`` (drop-in for
``plugins/external-resource-gpu/nvidia-gpu-discovery.sh``).

Self-contained: standard library only (``pynvml`` from the ``nvidia-ml-py`` package is
used when importable), Python >= 3.7, Linux.  Run it as ``python3 gpu_discovery.py
AMOUNT [args]`` or install it as the console script ``accelplane-gpu-discovery``.

Contract with Flink
===================
Flink runs ``Runtime.exec("<abs path> <amount> <args>")``: the command line is split on
whitespace with NO quoting (so no argument, e.g. a coordination-file path, may contain
spaces), the literal word ``null`` is appended when ``discovery-script.args`` is unset, only
the FIRST stdout line is read and split on ``,``, and the script is killed after 10 s.  A
non-zero exit makes the TaskManager start with an EMPTY GPU set (it does not fail), so this
script is strict and loud: every message goes to STDERR, STDOUT carries only the result
line.

* ``AMOUNT`` (first argument, integer >= 0).  ``0`` prints nothing and exits 0 without
  touching the GPUs or the coordination file.
* Success: one line with the chosen GPU indexes (nvidia-smi / NVML index; amd-smi ``gpu``
  or rocm-smi ``cardN`` number), e.g. ``2,3``; exit 0.
* The extra word ``null`` is ignored; unknown flags and stray words are ignored with a
  warning on stderr.

Flags
=====
``--help`` lists them all (USAGE below); docs/discovery.md explains each.

Inventory
=========
NVIDIA: ``nvidia-smi --query-gpu=index,uuid,pci.bus_id,mig.mode.current,name
--format=csv,noheader`` (``name`` comes last so a comma inside a name cannot shift the
columns; lines that do not parse, such as nvidia-smi's "WARNING: infoROM is corrupted"
notices on stdout, are skipped with a warning; drivers without ``mig.mode.current`` are
retried without it) plus ``nvidia-smi -L`` for the MIG devices of MIG-enabled GPUs, else NVML
through ``pynvml`` (import and failures are silent unless ``--verbose``): nvidia-smi first
because it measured faster on a real H100 (`NVIDIA_AUTO_ORDER`).
AMD: ``amdsmi`` (ROCm's Python package, when importable), ``amd-smi list --json`` (+
``amd-smi static --asic --json`` for names), ``rocm-smi ... --json``, and ``kfd``: the
kernel's KFD topology in /sys with the GPUs whose /dev/dri render node exists here (standard
library only; first with --isolated-devices, as the ROCm device plugin passes a container
exactly its GPUs' /dev/dri nodes). In-process libraries get half of the remaining time budget
(a hanging ``nvmlInit`` is abandoned in its thread), tools at most 5 s and 4 MiB of output.

Visibility: ``NVIDIA_VISIBLE_DEVICES`` in every form the NVIDIA device plugin and container
runtime leave it (UUIDs, indexes, the volume-mounts directory, ``void`` from CDI, ``all``,
``none``, unset; see docs/discovery.md), then ``CUDA_VISIBLE_DEVICES`` (NVIDIA);
``ROCR_VISIBLE_DEVICES`` then ``HIP_VISIBLE_DEVICES`` (AMD).  Entries are indexes or UUIDs
(a unique UUID prefix is enough, as with CUDA; MIG devices as ``MIG-...`` or ``<gpu>:<mig>``);
as CUDA does, an entry that matches no GPU ends the list (warning).  Index entries are read as
nvidia-smi indexes, which equal CUDA ordinals only with ``CUDA_DEVICE_ORDER=PCI_BUS_ID``
(warned about on mixed-model nodes).  The result lists GPUs in visibility order;
non-coordination mode returns the first N of them, exactly like Flink's script (so every
TaskManager on the host gets the same ones: use coordination mode when a host runs several
TaskManagers).

MIG: when only MIG-mode GPUs are visible their MIG devices are handed out, numbered 0, 1, ...
as CUDA numbers the visible MIG devices; one CUDA process uses only one (warned about).

Coordination file, format version 2
===================================
Text, UTF-8, ``\\n`` line ends; an empty (0-byte) or missing file is a fresh file; version 1
files (same records, written in place by older versions) are read and replaced by v2::

    # accelplane-gpu-coordination v2
    <gpu-key> <index> <pid> <starttime> <boot-id> <pidns> <unix-time>
    ...
    # end crc32=<8 hex digits>

one record per allocated GPU, fields separated by ONE space. Always written as v2, the format
every release since the lock-file protocol reads, so a rollback keeps working (docs/discovery.md,
"Rollback"); v3 (v2 + an owner label per record), which some 1.0.0 builds wrote with
``--owner-label``, is read and rewritten as v2. Owner labels live in a side file old versions
never open, ``<file>.labels`` (same framing, header ``# accelplane-gpu-labels v1``, lines
``<gpu-key> <pid> <starttime> <boot-id> <label>``): a label applies only to the record of exactly
that owner, so labels left by a newer version for owners an older version replaced never apply.
A side file that cannot be read only costs the metrics their labels:

* gpu-key: NVIDIA UUID (``GPU-...``, ``MIG-...`` for a MIG device); for AMD
  ``pci:<domain:bus:dev.fn>`` (the backends print different UUID forms, the PCI address is
  the same); ``index:<n>`` only when the backend gives neither.
* index: the index reported to Flink.
* pid, starttime: owner PID (1..2**22, Linux's PID_MAX_LIMIT) and its start time (field 22
  of ``/proc/<pid>/stat``, clock ticks since boot) -- together they survive PID reuse.
* boot-id: ``/proc/sys/kernel/random/boot_id`` when written; records of another boot are
  stale (``/var/tmp`` survives reboots).
* pidns: inode number of the writer's PID namespace (``/proc/self/ns/pid``), ``-`` if
  unknown.  A record from ANOTHER PID namespace cannot be checked (its PID means nothing
  here) and is treated as alive: it is freed by ``--release`` from its namespace or a reboot,
  unless ``--isolated-devices`` says the allocator gave this container its visible GPUs
  exclusively: then such a record for a GPU visible here is left over from a container that is
  gone, and is reclaimed.
* unix-time: allocation time, for humans.

The end line carries the CRC-32 (``binascii.crc32``) of every byte before it, so a truncated
or hand-edited file is detected instead of being read as a mix of records.  Anything else -- a
missing header or end line, a checksum mismatch, a malformed or duplicate record, a number
field over 20 digits, another version, a file over 1 MiB, or Flink's own ``"<index> <pid>"``
format -- is refused with exit code 3 and a message on stderr: never guess, never
double-allocate.

Locking and writing: an exclusive ``flock`` on ``<file>.lock`` (created next to the file and
never replaced, so every process locks the same inode; polled with capped back-off for at most
the time budget, then exit 3).  Under the lock the file is read, and an update is written to
``<file>.tmp`` (O_EXCL), fsync-ed, renamed over the file, and the directory is fsync-ed: a crash,
kill -9 or ENOSPC at any point leaves the previous state or the complete new one.  Records are
matched by exact key, never by prefix.

Safety: the file and its lock file are ``lstat``-ed and opened with ``O_NOFOLLOW``: a
symlink, a non-regular file or a file with several hard links is refused; a file owned by another uid is refused
unless ``--allow-foreign-owner``; a world-writable file is warned about.  A new file is
created with ``O_EXCL`` and ``fchmod``-ed to ``--file-mode`` (default 0660, so TaskManagers
of one group can share it; the group is the creator's or the directory's setgid group).

Owner liveness: a record's owner is alive iff its boot id is the current one, and (if it
comes from our PID namespace) ``/proc/<pid>/stat`` exists, is not a zombie and shows the
recorded start time.  A PID that ``/proc`` hides (mount option ``hidepid``) but the kernel
knows (``kill(pid, 0)`` says EPERM) counts as alive.  Dead owners' records for the GPUs we
can see are dropped whenever the file is written; records for GPUs we cannot see are kept
untouched.  The owner is the parent process unless ``--owner-pid``: a parent that is a shell
is warned about (a wrapper that does not ``exec`` would free the GPUs as soon as it exits),
and a parent that is an init process (the caller died and we were re-parented) is refused.

Allocation: the first AMOUNT eligible GPUs that have no live owner.  Idempotent: when the
same live owner asks again and already holds exactly AMOUNT eligible GPUs it gets the same
ones back (nothing is written); holding a different number is an error (``--release``
first).  Nothing is released when a TaskManager stops (Flink has no hook); its GPUs are
reclaimed once it is dead, or explicitly with ``--release``.

Owner metrics: with ``--metrics-file PATH`` every write of the coordination file also writes
PATH, atomically (temporary file, fsync, rename), in Prometheus' text format for node-exporter's
textfile collector: ``accelplane_gpu_owner{flink_cluster, gpu_index, gpu_uuid, host, pid} 1`` per
held GPU; ``--export-metrics`` rewrites it from the coordination file alone (dead owners left
out), for a timer. A failure to write it only warns.

Exit codes: 0 ok; 1 not enough GPUs; 2 usage; 3 coordination file unsafe, corrupt, locked
too long or unwritable; 4 no inventory backend worked; 70 internal error.
"""

# Table of contents (one shipped, standalone file: the sections below, in this order; search for
# "==================== <n>." to jump to one)
#   1. settings: constants, exit codes, usage, errors and the stderr log
#   2. model: the ``Gpu`` record, bus ids and model names
#   3. CLI: options and argument parsing
#   4. commands: running inventory tools with a time and output budget
#   5. NVIDIA: inventory through NVML (pynvml) or nvidia-smi, MIG devices; the bounded in-process
#      library calls (import checks, a thread with a timeout) that AMD's amdsmi uses too
#   6. AMD: inventory through amdsmi, amd-smi, rocm-smi or the kernel's KFD topology
#   7. inventory: choosing the vendor and backend, unique GPUs
#   8. filters: visibility variables, container device lists, model and count selection
#   9. coordination, owners: processes, boot id, PID namespace, who holds a GPU
#  10. coordination, file: format, safe open and locking, allocation, release
#  11. output, metrics: the owner metrics for node-exporter's textfile collector
#  12. output, result: the one stdout line (flink, spark or json)
#  13. CLI: entry points (run, main, console_main)

from __future__ import annotations

import errno
import fcntl
import os
import stat
import sys
import time

MYPY = False
if MYPY:  # type checkers only: importing typing costs start-up time on every TaskManager start
    from collections.abc import Callable
    from typing import Any, TypeVar

    T = TypeVar("T")

# ==================== 1. settings: constants, exit codes, usage, errors and the stderr log

__version__ = "1.0.0"

PROG = "accelplane-gpu-discovery"
FILE_HEADER = "# accelplane-gpu-coordination v2"
FILE_HEADER_V3 = "# accelplane-gpu-coordination v3"  # v2 + an owner label per record: read, never written
LABELS_HEADER = "# accelplane-gpu-labels v1"
LABELS_SUFFIX = ".labels"
FILE_HEADERS_READ = (FILE_HEADER, "# accelplane-gpu-coordination v1")  # v1: same records, locked in place
NO_LABEL = "-"
MAX_LABEL_CHARS = 63
METRIC_NAME = "accelplane_gpu_owner"
FILE_HEADER_PREFIX = "# accelplane-gpu-coordination v"
FILE_END_PREFIX = "# end crc32="
DEFAULT_COORDINATION_FILE = "/var/tmp/flink-gpu-coordination"
DEFAULT_FILE_MODE = 0o660
DEFAULT_TIMEOUT = 9.0
COMMAND_TIMEOUT = 5.0
BACKEND_ENV = "ACCELPLANE_GPU_DISCOVERY_BACKEND"
ROOT_ENV = "ACCELPLANE_GPU_DISCOVERY_ROOT"  # prefix for /sys and /dev (tests, a host tree mounted elsewhere)
LOCK_SUFFIX = ".lock"
TMP_SUFFIX = ".tmp"
MAX_FILE_BYTES = 1 << 20  # ~8,000 records; a host has a few hundred GPUs and MIG devices at most
MAX_OUTPUT_BYTES = 4 << 20  # what an inventory tool may print before we stop reading and kill it
PID_MAX_LIMIT = 1 << 22  # Linux PID_MAX_LIMIT: no process id is larger
MAX_NUMBER_DIGITS = 20
CONTAINER_DEVICES_DIR = "/var/run/nvidia-container-devices"

EXIT_OK = 0
EXIT_UNSATISFIABLE = 1
EXIT_USAGE = 2
EXIT_COORDINATION = 3
EXIT_INVENTORY = 4
EXIT_INTERNAL = 70

NVIDIA_BACKENDS = ("nvml", "nvidia-smi")
NVIDIA_AUTO_ORDER = ("nvidia-smi", "nvml")
"""``--backend auto`` tries nvidia-smi first: on an H100 (driver 580) one call of ours through
nvidia-smi took 33.6 ms, through NVML 81.6 ms (loading ``site`` and pynvml, ``nvmlInit``; the
median of 30 interleaved samples, bench/bench_discovery_gpu.py, docs/benchmarks.md). NVML is the
fallback where nvidia-smi is missing or fails (a container without the ``utility`` capability's
binaries, a broken tool)."""
AMD_BACKENDS = ("amdsmi", "amd-smi", "rocm-smi", "kfd")
AMD_ISOLATED_BACKENDS = ("kfd", "amdsmi", "amd-smi", "rocm-smi")  # a container: ROCm's own view first
ALL_BACKENDS = NVIDIA_BACKENDS + AMD_BACKENDS
FORMATS = ("flink", "spark", "json")
VENDORS = ("auto", "nvidia", "amd")
NVIDIA_SMI_FIELDS = ("index", "uuid", "pci.bus_id", "mig.mode.current", "name")
SHELLS = ("sh", "bash", "dash", "zsh", "ksh", "mksh", "busybox", "ash")
INITS = ("systemd", "init", "tini", "dumb-init", "docker-init", "catatonit", "s6-svscan", "runit")
_KEY_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:._-")
_BOOT_ID_CHARS = frozenset("0123456789abcdef-")

USAGE = """\
usage: {prog} AMOUNT [flags]
       {prog} [AMOUNT] --release [--coordination-file PATH] [--owner-pid PID]
       {prog} AMOUNT --check-free [--coordination-file PATH] [flags]
       {prog} --export-metrics --metrics-file PATH [--coordination-file PATH]
       {prog} --hold-start-lock PATH [--timeout S] [--file-mode OCTAL] -- COMMAND [ARG...]
Prints the chosen GPU indexes on one stdout line; everything else goes to stderr.
Arguments cannot contain spaces (Flink splits the command line on whitespace).

flags:
  --enable-coordination-mode   share the host's GPUs with other TaskManagers through a locked file
  --privilege                  alias of --enable-coordination-mode (FLIP-108 name)
  --coordination-file PATH     coordination file (default /var/tmp/flink-gpu-coordination)
  --assign-file PATH           alias of --coordination-file (FLIP-108 name)
  --check-dead                 accepted, no effect: dead owners are always reclaimed
  --isolated-devices           this container's GPUs were allocated to it exclusively (device
                               plugin, YARN GPU isolation): trust what the runtime injected
                               (NVIDIA_VISIBLE_DEVICES=void or the volume-mounts directory) and
                               reclaim records another PID namespace left for a GPU visible here
  --vendor nvidia|amd|auto     which GPUs to look for (default auto: NVIDIA, then AMD)
  --backend auto|nvml|nvidia-smi|amdsmi|amd-smi|rocm-smi|kfd
                               force one inventory backend (also env {backend_env})
  --model NAME                 only GPUs of this model (case, spaces, '-', '_' ignored)
  --include-mig                hand out MIG-mode GPUs whole instead of their MIG devices
  --format flink|spark|json    output: 0,1 | Spark resource JSON | details per GPU
  --release                    give back the GPUs the owner holds (implies coordination mode)
  --check-free                 only check (a start script's preflight): AMOUNT eligible GPUs have
                               no live owner in the coordination file; names the holders
                               otherwise (exit 1); writes nothing
  --owner-pid PID              owner process (default: the parent, the TaskManager JVM)
  --owner-label NAME           record this name (the Flink cluster) with the GPUs the owner holds
  --metrics-file PATH          after each change, write the held GPUs as Prometheus text
                               (node-exporter textfile collector), atomically
  --export-metrics             only rewrite --metrics-file from the coordination file (a timer)
  --allow-foreign-owner        accept a coordination file owned by another uid
  --file-mode OCTAL            mode of a new coordination file (default 0660)
  --timeout SECONDS            total time budget (default 9; Flink kills the script at 10 s)
  --verbose, -v                explain decisions on stderr
  --help, -h                   this text
'--enable-coordination' (a typo in Flink's docs) is warned about and treated as coordination mode.
Exit codes: 0 ok, 1 not enough GPUs, 2 usage, 3 coordination file, 4 no GPU inventory, 70 internal.
"""


class DiscoveryError(Exception):
    """A failure with a user-facing message and an exit code."""

    def __init__(self, message: str, code: int) -> None:
        Exception.__init__(self, message)
        self.message = message
        self.code = code


class BackendUnavailable(Exception):
    """An inventory backend could not produce a GPU list (``timed_out``: it exists but hangs)."""

    def __init__(self, message: str, timed_out: bool = False) -> None:
        Exception.__init__(self, message)
        self.timed_out = timed_out


class Log:
    """stderr logger; stdout is reserved for the one result line."""

    def __init__(self, verbose: bool = False) -> None:
        self.verbose = verbose

    def _write(self, text: str) -> None:
        try:
            sys.stderr.write(text + "\n")
            sys.stderr.flush()
        except (OSError, ValueError):  # stderr closed: nowhere left to complain
            return

    def error(self, msg: str) -> None:
        self._write(f"{PROG}: error: {msg}")

    def warning(self, msg: str) -> None:
        self._write(f"{PROG}: warning: {msg}")

    def info(self, msg: str) -> None:
        if self.verbose:
            self._write(f"{PROG}: {msg}")


# ==================== 2. model: the Gpu record, bus ids and model names


class Gpu:
    """A whole GPU, or (``parent`` set) a MIG device: ``parent`` is the index of its GPU,
    ``mig_index`` its number under that GPU (nvidia-smi's ``Device N``), ``index`` the number
    CUDA gives it among the visible MIG devices (assigned by eligible_gpus)."""

    __slots__ = ("_key", "aliases", "bus_id", "index", "mig", "mig_index", "name", "parent", "uuid", "vendor")

    def __init__(
        self,
        index: int,
        uuid: str | None,
        name: str = "",
        bus_id: str | None = None,
        mig: bool | None = None,
        vendor: str = "nvidia",
        aliases: tuple[str, ...] = (),
        parent: int | None = None,
        mig_index: int | None = None,
    ) -> None:
        self.index = index
        self.uuid = uuid
        self.name = name
        self.bus_id = bus_id
        self.mig = mig
        self.vendor = vendor
        self.aliases = aliases
        self.parent = parent
        self.mig_index = mig_index
        self._key = ""

    @property
    def is_mig_device(self) -> bool:
        return self.parent is not None

    @property
    def key(self) -> str:
        """Identity used in the coordination file (see the module docstring)."""
        if not self._key:
            if self.vendor == "amd" and self.bus_id:
                raw = "pci:" + normalize_bus_id(self.bus_id)
            elif self.uuid:
                raw = self.uuid
            elif self.parent is not None:
                raw = f"mig:{self.parent}:{self.mig_index}"
            else:
                raw = f"index:{self.index}"
            self._key = (
                raw if _KEY_CHARS.issuperset(raw) else "".join(c if c in _KEY_CHARS else "_" for c in raw)
            )
        return self._key

    def ids(self) -> list[str]:
        out = [self.uuid] if self.uuid else []
        return out + list(self.aliases)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Gpu):
            return NotImplemented
        return all(getattr(self, s) == getattr(other, s) for s in self.__slots__ if s != "_key")

    def __hash__(self) -> int:
        return hash((self.index, self.uuid, self.bus_id, self.parent, self.mig_index))

    def __repr__(self) -> str:
        extra = "" if self.parent is None else f", parent={self.parent}, mig_index={self.mig_index}"
        return (
            f"Gpu({self.index}, {self.uuid!r}, {self.name!r}, bus_id={self.bus_id!r}, "
            f"mig={self.mig!r}, vendor={self.vendor!r}{extra})"
        )


def normalize_bus_id(bus: str) -> str:
    """``00000000:17:00.0`` / ``0000:17:00.0`` / ``17:00.0`` -> ``0000:17:00.0``."""
    b = bus.strip().lower()
    parts = b.split(":")
    if len(parts) == 2:
        parts = ["0", *parts]
    if len(parts) == 3:
        try:
            return f"{int(parts[0], 16):04x}:{parts[1]}:{parts[2]}"
        except ValueError:
            pass
    return b


def normalize_model(name: str) -> str:
    """Model token for --model matching: lowercased, whitespace, '-' and '_' removed (the same rule
    as accelplane.names.normalize_gpu_model; this script ships standalone, so it keeps a copy)."""
    return "".join(ch for ch in name.lower() if not ch.isspace() and ch not in "-_")


def model_matches(name: str, wanted: str) -> bool:
    def variants(s: str) -> set[str]:
        n = normalize_model(s)
        out = {n}
        for prefix in ("nvidia", "amd"):
            if n.startswith(prefix) and len(n) > len(prefix):
                out.add(n[len(prefix) :])
        return out

    w = normalize_model(wanted)
    return bool(w) and w in variants(name)


# ==================== 3. CLI: options and argument parsing


class Options:
    def __init__(self) -> None:
        self.amount: int | None = None
        self.coordination = False
        self.coordination_file = DEFAULT_COORDINATION_FILE
        self.vendor = "auto"
        self.backend = ""  # "" = not given on the command line
        self.model: str | None = None
        self.fmt = "flink"
        self.release = False
        self.check_free = False
        self.owner_pid: int | None = None
        self.allow_foreign_owner = False
        self.file_mode = DEFAULT_FILE_MODE
        self.timeout = DEFAULT_TIMEOUT
        self.include_mig = False
        self.isolated_devices = False
        self.owner_label = NO_LABEL
        self.metrics_file: str | None = None
        self.export_metrics = False
        self.verbose = False
        self.help = False


_VALUE_FLAGS = {
    "--coordination-file": "coordination_file",
    "--assign-file": "coordination_file",
    "--vendor": "vendor",
    "--backend": "backend",
    "--model": "model",
    "--format": "fmt",
    "--owner-pid": "owner_pid",
    "--file-mode": "file_mode",
    "--timeout": "timeout",
    "--owner-label": "owner_label",
    "--metrics-file": "metrics_file",
}
_BOOL_FLAGS = {
    "--enable-coordination-mode": "coordination",
    "--privilege": "coordination",
    "--release": "release",
    "--check-free": "check_free",
    "--allow-foreign-owner": "allow_foreign_owner",
    "--include-mig": "include_mig",
    "--isolated-devices": "isolated_devices",
    "--export-metrics": "export_metrics",
    "--verbose": "verbose",
    "-v": "verbose",
    "--help": "help",
    "-h": "help",
}


def _usage_error(msg: str) -> DiscoveryError:
    return DiscoveryError(f"{msg} (run with --help for usage)", EXIT_USAGE)


def _is_digits(s: str) -> bool:
    return s.isdigit() and s.isascii()


def _set_value(opts: Options, attr: str, flag: str, value: str) -> None:
    if attr == "vendor":
        if value.lower() not in VENDORS:
            raise _usage_error(f"{flag} must be one of {'|'.join(VENDORS)}, not {value!r}")
        opts.vendor = value.lower()
    elif attr == "backend":
        if value.lower() not in (*ALL_BACKENDS, "auto"):
            raise _usage_error(f"{flag} must be one of auto|{'|'.join(ALL_BACKENDS)}, not {value!r}")
        opts.backend = value.lower()
    elif attr == "fmt":
        if value.lower() not in FORMATS:
            raise _usage_error(f"{flag} must be one of {'|'.join(FORMATS)}, not {value!r}")
        opts.fmt = value.lower()
    elif attr == "owner_pid":
        if not _is_digits(value) or int(value) <= 0:
            raise _usage_error(f"{flag} needs a positive process id, not {value!r}")
        opts.owner_pid = int(value)
    elif attr == "file_mode":
        try:
            mode = int(value, 8)
        except ValueError:
            raise _usage_error(f"{flag} needs an octal mode such as 0660, not {value!r}") from None
        if mode < 0 or mode > 0o777 or mode & 0o600 != 0o600:
            raise _usage_error(f"{flag} must be within 0600..0777 and keep owner read/write, not {value!r}")
        opts.file_mode = mode
    elif attr == "timeout":
        try:
            t = float(value)
        except ValueError:
            t = -1.0
        if not 0 < t <= 3600:
            raise _usage_error(f"{flag} needs a number of seconds > 0, not {value!r}")
        opts.timeout = t
    elif attr == "model":
        if not normalize_model(value):
            raise _usage_error(f"{flag} needs a model name")
        opts.model = value
    elif attr == "owner_label":
        if not value or len(value) > MAX_LABEL_CHARS or not _KEY_CHARS.issuperset(value) or value == NO_LABEL:
            raise _usage_error(f"{flag} needs a name of letters, digits, ':', '.', '_', '-' (at most 63), not {value!r}")
        opts.owner_label = value
    elif attr == "metrics_file":
        if not value.startswith("/"):
            raise _usage_error(f"{flag} needs an absolute path, not {value!r}")
        opts.metrics_file = value
    else:  # coordination_file
        if not value:
            raise _usage_error(f"{flag} needs a path")
        opts.coordination_file = value


def parse_args(argv: list[str], log: Log) -> Options:
    opts = Options()
    i = 0
    while i < len(argv):
        tok = argv[i]
        i += 1
        if tok == "null":
            # Flink appends the literal word "null" when discovery-script.args is unset.
            continue
        flag, eq, inline = tok.partition("=") if tok.startswith("--") else (tok, "", "")
        if flag in _VALUE_FLAGS:
            if eq:
                value = inline
            elif i < len(argv) and not argv[i].startswith("--"):
                value = argv[i]
                i += 1
            else:
                raise _usage_error(f"{flag} needs a value")
            _set_value(opts, _VALUE_FLAGS[flag], flag, value)
        elif flag in _BOOL_FLAGS and not eq:
            setattr(opts, _BOOL_FLAGS[flag], True)
        elif flag == "--check-dead" and not eq:
            pass  # FLIP-108 name; reclaiming dead owners is always on.
        elif flag == "--enable-coordination" and not eq:
            log.warning(
                "'--enable-coordination' is NOT a valid flag (Flink's documentation shows it by "
                "mistake and Flink's own script silently ignores it); did you mean "
                "'--enable-coordination-mode'? Treating it as --enable-coordination-mode. "
                "Please fix external-resource.gpu.param.discovery-script.args."
            )
            opts.coordination = True
        elif tok.startswith("-") and tok != "-":
            log.warning(f"ignoring unknown argument {tok!r}")
        elif opts.amount is None and _is_digits(tok):
            opts.amount = int(tok)
        elif opts.amount is None and not opts.release:
            raise _usage_error(f"the GPU amount must be a non-negative integer, not {tok!r}")
        else:
            log.warning(f"ignoring unexpected argument {tok!r}")
    if opts.verbose:
        log.verbose = True
    if opts.release and opts.check_free:
        raise _usage_error("--check-free and --release exclude each other")
    if opts.release or opts.check_free or opts.export_metrics:
        opts.coordination = True
    if opts.amount is None and not opts.release and not opts.export_metrics and not opts.help:
        raise _usage_error("missing the GPU amount (first argument)")
    return opts


# ==================== 4. commands: running inventory tools with a time and output budget


class Deadline:
    """The total time budget (--timeout). One inventory command may take COMMAND_TIMEOUT, or half
    of a larger budget (a caller that grants 120 s accepts a slow tool on a loaded host)."""

    def __init__(self, seconds: float) -> None:
        self.end = time.monotonic() + seconds
        self.command_cap = max(COMMAND_TIMEOUT, seconds / 2)

    def for_command(self) -> float:
        return min(self.command_cap, self.left())

    def left(self) -> float:
        return self.end - time.monotonic()


def which(name: str) -> str | None:
    for d in os.environ.get("PATH", os.defpath).split(os.pathsep):
        p = os.path.join(d or ".", name)
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    return None


def run_command(argv: list[str], timeout: float) -> tuple[int, str, str]:
    """Run a command, return (rc, stdout, stderr); raises BackendUnavailable.

    Bounded in time (``timeout``) and in memory (at most MAX_OUTPUT_BYTES of output, then the
    command is killed: a tool that prints forever must not fill our memory before Flink's 10 s
    are up). Uses ``os.posix_spawn`` + ``select`` rather than ``subprocess`` where it can:
    importing ``subprocess`` costs more than running nvidia-smi."""
    exe = which(argv[0])
    if exe is None:
        raise BackendUnavailable(f"{argv[0]} not found on PATH")
    if timeout <= 0:
        raise BackendUnavailable(f"no time left to run {argv[0]}")
    proc = None
    if hasattr(os, "posix_spawn"):
        out_r, out_w = os.pipe()  # non-inheritable (PEP 446): only the dup2-ed copies reach the child
        err_r, err_w = os.pipe()
        try:
            pid = os.posix_spawn(
                exe,
                [exe, *argv[1:]],
                dict(os.environ),
                file_actions=[
                    (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                    (os.POSIX_SPAWN_DUP2, out_w, 1),
                    (os.POSIX_SPAWN_DUP2, err_w, 2),
                ],
            )
        except OSError as e:
            for fd in (out_r, out_w, err_r, err_w):
                os.close(fd)
            raise BackendUnavailable(f"cannot run {exe}: {e}") from e
        os.close(out_w)
        os.close(err_w)
    else:  # Python 3.7
        import subprocess

        try:
            proc = subprocess.Popen(
                [exe, *argv[1:]], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
        except OSError as e:
            raise BackendUnavailable(f"cannot run {exe}: {e}") from e
        pid = proc.pid
        out_r, err_r = os.dup(proc.stdout.fileno()), os.dup(proc.stderr.fileno())  # type: ignore[union-attr]
        proc.stdout.close()  # type: ignore[union-attr]
        proc.stderr.close()  # type: ignore[union-attr]
    import select

    chunks: dict[int, list[bytes]] = {out_r: [], err_r: []}
    open_fds = [out_r, err_r]
    end = time.monotonic() + timeout
    total = 0
    try:
        while open_fds:
            left = end - time.monotonic()
            ready = select.select(open_fds, [], [], max(left, 0))[0] if left > 0 else []
            if not ready:
                _kill_and_reap(pid, proc)
                raise BackendUnavailable(f"{argv[0]} did not answer within {timeout:.1f} s", timed_out=True)
            for fd in ready:
                data = os.read(fd, 65536)
                if data:
                    chunks[fd].append(data)
                    total += len(data)
                else:
                    open_fds.remove(fd)
            if total > MAX_OUTPUT_BYTES:
                _kill_and_reap(pid, proc)
                raise BackendUnavailable(
                    f"{argv[0]} printed more than {MAX_OUTPUT_BYTES} bytes; stopped reading and killed it"
                )
    finally:
        os.close(out_r)
        os.close(err_r)
    status = os.waitpid(pid, 0)[1]
    if proc is not None:
        proc.returncode = 0  # reaped here; keep subprocess from waiting again
    rc = os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)
    return (
        rc,
        b"".join(chunks[out_r]).decode("utf-8", "replace"),
        b"".join(chunks[err_r]).decode("utf-8", "replace"),
    )


def _kill_and_reap(pid: int, proc: object) -> None:
    try:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
    except OSError:
        pass
    if proc is not None:
        proc.returncode = -9  # type: ignore[attr-defined]


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:300]
    return "(no output)"


# ==================== 5. NVIDIA: inventory through NVML (pynvml) or nvidia-smi, MIG devices


def _na(value: str | None) -> str | None:
    if value is None:
        return None
    v = value.strip()
    if not v or v.strip("[]").lower() in (
        "n/a",
        "not supported",
        "unknown error",
        "insufficient permissions",
    ):
        return None
    return v


class _Muffled:
    """While foreign code runs (pynvml import, the NVML C library), keep stdout clean: Python
    and fd-level stdout go to stderr when verbose, and stdout, stderr and Python warnings go
    nowhere otherwise (the deprecated ``pynvml`` wrapper package warns on import)."""

    def __init__(self, verbose: bool) -> None:
        self.verbose = verbose
        self.saved: list[tuple[int, int]] = []

    def __enter__(self) -> _Muffled:
        import io
        import warnings

        self._warnings = warnings.catch_warnings()
        self._warnings.__enter__()
        warnings.simplefilter("ignore")
        self.saved_stdout, self.saved_stderr = sys.stdout, sys.stderr
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                continue
        try:
            if self.verbose:
                self._redirect(1, 2)
            else:
                null = os.open(os.devnull, os.O_WRONLY)
                try:
                    self._redirect(1, null)
                    self._redirect(2, null)
                finally:
                    os.close(null)
        except OSError:  # no usable fd 1/2: nothing to protect
            self._restore()
        sink = sys.stderr if self.verbose else io.StringIO()
        sys.stdout = sys.stderr = sink
        return self

    def _redirect(self, fd: int, target: int) -> None:
        self.saved.append((fd, os.dup(fd)))
        os.dup2(target, fd)

    def _restore(self) -> None:
        while self.saved:
            fd, copy = self.saved.pop()
            os.dup2(copy, fd)
            os.close(copy)

    def __exit__(self, *exc: object) -> None:
        sys.stdout, sys.stderr = self.saved_stdout, self.saved_stderr
        self._restore()
        self._warnings.__exit__(None, None, None)


def _text(value: object) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


_ABANDONED_THREADS: list[object] = []

RUN_BY_ENTRY_STUB = False
"""Set to True by the entry stub that node installs run (``python3 -I -S`` on the module
byte-compiled at install time, see docs/discovery.md). Without ``site`` the packages of the
library backends (pynvml, amdsmi) are not on ``sys.path``: when one of them lies in this
interpreter's venv or system site directories, ``site`` is loaded then, and only then
(`_importable`). The process also ends with ``os._exit`` once its output is flushed (`_exit`):
tearing down the interpreter's modules would add a millisecond or two to every call."""


def _spec_found(name: str) -> bool:
    """Whether an import system finder locates top-level module ``name``; nothing is imported."""
    for finder in sys.meta_path:
        find = getattr(finder, "find_spec", None)
        if find is None:
            return True  # a finder of the old protocol: cannot ask it, let the import decide
        try:
            if find(name, None) is not None:
                return True
        except Exception:  # a broken finder: let the real import report it
            return True
    return False


def _site_dirs() -> list[str]:
    """Directories ``site`` would put on ``sys.path`` for this interpreter: its venv's and the
    system's site-/dist-packages (upstream, Debian and Red Hat layouts)."""
    ver = "python{}.{}".format(*sys.version_info[:2])
    prefixes = [sys.base_prefix, os.path.join(sys.base_prefix, "local")]
    if sys.executable:  # a venv: <venv>/bin/python3; abspath keeps the venv's symlink unresolved
        prefixes.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(sys.executable))))
    subdirs = ("lib/" + ver + "/site-packages", "lib64/" + ver + "/site-packages",
               "lib/" + ver + "/dist-packages", "lib/python3/dist-packages")
    return [os.path.join(p, d) for p in prefixes for d in subdirs]


def _importable(name: str) -> bool:
    """Whether ``import name`` can succeed, decided without importing it: a node without the
    library skips its backend before the thread and the stdout muffling a real import needs
    (about 2 ms per call). Under the entry stub (`RUN_BY_ENTRY_STUB`) a library in a site directory
    loads ``site`` first, as a plain ``python3`` would have."""
    if name in sys.modules or _spec_found(name):
        return True
    if not (RUN_BY_ENTRY_STUB and sys.flags.no_site):
        return False
    if not any(os.path.exists(os.path.join(d, name + ".py")) or os.path.isdir(os.path.join(d, name))
               for d in _site_dirs()):
        return False
    import site

    site.main()
    return _spec_found(name)


def _bounded_call(what: str, func: Callable[[], T], timeout: float) -> T:
    """Run ``func`` in a daemon thread and give up after ``timeout`` seconds.

    A library call that hangs (``nvmlInit`` on a wedged driver) cannot be interrupted; the
    thread is abandoned and the script exits with os._exit once it has printed its result."""
    import threading

    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["value"] = func()
        except BaseException as e:  # handed to the caller
            box["error"] = e

    thread = threading.Thread(target=work, name=what, daemon=True)
    thread.start()
    thread.join(max(timeout, 0.0))
    if thread.is_alive():
        _ABANDONED_THREADS.append(thread)
        raise BackendUnavailable(f"{what} did not answer within {timeout:.1f} s", timed_out=True)
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]


def _library_timeout(deadline: Deadline | None) -> float:
    """Time an in-process library may take: at most half of what is left, so the command-line
    tool after it still gets its turn when the library hangs."""
    return COMMAND_TIMEOUT if deadline is None else min(deadline.command_cap, deadline.left() / 2)


def inventory_nvml(log: Log, deadline: Deadline | None = None) -> list[Gpu]:
    """Whole GPUs and the MIG devices of MIG-enabled ones, from NVML, within the time budget."""
    if not _importable("pynvml"):
        raise BackendUnavailable("pynvml not importable (No module named 'pynvml')")
    with _Muffled(log.verbose):
        return _bounded_call("NVML", lambda: _nvml_query(log), _library_timeout(deadline))


def _nvml_query(log: Log) -> list[Gpu]:
    try:
        import pynvml  # type: ignore[import-untyped, unused-ignore]
    except Exception as e:  # ImportError, or a broken install
        raise BackendUnavailable(f"pynvml not importable ({e})") from e
    try:
        pynvml.nvmlInit()
    except Exception as e:
        raise BackendUnavailable(f"NVML initialisation failed: {e}") from e
    try:
        gpus = []
        migs: list[Gpu] = []
        mig_enabled = getattr(pynvml, "NVML_DEVICE_MIG_ENABLE", 1)
        for i in range(int(pynvml.nvmlDeviceGetCount())):
            h = pynvml.nvmlDeviceGetHandleByIndex(i)
            try:
                index = int(pynvml.nvmlDeviceGetIndex(h))
            except Exception:
                index = i
            uuid = _na(_text(pynvml.nvmlDeviceGetUUID(h)))
            name = _text(pynvml.nvmlDeviceGetName(h))
            try:
                bus: str | None = _na(_text(pynvml.nvmlDeviceGetPciInfo(h).busId))
            except Exception:
                bus = None
            try:
                current, _pending = pynvml.nvmlDeviceGetMigMode(h)
                mig: bool | None = current == mig_enabled
            except Exception:  # NVMLError_NotSupported on GPUs without MIG
                mig = None
            gpus.append(Gpu(index, uuid, name, bus, mig, "nvidia"))
            if mig:
                migs.extend(_nvml_mig_devices(pynvml, h, index, bus, len(migs)))
        return gpus + migs
    except Exception as e:
        raise BackendUnavailable(f"NVML query failed: {e}") from e
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception as e:
            log.info(f"nvmlShutdown failed: {e}")


def _nvml_mig_devices(pynvml: Any, handle: object, parent: int, bus: str | None, first: int) -> list[Gpu]:
    """The MIG devices of one MIG-enabled GPU (empty slots are skipped)."""
    try:
        slots = int(pynvml.nvmlDeviceGetMaxMigDeviceCount(handle))
    except Exception:
        return []
    out: list[Gpu] = []
    for j in range(slots):
        try:
            mh = pynvml.nvmlDeviceGetMigDeviceHandleByIndex(handle, j)
        except Exception:  # NVMLError_NotFound: no MIG device in this slot
            continue
        uuid = _na(_text(pynvml.nvmlDeviceGetUUID(mh)))
        try:
            name = _text(pynvml.nvmlDeviceGetName(mh))
        except Exception:
            name = ""
        out.append(Gpu(first + len(out), uuid, name, bus, None, "nvidia", parent=parent, mig_index=j))
    return out


def parse_nvidia_smi(text: str, fields: tuple[str, ...], log: Log) -> list[Gpu]:
    """Parse ``--format=csv,noheader`` output of the given fields (``name`` last)."""
    gpus = []
    for line in text.splitlines():
        if not line.strip():
            continue
        cols = [c.strip() for c in line.split(",", len(fields) - 1)]
        row = {f: cols[k] for k, f in enumerate(fields) if k < len(cols)}
        if len(cols) != len(fields) or not _is_digits(row["index"]):
            log.warning(f"skipping unparseable nvidia-smi line: {line[:200]!r}")
            continue
        mig_text = _na(row.get("mig.mode.current"))
        gpus.append(
            Gpu(
                int(row["index"]),
                _na(row["uuid"]),
                row["name"],
                _na(row["pci.bus_id"]),
                None if mig_text is None else mig_text.lower() == "enabled",
                "nvidia",
            )
        )
    return gpus


def inventory_nvidia_smi(log: Log, deadline: Deadline) -> list[Gpu]:
    fields: tuple[str, ...] = NVIDIA_SMI_FIELDS
    for _attempt in range(2):
        rc, out, err = run_command(
            ["nvidia-smi", "--query-gpu=" + ",".join(fields), "--format=csv,noheader"],
            deadline.for_command(),
        )
        if rc == 0:
            gpus = parse_nvidia_smi(out, fields, log)
            if any(g.mig for g in gpus):
                gpus += _nvidia_smi_mig_devices(gpus, log, deadline)
            return gpus
        if "mig.mode.current" in fields and "mig.mode.current" in out + err:
            log.info("nvidia-smi does not know mig.mode.current; retrying without it")
            fields = tuple(f for f in fields if f != "mig.mode.current")
            continue
        break
    raise BackendUnavailable(f"nvidia-smi exited with {rc}: {_first_line(err + chr(10) + out)}")


def parse_nvidia_smi_list(text: str, gpus: list[Gpu], log: Log) -> list[Gpu]:
    """MIG devices from ``nvidia-smi -L``::

        GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-...)
          MIG 1g.10gb     Device  0: (UUID: MIG-...)

    Each MIG line belongs to the GPU line above it; ``index`` is the device's position in
    the listing (eligible_gpus renumbers what is visible)."""
    import re

    gpu_line = re.compile(r"^GPU\s+(\d+):\s*(.*?)\s*\(UUID:\s*([^)\s]+)\s*\)\s*$")
    mig_line = re.compile(r"^\s+MIG\s+(\S+)\s+Device\s+(\d+):\s*\(UUID:\s*([^)\s]+)\s*\)\s*$")
    by_index = {g.index: g for g in gpus if not g.is_mig_device}
    parent: Gpu | None = None
    out: list[Gpu] = []
    for line in text.splitlines():
        m = gpu_line.match(line)
        if m:
            parent = by_index.get(int(m.group(1)))
            continue
        m = mig_line.match(line)
        if m and parent is not None:
            name = f"{parent.name} MIG {m.group(1)}".strip()
            out.append(
                Gpu(len(out), _na(m.group(3)), name, parent.bus_id, None, "nvidia",
                    parent=parent.index, mig_index=int(m.group(2)))
            )
        elif line.strip() and not m:
            log.info(f"ignoring nvidia-smi -L line: {line[:200]!r}")
    return out


def _nvidia_smi_mig_devices(gpus: list[Gpu], log: Log, deadline: Deadline) -> list[Gpu]:
    rc, out, err = run_command(["nvidia-smi", "-L"], deadline.for_command())
    if rc != 0:
        log.warning(f"nvidia-smi -L exited with {rc}: {_first_line(err + chr(10) + out)}; MIG devices unknown")
        return []
    return parse_nvidia_smi_list(out, gpus, log)


# ==================== 6. AMD: inventory through amdsmi, amd-smi, rocm-smi or the kernel's KFD topology


def _json_document(text: str, what: str) -> object:
    import json

    start = min([p for p in (text.find("{"), text.find("[")) if p >= 0] or [-1])
    if start < 0:
        raise BackendUnavailable(f"{what} printed no JSON: {_first_line(text)}")
    try:
        return json.JSONDecoder().raw_decode(text[start:])[0]
    except ValueError as e:
        raise BackendUnavailable(f"{what} printed malformed JSON: {e}") from e


def _json_items(doc: object) -> list[dict[str, object]]:
    if isinstance(doc, dict) and isinstance(doc.get("gpu_data"), list):
        doc = doc["gpu_data"]
    if isinstance(doc, dict):  # {"gpu_0": {...}} style
        doc = list(doc.values())
    if not isinstance(doc, list):
        return []
    return [d for d in doc if isinstance(d, dict)]


def _str_field(d: dict[str, object], *names: str) -> str | None:
    lower = {k.lower(): v for k, v in d.items()}
    for n in names:
        v = lower.get(n.lower())
        if isinstance(v, (str, int)) and not isinstance(v, bool):
            s = _na(str(v))
            if s is not None:
                return s
    return None


def parse_amd_smi(list_doc: object, static_doc: object = None) -> list[Gpu]:
    names: dict[int, str] = {}
    for item in _json_items(static_doc):
        gpu = item.get("gpu")
        asic = item.get("asic")
        if isinstance(gpu, int) and isinstance(asic, dict):
            name = _str_field(asic, "market_name")
            if name:
                names[gpu] = name
    gpus = []
    for item in _json_items(list_doc):
        gpu = item.get("gpu")
        if isinstance(gpu, str) and _is_digits(gpu):
            gpu = int(gpu)
        if not isinstance(gpu, int) or isinstance(gpu, bool):
            continue
        uuid = _str_field(item, "uuid")
        hip_uuid = _str_field(item, "hip_uuid")
        aliases = tuple(a for a in (hip_uuid,) if a and a != uuid)
        gpus.append(Gpu(gpu, uuid, names.get(gpu, ""), _str_field(item, "bdf"), None, "amd", aliases))
    return gpus


def inventory_amd_smi(log: Log, deadline: Deadline, need_names: bool) -> list[Gpu]:
    rc, out, err = run_command(["amd-smi", "list", "--json"], deadline.for_command())
    if rc != 0:
        raise BackendUnavailable(f"amd-smi list exited with {rc}: {_first_line(err + chr(10) + out)}")
    list_doc = _json_document(out, "amd-smi list")
    static_doc: object = None
    if need_names:
        rc, sout, serr = run_command(
            ["amd-smi", "static", "--asic", "--json"], deadline.for_command()
        )
        if rc == 0:
            static_doc = _json_document(sout, "amd-smi static")
        else:
            log.warning(
                "amd-smi static failed ({}); GPU names unknown".format(_first_line(serr + "\n" + sout))
            )
    return with_board_names(parse_amd_smi(list_doc, static_doc))


def with_board_names(gpus: list[Gpu]) -> list[Gpu]:
    """AMD GPUs named by their board's sysfs ``product_name`` (``AMD Instinct MI300X OAM``), the
    name the AMD DRA driver, the node labeller and the KFD backend report, where amd-smi gives the
    libdrm market name (``AMD Instinct MI300X``): ``--model`` then means the same GPU whichever
    backend answers. A GPU whose PCI device has no readable ``product_name`` keeps its name."""
    root = _root()
    for g in gpus:
        if not g.bus_id:
            continue
        try:
            board = _read_small(f"{root}/sys/bus/pci/devices/{g.bus_id.lower()}/product_name").strip()
        except OSError:
            continue
        if board:
            g.name = board
    return gpus


def parse_rocm_smi(doc: object) -> list[Gpu]:
    gpus: list[Gpu] = []
    if not isinstance(doc, dict):
        return gpus
    for card, info in doc.items():
        if not (isinstance(card, str) and card.startswith("card") and _is_digits(card[4:])):
            continue
        if not isinstance(info, dict):
            continue
        uid = _str_field(info, "Unique ID")
        uuid = None
        if uid:
            try:
                uuid = f"GPU-{int(uid, 16):016x}"
            except ValueError:
                uuid = uid
        name = _str_field(info, "Card Series", "Card series", "Device Name", "Card Model") or ""
        gpus.append(Gpu(int(card[4:]), uuid, name, _str_field(info, "PCI Bus"), None, "amd"))
    return sorted(gpus, key=lambda g: g.index)


def inventory_rocm_smi(log: Log, deadline: Deadline) -> list[Gpu]:
    rc, out, err = run_command(
        ["rocm-smi", "--showuniqueid", "--showproductname", "--showbus", "--json"],
        deadline.for_command(),
    )
    if rc != 0:
        raise BackendUnavailable(f"rocm-smi exited with {rc}: {_first_line(err + chr(10) + out)}")
    return with_board_names(parse_rocm_smi(_json_document(out, "rocm-smi")))


def inventory_amdsmi(log: Log, deadline: Deadline | None = None) -> list[Gpu]:
    """AMD GPUs through the ``amdsmi`` Python package (ROCm's AMD SMI library, used only when
    importable), the counterpart of pynvml; index = position in amdsmi's processor list."""
    if not _importable("amdsmi"):
        raise BackendUnavailable("amdsmi not importable (No module named 'amdsmi')")
    with _Muffled(log.verbose):
        return with_board_names(_bounded_call("amdsmi", lambda: _amdsmi_query(log), _library_timeout(deadline)))


def _amdsmi_query(log: Log) -> list[Gpu]:
    try:
        import amdsmi  # type: ignore[import-not-found, unused-ignore]
    except Exception as e:  # ImportError, or the package without ROCm's libamd_smi.so
        raise BackendUnavailable(f"amdsmi not importable ({e})") from e
    try:
        amdsmi.amdsmi_init()
    except Exception as e:
        raise BackendUnavailable(f"amdsmi initialisation failed: {e}") from e
    try:
        gpus = []
        for i, h in enumerate(amdsmi.amdsmi_get_processor_handles()):
            try:
                bdf: str | None = _na(_text(amdsmi.amdsmi_get_gpu_device_bdf(h)))
            except Exception:
                bdf = None
            try:
                uuid: str | None = _na(_text(amdsmi.amdsmi_get_gpu_device_uuid(h)))
            except Exception:
                uuid = None
            try:
                asic = amdsmi.amdsmi_get_gpu_asic_info(h)
                name = _text(asic.get("market_name", "")) if isinstance(asic, dict) else ""
            except Exception:
                name = ""
            gpus.append(Gpu(i, uuid, name, bdf, None, "amd"))
        return gpus
    except Exception as e:
        raise BackendUnavailable(f"amdsmi query failed: {e}") from e
    finally:
        try:
            amdsmi.amdsmi_shut_down()
        except Exception as e:
            log.info(f"amdsmi_shut_down failed: {e}")


def _root() -> str:
    return os.environ.get(ROOT_ENV, "").rstrip("/")


def _read_small(path: str) -> str:
    with open(path, "rb") as f:
        return f.read(65536).decode("utf-8", "replace")


def inventory_kfd(log: Log) -> list[Gpu]:
    """AMD GPUs from the kernel's KFD topology (``/sys/class/kfd/kfd/topology/nodes/N``),
    standard library only: what ROCm's runtime enumerates. A GPU node (``simd_count`` > 0)
    counts only when its render node ``/dev/dri/renderD<drm_render_minor>`` exists here:
    the ROCm device plugin gives a container exactly ``/dev/kfd`` and the ``/dev/dri`` nodes of
    its GPUs, and ROCm skips GPUs whose render node it cannot open. index = position among
    them, i.e. the HIP device ordinal (before ROCR/HIP_VISIBLE_DEVICES)."""
    root = _root()
    nodes_dir = root + "/sys/class/kfd/kfd/topology/nodes"
    try:
        nodes = sorted((n for n in os.listdir(nodes_dir) if _is_digits(n)), key=int)
    except OSError as e:
        raise BackendUnavailable(f"no KFD topology ({nodes_dir}: {e.strerror})") from e
    gpus: list[Gpu] = []
    hidden = 0
    for node in nodes:
        try:
            props = {}
            for line in _read_small(f"{nodes_dir}/{node}/properties").splitlines():
                parts = line.split()
                if len(parts) == 2 and _is_digits(parts[1]):
                    props[parts[0]] = int(parts[1])
        except OSError as e:
            log.info(f"KFD node {node} unreadable: {e.strerror}")
            continue
        if props.get("simd_count", 0) <= 0:
            continue  # a CPU node
        minor = props.get("drm_render_minor", 0)
        render = f"{root}/dev/dri/renderD{minor}"
        if not minor or not os.path.exists(render):
            hidden += 1
            continue
        loc = props.get("location_id", 0)
        bdf = f"{props.get('domain', 0):04x}:{(loc >> 8) & 0xFF:02x}:{(loc >> 3) & 0x1F:02x}.{loc & 0x7:x}"
        uid = props.get("unique_id")
        uuid = f"GPU-{uid:016x}" if uid else None
        name = ""
        for candidate in (f"{root}/sys/class/drm/renderD{minor}/device/product_name", f"{nodes_dir}/{node}/name"):
            try:
                name = _read_small(candidate).strip()
            except OSError:
                continue
            if name:
                break
        if not os.access(render, os.R_OK | os.W_OK):
            log.warning(
                f"{render} is here but not read-writable for uid {os.geteuid()}: ROCm cannot open it "
                "either (add the group owning it to the pod's supplementalGroups)"
            )
        gpus.append(Gpu(len(gpus), uuid, name, bdf, None, "amd"))
    if hidden:
        log.info(f"{hidden} KFD GPU node(s) have no render node here (not given to this container)")
    return gpus


# ==================== 7. inventory: choosing the vendor and backend, unique GPUs


def inventory(opts: Options, log: Log, deadline: Deadline) -> tuple[list[Gpu], str]:
    """Return (gpus, backend name) from the first backend that sees at least one GPU."""
    backend = opts.backend or os.environ.get(BACKEND_ENV, "").strip().lower() or "auto"
    if backend not in (*ALL_BACKENDS, "auto"):
        raise _usage_error(
            "{} must be one of auto|{}, not {!r}".format(BACKEND_ENV, "|".join(ALL_BACKENDS), backend)
        )
    if backend != "auto":
        order: tuple[str, ...] = (backend,)
    elif opts.vendor == "nvidia":
        order = NVIDIA_AUTO_ORDER
    else:
        amd = AMD_ISOLATED_BACKENDS if opts.isolated_devices else AMD_BACKENDS
        order = amd if opts.vendor == "amd" else NVIDIA_AUTO_ORDER + amd
    need_names = opts.model is not None or opts.fmt == "json"
    problems = []
    nvidia_hangs = False
    for name in order:
        if nvidia_hangs and name not in NVIDIA_BACKENDS:
            # An NVIDIA tool that exists but hangs means an NVIDIA node (a loaded or wedged one):
            # never hand out another vendor's devices instead.
            problems.append(f"{name}: not tried, an NVIDIA backend is present but did not answer")
            continue
        try:
            if name == "nvml":
                gpus = inventory_nvml(log, deadline)
            elif name == "nvidia-smi":
                gpus = inventory_nvidia_smi(log, deadline)
            elif name == "amdsmi":
                gpus = inventory_amdsmi(log, deadline)
            elif name == "amd-smi":
                gpus = inventory_amd_smi(log, deadline, need_names)
            elif name == "kfd":
                gpus = inventory_kfd(log)
            else:
                gpus = inventory_rocm_smi(log, deadline)
        except BackendUnavailable as e:
            log.info(f"backend {name} unavailable: {e}")
            problems.append(f"{name}: {e}")
            nvidia_hangs = nvidia_hangs or (e.timed_out and name in NVIDIA_BACKENDS and backend == "auto")
            continue
        if not gpus:
            log.info(f"backend {name} reports no GPUs")
            problems.append(f"{name}: no GPUs reported")
            continue
        check_unique(gpus, name)
        log.info(f"backend {name}: " + ", ".join(f"{g.index}={g.uuid or '?'}" for g in gpus))
        return gpus, name
    raise DiscoveryError("no GPU found ({})".format("; ".join(problems)), EXIT_INVENTORY)


def check_unique(gpus: list[Gpu], backend: str) -> None:
    """An inventory that lists one index or one GPU identity twice is broken (a driver or
    virtualisation fault): refuse it with a clear message instead of writing records that
    the next run would refuse."""
    seen_index: dict[tuple[bool, int], Gpu] = {}
    seen_key: dict[str, Gpu] = {}
    for g in gpus:
        slot = (g.is_mig_device, g.index)
        if slot in seen_index:
            raise DiscoveryError(f"{backend} reported GPU index {g.index} twice", EXIT_INVENTORY)
        seen_index[slot] = g
        other = seen_key.get(g.key)
        if other is not None:
            raise DiscoveryError(
                f"{backend} reported the same GPU {g.key} twice (indexes {other.index} and {g.index}); "
                "fix the driver or the virtualisation layer before handing out GPUs",
                EXIT_INVENTORY,
            )
        seen_key[g.key] = g


# ==================== 8. filters: visibility variables, container device lists, model and count selection


def _match_entry(units: list[Gpu], entry: str, var: str, log: Log, positional: bool = False) -> Gpu | None:
    """The unit (GPU or MIG device) a visibility entry names: an index (``positional``: the
    N-th unit, as HIP reads HIP_VISIBLE_DEVICES), ``<gpu>:<mig>`` (the plugin's index form of
    a MIG device), or a UUID (``GPU-``/``MIG-``) or unique UUID prefix."""
    if _is_digits(entry):
        n = int(entry)
        if positional:
            return units[n] if n < len(units) else None
        for g in units:
            if not g.is_mig_device and g.index == n:
                return g
        return None
    parts = entry.split(":")
    if len(parts) == 2 and all(_is_digits(p) for p in parts):
        for g in units:
            if g.is_mig_device and (g.parent, g.mig_index) == (int(parts[0]), int(parts[1])):
                return g
        return None
    low = entry.lower()
    exact = [g for g in units if any(i.lower() == low for i in g.ids())]
    if exact:
        return exact[0]
    prefixed = [g for g in units if any(i.lower().startswith(low) for i in g.ids())]
    if len(prefixed) == 1:
        return prefixed[0]
    if len(prefixed) > 1:
        log.warning(f"{var} entry {entry!r} is an ambiguous UUID prefix")
    return None


def apply_visibility(
    gpus: list[Gpu],
    var: str,
    value: str | None,
    log: Log,
    container_renumbers: bool = False,
    positional: bool = False,
) -> list[Gpu]:
    """The units a visibility list keeps, in its order. A whole GPU named by the list brings
    its MIG devices along (a container given a MIG-mode GPU sees all of its MIG devices)."""
    if value is None or value.strip().lower() == "all":
        return gpus
    v = value.strip()
    if v.lower() in ("", "none", "void"):
        log.info(f"{var}={value!r} hides every GPU")
        return []
    entries = [e.strip() for e in v.split(",")]
    whole = [g for g in gpus if not g.is_mig_device]
    if container_renumbers and all(_is_digits(e) for e in entries) and len(whole) <= len(entries):
        log.info(f"{var}={v} lists host indexes the container runtime already applied")
        return gpus
    if container_renumbers and all(_is_mig_index(e) for e in entries) and _mig_count(gpus) <= len(entries):
        log.info(f"{var}={v} lists host MIG devices the container runtime already applied")
        return gpus
    result: list[Gpu] = []
    for entry in entries:
        g = _match_entry(gpus, entry, var, log, positional)
        if g is None:
            log.warning(
                f"{var} entry {entry!r} matches no GPU; it and the entries after it are ignored "
                "(as CUDA does)"
            )
            break
        if g in result:
            log.warning(f"{var} lists GPU {g.index} twice")
            continue
        result.append(g)
        if g.mig:
            result.extend(m for m in gpus if m.parent == g.index and m not in result)
    return result


def _is_mig_index(entry: str) -> bool:
    parts = entry.split(":")
    return len(parts) == 2 and all(_is_digits(p) for p in parts)


def _mig_count(gpus: list[Gpu]) -> int:
    return sum(1 for g in gpus if g.is_mig_device)


def container_device_list(value: str, log: Log) -> list[str] | None:
    """The device ids of the NVIDIA device plugin's ``volume-mounts`` strategy: the plugin sets
    NVIDIA_VISIBLE_DEVICES to the directory /var/run/nvidia-container-devices and mounts one
    (empty) file per allocated device into it, named by the device id. None if unreadable."""
    try:
        names = os.listdir(value)
    except OSError as e:
        log.info(f"NVIDIA_VISIBLE_DEVICES={value}: cannot list it ({e.strerror})")
        return None
    return sorted(n for n in names if not os.path.isdir(os.path.join(value, n)))


def nvidia_container_visibility(gpus: list[Gpu], value: str | None, opts: Options, log: Log) -> list[Gpu]:
    """Apply NVIDIA_VISIBLE_DEVICES in every form the device plugin and the container runtime
    leave it (see docs/discovery.md). With --isolated-devices, each form that means "the runtime
    already injected this container's devices" keeps what the inventory sees."""
    var = "NVIDIA_VISIBLE_DEVICES"
    raw = None if value is None else value.strip()
    if raw is not None and raw.startswith("/"):
        ids = container_device_list(raw, log)
        if ids:
            ids = [i for i in ids if i != "imex"]
            kept = apply_visibility(gpus, var, ",".join(ids), log, container_renumbers=True)
            order = {id(g): n for n, g in enumerate(gpus)}
            return sorted(kept, key=lambda g: order[id(g)])  # a directory has no order: inventory order
        if opts.isolated_devices:
            log.info(f"{var}={raw}: device list unreadable; the runtime injected this container's GPUs")
            return gpus
        log.warning(
            f"{var}={raw} is the device plugin's volume-mounts directory, but it lists no device here; "
            "pass --isolated-devices if this container's GPUs were injected by the runtime"
        )
        return []
    if raw is not None and raw.lower() in ("", "void") and opts.isolated_devices:
        # CDI (cdi-annotations, cdi-cri): the CDI spec sets NVIDIA_VISIBLE_DEVICES=void and the
        # runtime injects the allocated device nodes; NVML sees exactly those.
        log.info(f"{var}={raw!r}: devices injected through CDI; using what the inventory sees")
        return gpus
    if raw is not None and raw.lower() in ("", "void"):
        log.warning(
            f"{var}={raw!r} hides every GPU; in a container whose GPUs CDI injected (the device "
            "plugin's cdi-annotations / cdi-cri strategies) pass --isolated-devices"
        )
    return apply_visibility(gpus, var, value, log, container_renumbers=True)


def select_units(gpus: list[Gpu], opts: Options, log: Log) -> list[Gpu]:
    """Whole GPUs, or MIG devices, to hand out; MIG devices get CUDA's numbers.

    CUDA numbers the visible MIG devices from 0 (in this order), and one CUDA process
    enumerates only one MIG device. Where whole GPUs and MIG devices are both visible, the whole
    GPUs are handed out (CUDA's mixed numbering would be guesswork); --include-mig hands out
    MIG-mode GPUs whole instead, as before MIG devices were known."""
    whole = [g for g in gpus if not g.is_mig_device]
    if opts.include_mig:
        return whole
    plain = [g for g in whole if not g.mig]
    mig_mode = [g for g in whole if g.mig]
    devices = [g for g in gpus if g.is_mig_device]
    if plain or not devices:
        if mig_mode:
            log.warning(
                "skipping GPU(s) {} in MIG mode (pass --include-mig to hand them out whole)".format(
                    ",".join(str(g.index) for g in mig_mode)
                )
            )
        return plain
    numbered = []
    for n, g in enumerate(devices):
        numbered.append(
            Gpu(n, g.uuid, g.name, g.bus_id, None, g.vendor, g.aliases, parent=g.parent, mig_index=g.mig_index)
        )
    empty = [g.index for g in mig_mode if not any(d.parent == g.index for d in devices)]
    if empty:
        log.info(f"GPU(s) {','.join(map(str, empty))} in MIG mode show no MIG device here")
    return numbered


def eligible_gpus(gpus: list[Gpu], opts: Options, log: Log) -> list[Gpu]:
    env = os.environ
    vendor = gpus[0].vendor if gpus else "nvidia"
    if vendor == "nvidia":
        gpus = nvidia_container_visibility(gpus, env.get("NVIDIA_VISIBLE_DEVICES"), opts, log)
        cvd = env.get("CUDA_VISIBLE_DEVICES")
        mixed = bool(cvd) and len({normalize_model(g.name) for g in gpus if not g.is_mig_device}) > 1
        gpus = apply_visibility(gpus, "CUDA_VISIBLE_DEVICES", cvd, log)
        if (
            cvd
            and mixed
            and env.get("CUDA_DEVICE_ORDER") != "PCI_BUS_ID"
            and any(_is_digits(e.strip()) for e in cvd.split(","))
        ):
            log.warning(
                "CUDA_VISIBLE_DEVICES uses indexes on a node with mixed GPU models: they are read "
                "as nvidia-smi indexes, which match CUDA ordinals only with CUDA_DEVICE_ORDER=PCI_BUS_ID"
            )
        gpus = select_units(gpus, opts, log)
    else:
        rocr = env.get("ROCR_VISIBLE_DEVICES")
        gpus = apply_visibility(gpus, "ROCR_VISIBLE_DEVICES", rocr, log)
        # HIP_VISIBLE_DEVICES is applied by HIP on top of what ROCr shows: its indexes count the
        # GPUs ROCR_VISIBLE_DEVICES left, in that order.
        gpus = apply_visibility(
            gpus, "HIP_VISIBLE_DEVICES", env.get("HIP_VISIBLE_DEVICES"), log,
            positional=rocr is not None and rocr.strip().lower() != "all",
        )
    if opts.model is not None:
        wanted = opts.model
        kept = [g for g in gpus if model_matches(_model_name(g), wanted)]
        if not kept and gpus:
            models = sorted({g.name or "?" for g in gpus})
            log.warning(f"no GPU matches --model {wanted}; models here: {', '.join(models)}")
        gpus = kept
    return gpus


def _model_name(g: Gpu) -> str:
    """The GPU model a MIG device belongs to (its name is '<model> MIG <profile>')."""
    if g.is_mig_device and " MIG " in g.name:
        return g.name.rsplit(" MIG ", 1)[0]
    return g.name


def mig_warning(chosen: list[Gpu], log: Log) -> None:
    """One CUDA process enumerates only one MIG device (NVIDIA MIG user guide, "CUDA Device
    Enumeration"): say so when a TaskManager gets more than one, or one CUDA won't number 0."""
    migs = [g for g in chosen if g.is_mig_device]
    if len(migs) > 1 or (migs and migs[0].index != 0):
        log.warning(
            f"handing out MIG device(s) {_describe(migs)}: a CUDA process enumerates only ONE MIG device "
            "(its device 0); the others are usable only by processes started with "
            "CUDA_VISIBLE_DEVICES=<MIG UUID> (see --format json)"
        )



# ==================== 9. coordination, owners: processes, boot id, PID namespace, who holds a GPU


def proc_stat(pid: int) -> tuple[str, int, str] | None:
    """(state, starttime, comm) of a process, or None if it does not exist."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except (FileNotFoundError, ProcessLookupError):
        return None
    except OSError as e:
        if e.errno in (errno.ENOENT, errno.ESRCH):
            return None
        raise
    lpar, rpar = data.find(b"("), data.rfind(b")")
    fields = data[rpar + 2 :].split()
    # fields[0] is field 3 (state); field 22 (starttime) is fields[19].
    return (
        fields[0].decode("ascii", "replace"),
        int(fields[19]),
        data[lpar + 1 : rpar].decode("utf-8", "replace"),
    )


def boot_id() -> str:
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            value = f.read().strip()
    except OSError as e:
        raise DiscoveryError(f"coordination mode needs Linux /proc (boot id: {e})", EXIT_COORDINATION) from e
    if not value or not _BOOT_ID_CHARS.issuperset(value):
        raise DiscoveryError(f"unexpected boot id {value!r}", EXIT_COORDINATION)
    return value


def pid_namespace() -> str:
    try:
        link = os.readlink("/proc/self/ns/pid")  # "pid:[4026531836]"
    except OSError:
        return "-"
    inner = link[link.find("[") + 1 : link.rfind("]")]
    return inner if _is_digits(inner) else "-"


class Owner:
    __slots__ = ("boot", "pid", "pidns", "start")

    def __init__(self, pid: int, start: int, boot: str, pidns: str) -> None:
        self.pid, self.start, self.boot, self.pidns = pid, start, boot, pidns


class Record:
    __slots__ = ("boot", "index", "key", "label", "pid", "pidns", "stamp", "start")

    def __init__(
        self, key: str, index: int, pid: int, start: int, boot: str, pidns: str, stamp: int, label: str = NO_LABEL
    ) -> None:
        self.key, self.index, self.pid, self.start = key, index, pid, start
        self.boot, self.pidns, self.stamp, self.label = boot, pidns, stamp, label

    def line(self) -> str:
        return f"{self.key} {self.index} {self.pid} {self.start} {self.boot} {self.pidns} {self.stamp}"

    def owned_by(self, o: Owner) -> bool:
        return (self.pid, self.start, self.boot, self.pidns) == (o.pid, o.start, o.boot, o.pidns)


def _other_namespace(a: str, b: str) -> bool:
    """True when two PID-namespace ids are known and differ."""
    return a != b and "-" not in (a, b)


def owner_alive(rec: Record, boot: str, pidns: str) -> bool:
    if rec.boot != boot:
        return False  # written before the last reboot
    if rec.pidns != pidns and "-" not in (rec.pidns, pidns):
        return True  # another PID namespace: its PID means nothing here; never steal
    st = proc_stat(rec.pid)
    if st is None:
        # /proc may hide other users' processes (mount option hidepid): ask the kernel.
        try:
            os.kill(rec.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass
        return True  # exists but its start time cannot be read: never steal
    if st[0] in ("Z", "X", "x"):
        return False
    return st[1] == rec.start  # a different start time means the PID was reused


def current_owner(opts: Options, log: Log, allocating: bool = True) -> Owner:
    pid = opts.owner_pid if opts.owner_pid is not None else os.getppid()
    st = proc_stat(pid)
    if st is None or st[0] in ("Z", "X", "x"):
        raise DiscoveryError(f"owner process {pid} is not running", EXIT_USAGE)
    if opts.owner_pid is None and st[2] in INITS:
        raise DiscoveryError(
            f"the parent process is {st[2]} (pid {pid}): the caller has exited, so there is "
            "no owner to record; pass --owner-pid to name one",
            EXIT_USAGE,
        )
    if allocating and opts.owner_pid is None and st[2] in SHELLS:
        log.warning(
            f"the owner (parent process {pid}) is a shell ({st[2]}): if it is a wrapper around this "
            "script its GPUs are freed as soon as it exits; make the wrapper 'exec' this script or "
            "pass --owner-pid"
        )
    return Owner(pid, st[1], boot_id(), pid_namespace())


# ==================== 10. coordination, file: format, safe open and locking, allocation, release


def _corrupt(path: str, why: str) -> DiscoveryError:
    return DiscoveryError(
        f"coordination file {path} is unusable: {why}. Refusing to guess (that is how GPUs get handed out "
        "twice). Inspect it; remove it only when no TaskManager on this host holds GPUs.",
        EXIT_COORDINATION,
    )


def parse_records(content: bytes, path: str) -> list[Record]:
    if not content:
        return []
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError:
        raise _corrupt(path, "it is not UTF-8 text") from None
    lines = text.split("\n")
    v3 = lines[0] == FILE_HEADER_V3
    if not v3 and lines[0] not in FILE_HEADERS_READ:
        body = [ln for ln in lines if ln.strip()]
        if body and all(len(ln.split()) == 2 and all(_is_digits(p) for p in ln.split()) for ln in body):
            raise _corrupt(
                path,
                "it is in the '<index> <pid>' format of Flink's nvidia-gpu-discovery.sh; "
                "do not share a coordination file between that script and this one",
            )
        if lines[0].startswith(FILE_HEADER_PREFIX):
            raise _corrupt(
                path, f"unsupported format version {lines[0]!r} (this script reads v1 to v3)"
            )
        raise _corrupt(path, f"missing header line {FILE_HEADER!r}")
    if lines[-1] != "" or len(lines) < 3 or not lines[-2].startswith(FILE_END_PREFIX):
        raise _corrupt(path, f"it is truncated (no final '{FILE_END_PREFIX}...' line)")
    body_len = len(content) - len(lines[-2]) - 1
    if lines[-2] != _end_line(content[:body_len]):
        raise _corrupt(path, "its checksum does not match (a torn or partial write, or a hand edit)")
    records = []
    keys = set()
    for n, line in enumerate(lines[1:-2], 2):
        f = line.split(" ")
        label = NO_LABEL
        if v3:
            label = f.pop() if len(f) == 8 else ""
        ok = (
            len(f) == 7
            and bool(label)
            and (label == NO_LABEL or (len(label) <= MAX_LABEL_CHARS and _KEY_CHARS.issuperset(label)))
            and bool(f[0])
            and len(f[0]) <= 200
            and _KEY_CHARS.issuperset(f[0])
            and all(_is_digits(x) and len(x) <= MAX_NUMBER_DIGITS for x in (f[1], f[2], f[3], f[6]))
            and len(f[4]) <= 64
            and len(f[5]) <= MAX_NUMBER_DIGITS
            and bool(f[4])
            and _BOOT_ID_CHARS.issuperset(f[4])
            and (f[5] == "-" or _is_digits(f[5]))
        )
        if not ok:
            raise _corrupt(path, f"line {n} is not a valid record: {line[:200]!r}")
        if not 0 < int(f[2]) <= PID_MAX_LIMIT:
            raise _corrupt(path, f"line {n}: pid {f[2]} is outside 1..{PID_MAX_LIMIT}, which no process can have")
        if f[0] in keys:
            raise _corrupt(path, f"GPU {f[0]} is recorded twice (line {n})")
        keys.add(f[0])
        records.append(Record(f[0], int(f[1]), int(f[2]), int(f[3]), f[4], f[5], int(f[6]), label))
    return records


def _end_line(body: bytes) -> str:
    import binascii

    return f"{FILE_END_PREFIX}{binascii.crc32(body):08x}"


def _framed(lines: list[str]) -> bytes:
    body = "".join(line + "\n" for line in lines).encode("utf-8")
    return body + (_end_line(body) + "\n").encode("ascii")


def render_records(records: list[Record]) -> bytes:
    """The file, always format v2 (labels go to the side file, `render_labels`): every release
    since the lock-file protocol reads it, so rolling back to one never finds a file it refuses."""
    return _framed([FILE_HEADER] + [r.line() for r in records])


def _label_key(r: Record) -> tuple[str, int, int, str]:
    return (r.key, r.pid, r.start, r.boot)


def render_labels(records: list[Record]) -> bytes:
    """The labels side file: one line per labelled record, keyed by GPU and exact owner."""
    return _framed(
        [LABELS_HEADER] + [f"{r.key} {r.pid} {r.start} {r.boot} {r.label}" for r in records if r.label != NO_LABEL]
    )


def parse_labels(content: bytes) -> dict[tuple[str, int, int, str], str]:
    """Labels by (GPU key, pid, start time, boot id); raises ValueError on anything malformed
    (the caller then goes without labels: they only name series in the metrics)."""
    if not content:
        return {}
    lines = content.decode("utf-8").split("\n")
    if lines[0] != LABELS_HEADER or lines[-1] != "" or len(lines) < 3:
        raise ValueError("not a labels file")
    body_len = len(content) - len(lines[-2]) - 1
    if lines[-2] != _end_line(content[:body_len]):
        raise ValueError("checksum mismatch")
    out = {}
    for line in lines[1:-2]:
        f = line.split(" ")
        if (
            len(f) != 5
            or not _KEY_CHARS.issuperset(f[0])
            or not (_is_digits(f[1]) and _is_digits(f[2]))
            or not (0 < len(f[4]) <= MAX_LABEL_CHARS and _KEY_CHARS.issuperset(f[4]))
        ):
            raise ValueError(f"bad line {line[:80]!r}")
        out[(f[0], int(f[1]), int(f[2]), f[3])] = f[4]
    return out


def _check_opened(fd: int, path: str, opts: Options, log: Log, what: str, check_owner: bool = True) -> None:
    """Refuse a descriptor that is not one regular, singly linked file (of ours, unless
    ``check_owner`` is off: the lock file holds no data, so who created it does not matter)."""
    fst = os.fstat(fd)
    if not stat.S_ISREG(fst.st_mode):
        raise DiscoveryError(f"refusing {what} {path}: not a regular file", EXIT_COORDINATION)
    if fst.st_nlink != 1:
        raise DiscoveryError(f"refusing {what} {path}: it has {fst.st_nlink} hard links", EXIT_COORDINATION)
    if check_owner and fst.st_uid != os.geteuid() and not opts.allow_foreign_owner:
        raise DiscoveryError(
            f"refusing {what} {path}: owned by uid {fst.st_uid}, not by us (uid "
            f"{os.geteuid()}); pass --allow-foreign-owner if TaskManagers of several users share it "
            "on purpose",
            EXIT_COORDINATION,
        )
    if fst.st_mode & 0o002:
        log.warning(
            f"{what} {path} is world-writable (mode {stat.S_IMODE(fst.st_mode):04o}): any user can "
            "corrupt GPU allocations"
        )


def _lstat_checked(path: str, what: str) -> os.stat_result | None:
    """lstat ``path``; None if absent; a symlink or non-regular file is refused."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise DiscoveryError(f"cannot inspect {what} {path}: {e.strerror}", EXIT_COORDINATION) from e
    if stat.S_ISLNK(st.st_mode):
        raise DiscoveryError(
            f"refusing {what} {path}: it is a symbolic link (point --coordination-file at the real file)",
            EXIT_COORDINATION,
        )
    if not stat.S_ISREG(st.st_mode):
        raise DiscoveryError(f"refusing {what} {path}: not a regular file", EXIT_COORDINATION)
    return st


def _open_checked(
    path: str, flags: int, opts: Options, log: Log, what: str, create: bool, check_owner: bool = True
) -> int | None:
    """Open ``path`` without following symlinks and check it (see _check_opened); with ``create``
    a missing file is created with O_EXCL and fchmod-ed to --file-mode; else None if missing."""
    st = _lstat_checked(path, what)
    flags |= os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NOCTTY
    created = False
    try:
        if st is None and create:
            try:
                fd = os.open(path, flags | os.O_CREAT | os.O_EXCL, opts.file_mode)
                created = True
            except FileExistsError:
                fd = os.open(path, flags)
        else:
            fd = os.open(path, flags)
    except FileNotFoundError:
        if create:
            raise DiscoveryError(f"cannot open {what} {path}: no such directory", EXIT_COORDINATION) from None
        return None
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise DiscoveryError(f"refusing {what} {path}: it is a symbolic link", EXIT_COORDINATION) from e
        raise DiscoveryError(f"cannot open {what} {path}: {e.strerror}", EXIT_COORDINATION) from e
    try:
        if created:
            os.fchmod(fd, opts.file_mode)
            log.info(f"created {path} with mode {opts.file_mode:04o}")
        _check_opened(fd, path, opts, log, what, check_owner)
    except BaseException:
        os.close(fd)
        raise
    return fd


def lock_file(fd: int, path: str, deadline: Deadline) -> None:
    """Take the exclusive flock, polling with capped, jittered back-off until the deadline.

    Polling keeps us free of signals (a blocking flock can only be interrupted by an alarm)
    and costs nothing measurable: the lock is held for about a millisecond per allocation."""
    delay = 0.001
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            left = deadline.left()
            if left <= 0:
                raise DiscoveryError(
                    f"timed out waiting for the lock on {path} (another process holds it for too long)",
                    EXIT_COORDINATION,
                ) from None
            jitter = (os.getpid() % 7) / 7000  # de-synchronise waiters started together
            time.sleep(min(delay + jitter, left))
            delay = min(delay * 2, 0.025)


def read_bounded(fd: int, path: str) -> bytes:
    """The whole file, or a refusal when it is larger than any coordination file can be (a
    sparse multi-GB file must not be read into memory)."""
    size = os.fstat(fd).st_size
    if size > MAX_FILE_BYTES:
        raise _corrupt(path, f"it is {size} bytes; a coordination file is never larger than {MAX_FILE_BYTES}")
    chunks: list[bytes] = []
    total = 0
    while True:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks)
        total += len(chunk)
        if total > MAX_FILE_BYTES:  # grew while we read (it cannot under the lock, but be sure)
            raise _corrupt(path, f"it is larger than {MAX_FILE_BYTES} bytes")
        chunks.append(chunk)


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _remove_quietly(path: str) -> None:
    """Remove a temp file of a write that failed; a second failure changes nothing."""
    try:
        os.unlink(path)
    except OSError:
        return


class CoordinationFile:
    """The coordination file and its lock file, held for one read-modify-write.

    The exclusive ``flock`` is taken on ``<file>.lock``, which is never replaced, so every
    process locks the same inode. The data file is only ever replaced whole: the new content
    goes to ``<file>.tmp`` (created with O_EXCL), is fsync-ed, and renamed over the old file,
    then the directory is fsync-ed. A crash, kill -9 or ENOSPC at any point leaves either the
    previous file or the new one, both complete and valid; a leftover ``.tmp`` is removed by
    the next writer (under the lock)."""

    def __init__(self, opts: Options, log: Log, deadline: Deadline) -> None:
        self.opts, self.log = opts, log
        self.path = opts.coordination_file
        self.lock_path = self.path + LOCK_SUFFIX
        self.tmp_path = self.path + TMP_SUFFIX
        self.labels_path = self.path + LABELS_SUFFIX
        # Check the data file before creating anything next to it.
        _lstat_checked(self.path, "coordination file")
        # Read-only is enough for flock, so a lock file another user left (e.g. root) still works.
        fd = _open_checked(
            self.lock_path, os.O_RDONLY, opts, log, "coordination file lock", create=True, check_owner=False
        )
        assert fd is not None
        self.lock_fd = fd
        try:
            lock_file(self.lock_fd, self.lock_path, deadline)
        except BaseException:
            os.close(self.lock_fd)
            raise

    def __enter__(self) -> CoordinationFile:
        return self

    def __exit__(self, *exc: object) -> None:
        os.close(self.lock_fd)  # releases the flock

    def read(self) -> list[Record]:
        fd = _open_checked(self.path, os.O_RDONLY, self.opts, self.log, "coordination file", create=False)
        if fd is None:
            return []
        try:
            content = read_bounded(fd, self.path)
            records = parse_records(content, self.path)
        finally:
            os.close(fd)
        if content.startswith((FILE_HEADER_V3 + "\n").encode()) and not self.opts.check_free:
            # a v3 file (some 1.0.0 builds wrote it): rewrite it as v2 + labels side file now, so a
            # rollback to a version that reads only v1/v2 finds a file it reads
            self.log.info(f"rewriting {self.path} from format v3 to v2 (labels to {self.labels_path})")
            self.write(records)
            return records
        if any(r.label == NO_LABEL for r in records):
            labels = self._read_labels()
            for r in records:
                if r.label == NO_LABEL:
                    r.label = labels.get(_label_key(r), NO_LABEL)
        return records

    def _read_labels(self) -> dict[tuple[str, int, int, str], str]:
        """The side file's labels; none (with a warning) when it is unsafe or unreadable."""
        try:
            fd = _open_checked(self.labels_path, os.O_RDONLY, self.opts, self.log, "owner labels file", create=False)
            if fd is None:
                return {}
            try:
                return parse_labels(read_bounded(fd, self.labels_path))
            finally:
                os.close(fd)
        except (DiscoveryError, ValueError, UnicodeDecodeError) as e:
            self.log.warning(f"ignoring owner labels in {self.labels_path}: {e} (only metrics labels are lost)")
            return {}

    def write(self, records: list[Record]) -> None:
        self._replace(self.path, self.tmp_path, render_records(records))
        if any(r.label != NO_LABEL for r in records) or os.path.lexists(self.labels_path):
            try:
                self._replace(self.labels_path, self.labels_path + TMP_SUFFIX, render_labels(records))
            except DiscoveryError as e:
                self.log.warning(f"{e.message} (only metrics labels are lost)")
        self._sync_directory()

    def _replace(self, path: str, tmp_path: str, data: bytes) -> None:
        """Replace ``path`` whole by ``data`` (temporary file, fsync, rename; we hold the lock)."""
        try:
            old = os.lstat(path)
        except FileNotFoundError:
            old = None
        except OSError as e:
            raise DiscoveryError(f"cannot inspect coordination file {path}: {e.strerror}",
                                 EXIT_COORDINATION) from e
        mode = stat.S_IMODE(old.st_mode) if old is not None else self.opts.file_mode
        try:
            try:
                os.unlink(tmp_path)  # a leftover of a writer that died (we hold the lock)
                self.log.info(f"removed leftover {tmp_path}")
            except FileNotFoundError:
                pass
            fd = os.open(tmp_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
            try:
                os.fchmod(fd, mode)
                if old is not None and old.st_gid != os.fstat(fd).st_gid:
                    try:
                        os.fchown(fd, -1, old.st_gid)  # keep the shared group when we may
                    except OSError:
                        self.log.info(f"cannot keep group {old.st_gid} on {path}")
                write_all(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.rename(tmp_path, path)
        except OSError as e:
            _remove_quietly(tmp_path)
            raise DiscoveryError(
                f"cannot write coordination file {path}: {e.strerror} (the previous state is kept)",
                EXIT_COORDINATION,
            ) from e

    def _sync_directory(self) -> None:
        """Make the rename durable; the new state is already visible, so a failure only warns."""
        directory = os.path.dirname(self.path) or "."
        try:
            dfd = os.open(directory, os.O_RDONLY | os.O_CLOEXEC | getattr(os, "O_DIRECTORY", 0))
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)
        except OSError as e:
            self.log.warning(f"cannot fsync directory {directory}: {e.strerror}")


def _describe(gpus: list[Gpu]) -> str:
    return ",".join(str(g.index) for g in gpus) or "none"


def allocate(eligible: list[Gpu], amount: int, opts: Options, log: Log, deadline: Deadline) -> list[Gpu]:
    owner = current_owner(opts, log)
    by_key = {g.key: g for g in eligible}
    with CoordinationFile(opts, log, deadline) as cf:
        records = cf.read()
        mine: list[Gpu] = []
        taken: dict[str, Record] = {}
        dead: set[str] = set()
        for rec in records:
            if rec.key not in by_key:
                continue  # a GPU we cannot see: not ours to judge
            if rec.owned_by(owner):
                mine.append(by_key[rec.key])
            elif owner_alive(rec, owner.boot, owner.pidns) and not (
                opts.isolated_devices and _other_namespace(rec.pidns, owner.pidns)
            ):
                taken[rec.key] = rec
            else:
                log.info(f"GPU {rec.index}: owner pid {rec.pid} is dead or stale; reclaimable")
                dead.add(rec.key)
        if mine:
            mine.sort(key=eligible.index)
            if len(mine) == amount:
                log.info(f"owner {owner.pid} already holds GPU(s) {_describe(mine)}; returning them")
                return mine
            raise DiscoveryError(
                f"owner process {owner.pid} already holds {len(mine)} GPU(s) ({_describe(mine)}) but asks "
                f"for {amount}; release them first with --release",
                EXIT_UNSATISFIABLE,
            )
        free = [g for g in eligible if g.key not in taken]
        if len(free) < amount:
            busy = [
                f"{r.index}(pid {r.pid}{'' if r.pidns == owner.pidns else ' in another PID namespace'})"
                for r in sorted(taken.values(), key=lambda r: r.index)
            ]
            more = " ..." if len(busy) > 16 else ""
            raise DiscoveryError(
                f"cannot allocate {amount} GPU(s): {len(eligible)} eligible, {len(taken)} held by live owners "
                f"[{' '.join(busy[:16])}{more}], {len(free)} free in {cf.path}",
                EXIT_UNSATISFIABLE,
            )
        chosen = free[:amount]
        now = int(time.time())
        kept = [r for r in records if r.key not in dead]
        kept += [
            Record(g.key, g.index, owner.pid, owner.start, owner.boot, owner.pidns, now, opts.owner_label)
            for g in chosen
        ]
        cf.write(kept)
        if opts.metrics_file:
            write_metrics(opts.metrics_file, kept, log)
        log.info(f"allocated GPU(s) {_describe(chosen)} to pid {owner.pid} in {cf.path}")
        return chosen


def holder(rec: Record, pidns: str) -> str:
    """Who holds a GPU, for a refusal: its pid and, when readable here, what the process is (a
    Flink TaskManager with its resource id, else its program name)."""
    if _other_namespace(rec.pidns, pidns):
        return f"GPU {rec.index}: pid {rec.pid} in another PID namespace"
    try:
        with open(f"/proc/{rec.pid}/cmdline", "rb") as f:
            argv = [a.decode(errors="replace") for a in f.read(1 << 16).split(b"\0") if a]
    except OSError:
        argv = []
    what = os.path.basename(argv[0]) if argv else "unknown process"
    if any(a.endswith("TaskManagerRunner") or a.endswith("YarnTaskExecutorRunner") for a in argv):
        what = "a Flink TaskManager"
        ids = [a.split("=", 1)[1] for a in argv if a.startswith("taskmanager.resource-id=")]
        ids += [a.split("=", 1)[1] for a in argv if a.startswith("-Dtaskmanager.resource-id=")]
        if ids:
            what += f" ({ids[-1]})"
    return f"GPU {rec.index}: pid {rec.pid}, {what}"


def check_free(eligible: list[Gpu], amount: int, opts: Options, log: Log, deadline: Deadline) -> list[Gpu]:
    """The first ``amount`` eligible GPUs no live owner holds (``--check-free``: nothing is
    written); raises naming every live holder when there are fewer. A missing coordination file
    holds nothing (it is not created here)."""
    by_key = {g.key: g for g in eligible}
    if not os.path.lexists(opts.coordination_file):
        records: list[Record] = []
    else:
        with CoordinationFile(opts, log, deadline) as cf:
            records = cf.read()
    boot, pidns = boot_id(), pid_namespace()
    taken = [
        r for r in records
        if r.key in by_key and owner_alive(r, boot, pidns)
        and not (opts.isolated_devices and _other_namespace(r.pidns, pidns))
    ]  # fmt: skip
    held = {r.key for r in taken}
    free = [g for g in eligible if g.key not in held]
    if len(free) < amount:
        names = "; ".join(holder(r, pidns) for r in sorted(taken, key=lambda r: r.index))
        raise DiscoveryError(
            f"{amount} GPU(s) needed but only {len(free)} of {len(eligible)} eligible are free: held by "
            f"live owners in {opts.coordination_file}: {names}",
            EXIT_UNSATISFIABLE,
        )
    return free[:amount]


def release(opts: Options, log: Log, deadline: Deadline) -> list[Record]:
    owner = current_owner(opts, log, allocating=False)
    with CoordinationFile(opts, log, deadline) as cf:
        records = cf.read()
        released = [r for r in records if r.owned_by(owner)]
        if released:
            kept = [r for r in records if not r.owned_by(owner)]
            cf.write(kept)
            if opts.metrics_file:
                write_metrics(opts.metrics_file, kept, log)
            log.info(f"released GPU(s) {','.join(str(r.index) for r in released)} of pid {owner.pid}")
        else:
            log.info(f"pid {owner.pid} holds no GPU in {cf.path}")
        return released


def export_metrics(opts: Options, log: Log, deadline: Deadline) -> list[Record]:
    """``--export-metrics``: rewrite the metrics file from the coordination file (read under its
    lock, never changed), leaving out records whose owner is dead, so a timer keeps the metrics
    true between allocations. Returns the records exported."""
    if not opts.metrics_file:
        raise _usage_error("--export-metrics needs --metrics-file")
    boot, pidns = boot_id(), pid_namespace()
    with CoordinationFile(opts, log, deadline) as cf:
        live = [r for r in cf.read() if owner_alive(r, boot, pidns)]
        # Under the lock, as every allocation and release writes it: an export that read earlier
        # can never overwrite the file a later change wrote.
        write_metrics(opts.metrics_file, live, log)
    return live


# ==================== 11. output, metrics: the owner metrics for node-exporter's textfile collector


def _label_value(value: str) -> str:
    """A Prometheus text-format label value: backslash, double quote and line feed escaped."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def render_metrics(records: list[Record], host: str) -> str:
    """Prometheus text exposition (node-exporter textfile collector) of the held GPUs: one
    ``accelplane_gpu_owner`` series of value 1 per record, labelled with the GPU (its coordination
    key: NVIDIA UUID, ``MIG-...`` UUID, AMD ``pci:...``), the index Flink got, the owner label
    (Flink cluster), the owner PID and the host."""
    out = [
        f"# HELP {METRIC_NAME} GPU held by a Flink TaskManager process (accelplane coordination file).",
        f"# TYPE {METRIC_NAME} gauge",
    ]
    for r in sorted(records, key=lambda r: r.key):
        labels = (
            f'flink_cluster="{_label_value(r.label)}",gpu_index="{r.index}",gpu_uuid="{_label_value(r.key)}",'
            f'host="{_label_value(host)}",pid="{r.pid}"'
        )
        out.append(f"{METRIC_NAME}{{{labels}}} 1")
    return "\n".join(out) + "\n"


def write_metrics(path: str, records: list[Record], log: Log) -> None:
    """Write the metrics file atomically: a private temporary file in the same directory, fsync,
    rename over the file (node-exporter never reads a half-written file: a crash leaves the
    previous file and at most a ``.tmp`` file, which the collector ignores: it reads ``*.prom``
    only). A failure only warns: monitoring must never cost a TaskManager its GPUs. Callers hold
    the coordination lock, so metrics files are written in the order of coordination changes."""
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        # The kernel's host name is bytes; undecodable ones (surrogate escapes) become U+FFFD.
        host = os.uname().nodename.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        data = render_metrics(records, host).encode("utf-8")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        try:
            os.fchmod(fd, 0o644)
            write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(tmp, path)
    except OSError as e:
        _remove_quietly(tmp)
        log.warning(f"cannot write metrics file {path}: {e.strerror} (GPU allocation is unaffected)")
    except Exception as e:  # never let metrics break a call whose GPUs are already recorded
        _remove_quietly(tmp)
        log.warning(f"cannot write metrics file {path}: {type(e).__name__}: {e} (GPU allocation is unaffected)")


# ==================== 12. output, result: the one stdout line (flink, spark or json)


def render_result(indexes: list[int], gpus: list[Gpu] | None, opts: Options, backend: str) -> str:
    """The one stdout line ('' = print nothing)."""
    if opts.fmt == "flink":
        return ",".join(str(i) for i in indexes)
    import json

    if opts.fmt == "spark":
        doc: dict[str, object] = {"name": "gpu", "addresses": [str(i) for i in indexes]}
    else:
        doc = {
            "name": "gpu",
            "addresses": [str(i) for i in indexes],
            "mode": "release" if opts.release else ("coordination" if opts.coordination else "first-n"),
            "backend": backend,
            "gpus": [_json_gpu(g) for g in (gpus or [])],
        }
    return json.dumps(doc, separators=(",", ":"))


def _json_gpu(g: Gpu) -> dict[str, object]:
    doc: dict[str, object] = {
        "index": g.index, "uuid": g.uuid, "name": g.name, "pci_bus_id": g.bus_id, "vendor": g.vendor
    }
    if g.is_mig_device:
        doc["mig_parent_index"] = g.parent
        doc["mig_device"] = g.mig_index
    return doc


def emit(line: str) -> None:
    if line:
        sys.stdout.write(line + "\n")
    sys.stdout.flush()


# ==================== 13. CLI: entry points (run, main, console_main)


START_LOCK_FD = 9
START_LOCK_ENV = "ACCELPLANE_START_LOCK_HELD"


def hold_start_lock(argv: list[str], log: Log) -> int:
    """``--hold-start-lock PATH [--timeout S] [--file-mode OCTAL] -- COMMAND...``: the start
    scripts' host-wide start lock, opened ONCE: without following links (O_NOFOLLOW), without
    blocking on a FIFO or device planted in its place (O_NONBLOCK), created with O_EXCL and
    --file-mode when missing; then checked on the descriptor itself (a regular file with one link,
    owned by us or by the owner of its directory, the Flink user), locked (flock, polled until
    --timeout) and handed to COMMAND as descriptor 9 with ``ACCELPLANE_START_LOCK_HELD=PATH``
    (exec: the lock lives exactly as long as COMMAND's process and the children it does not
    close it for). There is no check-then-use step a local user could race. Returns an exit
    code only on refusal (3) or a usage error (2); otherwise it does not return."""
    if "--" not in argv or len(argv) < 2:
        raise _usage_error("--hold-start-lock needs PATH, then '--' and the command to run")
    sep = argv.index("--")
    head, command = argv[:sep], argv[sep + 1 :]
    if not command:
        raise _usage_error("--hold-start-lock needs a command after '--'")
    path = head[1]
    opts = Options()
    rest = head[2:]
    while rest:
        flag = rest.pop(0)
        if flag not in ("--timeout", "--file-mode") or not rest:
            raise _usage_error(f"--hold-start-lock takes only --timeout S and --file-mode OCTAL, not {flag!r}")
        _set_value(opts, _VALUE_FLAGS[flag], flag, rest.pop(0))
    if not path.startswith("/"):
        raise _usage_error(f"--hold-start-lock needs an absolute path, not {path!r}")
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
    try:
        try:
            fd = os.open(path, flags | os.O_CREAT | os.O_EXCL, opts.file_mode)
            os.fchmod(fd, opts.file_mode)
        except FileExistsError:
            fd = os.open(path, flags)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise DiscoveryError(f"refusing the start lock {path}: it is a symbolic link; remove it",
                                 EXIT_COORDINATION) from e
        raise DiscoveryError(f"cannot open the start lock {path}: {e.strerror}", EXIT_COORDINATION) from e
    fst = os.fstat(fd)
    try:
        dir_uid = os.stat(os.path.dirname(path) or "/").st_uid
    except OSError:
        dir_uid = -1
    why = None
    if not stat.S_ISREG(fst.st_mode):
        why = "it is not a regular file (a FIFO, device or directory planted in its place?)"
    elif fst.st_nlink != 1:
        why = f"it has {fst.st_nlink} hard links"
    elif fst.st_uid not in (os.geteuid(), dir_uid):
        why = f"it belongs to uid {fst.st_uid}, neither us ({os.geteuid()}) nor its directory's owner ({dir_uid})"
    if why is not None:
        os.close(fd)
        raise DiscoveryError(f"refusing the start lock {path}: {why}; remove it", EXIT_COORDINATION)
    try:
        lock_file(fd, path, Deadline(opts.timeout))
    except DiscoveryError:
        os.close(fd)
        raise DiscoveryError(
            f"another start on this host held the start lock {path} for {opts.timeout:g} s; try again",
            EXIT_COORDINATION,
        ) from None
    os.dup2(fd, START_LOCK_FD)  # inheritable (dup2's default): COMMAND gets the locked descriptor
    os.close(fd)
    os.environ[START_LOCK_ENV] = path
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execvp(command[0], command)
    except OSError as e:
        raise DiscoveryError(f"cannot run {command[0]}: {e.strerror}", EXIT_USAGE) from e
    return EXIT_INTERNAL  # not reached


def run(opts: Options, log: Log) -> int:
    deadline = Deadline(opts.timeout)
    if opts.export_metrics:
        export_metrics(opts, log, deadline)
        return EXIT_OK
    if opts.release:
        released = release(opts, log, deadline)
        emit(render_result([r.index for r in released], None, opts, ""))
        return EXIT_OK
    amount = opts.amount if opts.amount is not None else 0
    if amount == 0:
        emit(render_result([], [], opts, ""))
        return EXIT_OK
    gpus, backend = inventory(opts, log, deadline)
    eligible = eligible_gpus(gpus, opts, log)
    if opts.check_free:
        chosen = check_free(eligible, amount, opts, log, deadline)
    elif opts.coordination:
        chosen = allocate(eligible, amount, opts, log, deadline)
    else:
        if len(eligible) < amount:
            raise DiscoveryError(
                f"cannot allocate {amount} GPU(s): only {len(eligible)} eligible "
                f"({_describe(eligible)}) of {len(gpus)} found by {backend}",
                EXIT_UNSATISFIABLE,
            )
        chosen = eligible[:amount]
        if len(eligible) > amount:
            log.info(
                f"non-coordination mode: returning the first {amount} GPU(s); every TaskManager on "
                "this host gets the same ones (use --enable-coordination-mode)"
            )
    mig_warning(chosen, log)
    emit(render_result([g.index for g in chosen], chosen, opts, backend))
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    """Entry point (console script ``accelplane-gpu-discovery``); returns the exit code."""
    if argv is None:
        argv = sys.argv[1:]
    log = Log()
    try:
        if argv and argv[0] == "--hold-start-lock":
            return hold_start_lock(list(argv), log)
        opts = parse_args(list(argv), log)
        if opts.help:
            sys.stderr.write(USAGE.format(prog=PROG, backend_env=BACKEND_ENV))
            return EXIT_OK
        return run(opts, log)
    except DiscoveryError as e:
        log.error(e.message)
        return e.code
    except KeyboardInterrupt:
        log.error("interrupted")
        return 130
    except Exception as e:  # never a traceback on stdout, never exit 0 by accident
        log.error(f"internal error: {type(e).__name__}: {e}")
        if log.verbose:
            import traceback

            traceback.print_exc(file=sys.stderr)
        return EXIT_INTERNAL


def _exit(code: int) -> None:
    """Exit; when a library call hung in an abandoned thread (see _bounded_call), exit at once
    instead of letting interpreter shutdown wait on it, and so does the entry stub's process
    (`RUN_BY_ENTRY_STUB`): its work is done and flushed (files were fsync-ed, locks go with the
    process), so the interpreter's teardown would only cost time."""
    if _ABANDONED_THREADS or RUN_BY_ENTRY_STUB:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):  # closed: nothing more to flush
                continue
        os._exit(code)
    sys.exit(code)


def console_main() -> None:
    """Console-script entry point (``accelplane-gpu-discovery``)."""
    _exit(main())


if __name__ == "__main__":
    console_main()
