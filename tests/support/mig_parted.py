"""nvidia-mig-parted's ``v1`` config format, transcribed from its Go types (tests/upstream/mig-parted).

mig-parted has no published JSON schema: its format is whatever ``api/spec/v1/spec.go`` accepts —
``Spec.UnmarshalJSON`` (only ``version: v1`` and a non-empty ``mig-configs`` map of non-empty lists,
unknown fields refused), ``MigConfigSpec.UnmarshalJSON`` (``devices`` required: ``"all"`` or a list of
ints; ``mig-enabled`` required bool; ``device-filter`` string or list of strings; ``mig-devices``
required when enabled and forbidden non-empty when disabled), ``types.MigConfig.AssertValidFormat``
(valid profile names, no negative counts, not all zero) and go-nvlib's ``parseMigProfile``
(``[<c>c.]<g>g.<gb>gb`` with optional ``+attr,…``/``-attr,…``). `mig_parted_errors` applies exactly
those rules; tests check it accepts upstream's own ``examples/config.yaml`` and rejects what the Go
code rejects.
"""

from __future__ import annotations

import re
from typing import Any

_ATTRIBUTE = re.compile(r"^[A-Za-z][A-Za-z0-9.]*$")


def _field(text: str, suffix: str) -> str | None:
    if text.strip() != text:
        return "leading or trailing spaces"
    if not text.endswith(suffix):
        return f"missing '{suffix}'"
    number = text[: -len(suffix)]
    if not re.fullmatch(r"[+-]?[0-9]+", number):  # strconv.Atoi
        return f"malformed number in '%d{suffix}'"
    return None


def profile_error(profile: str) -> str | None:
    """go-nvlib ``parseMigProfile``'s error for a profile name, or None when it parses."""
    if profile == "":
        return "profile is the empty string"
    plus, minus = profile.split("+", 1), profile.split("-", 1)
    if len(plus) == 2 and len(minus) == 2:
        return "contains both '+/-' attributes"
    split = plus if len(plus) == 2 else minus
    fields = split[0].split(".", 2)
    if len(fields) == 3:
        suffixes = ("c", "g", "gb")
    elif len(fields) == 2:
        suffixes = ("g", "gb")
    else:
        return "parsed wrong number of fields, expected 2 or 3"
    for text, suffix in zip(fields, suffixes, strict=True):
        problem = _field(text, suffix)
        if problem is not None:
            return problem
    if len(split) == 2:
        attributes = split[1].split(",")
        if len(set(attributes)) != len(attributes):
            return "non unique attribute in list"
        for a in attributes:
            if (
                a == ""
                or a.strip() != a
                or a[0].isdigit()
                or a[0] == "."
                or a[-1] == "."
                or not _ATTRIBUTE.match(a)
            ):
                return f"invalid attribute {a!r}"
    return None


def _config_spec_errors(where: str, entry: Any) -> list[str]:
    if not isinstance(entry, dict):
        return [f"{where}: not an object"]
    errors = [f"{where}: missing required field: {r}" for r in ("devices", "mig-enabled") if r not in entry]
    errors += [
        f"{where}: unexpected field: {k}"
        for k in entry
        if k not in ("device-filter", "devices", "mig-enabled", "mig-devices")
    ]
    devices = entry.get("devices", "all")
    if isinstance(devices, str):
        if devices != "all":
            errors.append(f"{where}: invalid string input for 'devices': {devices}")
    elif not (
        isinstance(devices, list) and all(isinstance(d, int) and not isinstance(d, bool) for d in devices)
    ):
        errors.append(f"{where}: devices must be 'all' or a list of ints")
    device_filter = entry.get("device-filter", "")
    if not (
        isinstance(device_filter, str)
        or (isinstance(device_filter, list) and all(isinstance(d, str) for d in device_filter))
    ):
        errors.append(f"{where}: device-filter must be a string or a list of strings")
    enabled = entry.get("mig-enabled", False)
    if not isinstance(enabled, bool):
        errors.append(f"{where}: mig-enabled must be a bool")
    devs = entry.get("mig-devices")
    if devs is not None:
        if not isinstance(devs, dict):
            return [*errors, f"{where}: mig-devices must be a map"]
        for profile, count in devs.items():
            problem = profile_error(str(profile))
            if problem is not None:
                errors.append(f"{where}: invalid format for {profile!r}: {problem}")
            if not isinstance(count, int) or isinstance(count, bool) or count < 0:
                errors.append(f"{where}: invalid count for {profile!r}: {count}")
        if devs and all(isinstance(c, int) and c == 0 for c in devs.values()):
            errors.append(f"{where}: all counts for all MigProfiles are 0")
    if enabled is True and devs is None:
        errors.append(f"{where}: missing required field 'mig-devices' when 'mig-enabled' is true")
    if enabled is False and devs:
        errors.append(f"{where}: MIG devices included when 'mig-enabled' is false")
    return errors


def mig_parted_errors(document: Any) -> list[str]:
    """Every reason mig-parted's ``v1`` parser would refuse ``document`` (empty when it parses)."""
    if not isinstance(document, dict):
        return ["not an object"]
    if "version" not in document and document:
        return ["unable to parse with missing 'version' field"]
    if document.get("version") != "v1":
        return [f"unknown version: {document.get('version')}"]
    errors = [f"unexpected field: {k}" for k in document if k not in ("version", "mig-configs")]
    if "mig-configs" in document:
        configs = document["mig-configs"]
        if not isinstance(configs, dict) or not configs:
            return [*errors, "at least one entry in 'mig-configs' is required"]
        for name, entries in configs.items():
            if not isinstance(entries, list) or not entries:
                errors.append(f"at least one entry in {name!r} is required")
                continue
            for i, entry in enumerate(entries):
                errors += _config_spec_errors(f"{name}[{i}]", entry)
    return errors
