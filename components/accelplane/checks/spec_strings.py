"""Spec strings that pass the schema but would break a file name or mean something else to Flink.

* File names (AP1501): a name that becomes a rendered file name longer than the file system's limit
  (`accelplane.derive.file_names`) is refused here, at validate time, instead of `render` failing
  with "File name too long" half-way through writing the tree.
* Flink configuration values with leading or trailing whitespace: Flink's legacy
  ``flink-conf.yaml`` reader trims every value (``GlobalConfiguration.loadYAMLResource``), its
  standard ``config.yaml`` (Flink 1.19+) keeps a quoted value as written, so the same spec means
  two different values (AP1503, a warning). For the high-availability mode it is an error (AP1502):
  ``HighAvailabilityMode.fromConfig`` compares the value exactly (``valueOf`` of the upper-cased
  text), so ``"kubernetes\\n"`` is not Kubernetes HA but the name of a factory class that does not
  exist, and the JobManager fails to start; accelplane would also render the wrong Role.

Every schema pattern already matches whole strings (no name or GPU model passes with a trailing
newline or surrounding space: `accelplane.schema_document.python_pattern`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from accelplane.derive.file_names import NAME_MAX, named_files
from accelplane.derive.flink_state import ha_type_keys
from accelplane.display import short_repr
from accelplane.errors import Problem
from accelplane.findings import ERROR, WARNING, declare
from accelplane.model import Spec

FILE_NAME_TOO_LONG = declare(
    "AP1501", ERROR,
    f"a name becomes a rendered file name longer than {NAME_MAX} bytes, which no file system accepts",
    fix="shorten the name",
)  # fmt: skip
HA_MODE_WHITESPACE = declare(
    "AP1502", ERROR,
    "the high-availability mode has leading or trailing whitespace, so Flink reads it as a factory "
    "class name that does not exist",
    fix="write the mode alone, e.g. kubernetes",
)  # fmt: skip
CONFIG_VALUE_WHITESPACE = declare(
    "AP1503", WARNING,
    "a Flink configuration value has leading or trailing whitespace, which Flink's legacy "
    "flink-conf.yaml trims and its config.yaml keeps",
    fix="remove the whitespace (or put it inside the value)",
)  # fmt: skip
SCRIPT_VALUE_CONTROL = declare(
    "AP1560", ERROR,
    "a Flink setting that accelplane writes into a start script holds a control character (NUL, a line "
    "break, …), which a shell script cannot carry",
    fix="remove the control character",
)  # fmt: skip

SCRIPT_KEYS = re.compile(r"env\.pid\.dir|external-resource\.[^.]+\.param\.discovery-script\.args")
"""Flink settings the standalone start scripts also read (`accelplane.builders.slot_groups`): the
pid directory and the discovery script's arguments. A Flink configuration file escapes any
character (``config.yaml``) or refuses it (``flink-conf.yaml``, `accelplane.derive.flink_values`);
a shell script has no escape for NUL (the file turns binary: git shows "Binary files differ" and a
review sees nothing), and a line break in a path is never meant."""
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


def _check_script_values(spec: Spec) -> Iterator[Problem]:
    for cluster in spec.flink_clusters:
        for key, value in cluster.config:
            if isinstance(value, str) and SCRIPT_KEYS.fullmatch(key) and (bad := _CONTROL.search(value)):
                yield Problem(
                    cluster.field_path("config", key),
                    f"{short_repr(value)} holds the control character U+{ord(bad.group()):04X}; accelplane "
                    "also writes this setting into the TaskManager start scripts, which cannot carry it; "
                    "remove it",
                    SCRIPT_VALUE_CONTROL,
                )


def _check_file_names(spec: Spec) -> Iterator[Problem]:
    seen: set[tuple[object, str]] = set()
    for named in named_files(spec):
        if named.too_long and (named.path, named.name) not in seen:
            seen.add((named.path, named.name))
            size = len(named.file_name.encode("utf-8"))
            yield Problem(
                named.path,
                f"{named.name[:40]!r}… ({len(named.name)} characters) becomes the file name "
                f"{named.file_name[:24]!r}… of {size} bytes, longer than the {NAME_MAX} bytes a file "
                f"name may have; shorten it to at most {len(named.name) - (size - NAME_MAX)} characters",
                FILE_NAME_TOO_LONG,
            )


def _check_config_whitespace(spec: Spec) -> Iterator[Problem]:
    for cluster in spec.flink_clusters:
        for key, value in cluster.config:
            if not isinstance(value, str) or value == value.strip():
                continue
            if key in ha_type_keys(cluster):
                yield Problem(
                    cluster.field_path("config", key),
                    f"{value!r} has leading or trailing whitespace: Flink compares the high-availability "
                    f"mode exactly and would load a factory class named {value!r}, which fails; write "
                    f"{value.strip()!r}",
                    HA_MODE_WHITESPACE,
                )
            else:
                yield Problem(
                    cluster.field_path("config", key),
                    f"{value!r} has leading or trailing whitespace, which Flink's legacy flink-conf.yaml "
                    f"trims and its config.yaml keeps; write {value.strip()!r}",
                    CONFIG_VALUE_WHITESPACE,
                )


def check(spec: Spec) -> Iterator[Problem]:
    """Every file-name and Flink-value whitespace problem of the spec."""
    yield from _check_file_names(spec)
    yield from _check_config_whitespace(spec)
    yield from _check_script_values(spec)
