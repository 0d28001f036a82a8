"""Writing Flink configuration files for a sandbox: the two formats (``config.yaml``, legacy
``flink-conf.yaml``), harness overrides appended in the file's own format, the keys the harness may
set (`SANDBOX_KEYS`) and the coordination-file rewrite of discovery args."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Literal

import yaml

from tests.support.flink.errors import HarnessError

ConfFormat = Literal["yaml", "legacy"]
ConfigScalar = str | int | float | bool
ConfigValue = ConfigScalar | Sequence[str]

CONF_FILE_NAMES: dict[ConfFormat, str] = {"yaml": "config.yaml", "legacy": "flink-conf.yaml"}

#: Addresses and ports: all the harness changes in ``addresses_only`` mode (a rendered cluster run
#: as a user gets it, moved onto this machine's free ports).
ADDRESS_KEYS: frozenset[str] = frozenset(
    {
        "jobmanager.rpc.address",
        "jobmanager.rpc.port",
        "jobmanager.bind-host",
        "taskmanager.host",
        "taskmanager.bind-host",
        "taskmanager.rpc.port",
        "taskmanager.data.port",
        "rest.address",
        "rest.bind-address",
        "rest.port",
        "blob.server.port",
        "metrics.internal.query-service.port",
    }
)

#: Keys the harness may set (besides the two opt-in discovery-script keys). Never
#: ``env.java.opts.all``: the JVM options are what the configuration under test says.
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


def legacy_value(value: ConfigValue) -> str:
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
        return "".join(f"{key}: {legacy_value(value)}\n" for key, value in values.items())
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
