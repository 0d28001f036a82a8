"""What Flink itself reads from a configuration directory: ``GlobalConfiguration.loadConfiguration``
run by ``java/ConfigProbe.java``.

Findings about Flink 1.20.5 configuration parsing (observed with
``tests/support/flink/java/ConfigProbe.java``; the renderer relies on them)
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
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from tests.support.flink.config_files import CONF_FILE_NAMES, conf_format_of
from tests.support.flink.errors import HarnessError
from tests.support.flink.java import FAST_JVM_FLAGS, build_config_probe_jar
from tests.support.flink.processes import run_checked


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
    proc = run_checked(
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
        target = Path(tmp) / CONF_FILE_NAMES[format_]
        shutil.copyfile(conf_file, target)
        return probe_flink_config(Path(tmp), flink_home, list_keys, cache_dir=cache_dir)
