"""nvidia-mig-parted's ``v1`` config format: our own rules, checked against upstream's behaviour.

mig-parted has no published JSON schema: its format is whatever ``api/spec/v1/spec.go`` accepts —
``Spec.UnmarshalJSON`` (only ``version: v1`` and a non-empty ``mig-configs`` map of non-empty lists,
unknown fields refused), ``MigConfigSpec.UnmarshalJSON`` (``devices`` required: ``"all"`` or a list of
ints; ``mig-enabled`` required bool; ``device-filter`` string or list of strings; ``mig-devices``
required when enabled and forbidden non-empty when disabled), ``types.MigConfig.AssertValidFormat``
(valid profile names, no negative counts, not all zero) and go-nvlib's ``parseMigProfile``
(``[<c>c.]<g>g.<gb>gb`` with optional ``+attr,…``/``-attr,…``). `mig_parted_errors` applies exactly
those rules. tests/fresh_cluster/mig_parted_cases.py holds the cases that decide them (values and
upstream's verdicts, each citing the upstream file and line, confirmed by running mig-parted v0.15.0's
own code as an oracle); tests check these rules against them and against upstream's own
``examples/config.yaml`` (../shared/reference/mig-parted).
"""

from __future__ import annotations

from typing import Any

_INT64 = range(-(2**63), 2**63)  # strconv.Atoi's range (int is 64 bits where mig-parted runs)


def _go_trimmed(text: str) -> bool:
    """Whether Go's ``strings.TrimSpace`` leaves ``text`` as it is (unicode.IsSpace: Python's
    whitespace less the file/group/record/unit separators U+001C–U+001F)."""
    return not text or not any(c.isspace() and c not in "\x1c\x1d\x1e\x1f" for c in (text[0], text[-1]))


def _field(text: str, suffix: str) -> str | None:
    """go-nvlib ``parseMigProfileField``'s error for ``%d<suffix>``, or None."""
    if not _go_trimmed(text):
        return f"leading or trailing spaces on '%d{suffix}'"
    if not text.endswith(suffix):
        return f"missing '{suffix}' from '%d{suffix}'"
    number = text[: -len(suffix)]
    digits = number[1:] if number[:1] in ("+", "-") else number
    if not (digits.isascii() and digits.isdigit()) or int(number) not in _INT64:  # strconv.Atoi
        return f"malformed number in '%d{suffix}'"
    return None


def _fields_error(text: str) -> str | None:
    """go-nvlib ``parseMigProfileFields``: ``<c>c.<g>g.<gb>gb`` or ``<g>g.<gb>gb``."""
    fields = text.split(".", 2)
    if len(fields) == 3:
        suffixes: tuple[str, ...] = ("c", "g", "gb")
    elif len(fields) == 2:
        suffixes = ("g", "gb")
    else:
        return "parsed wrong number of fields, expected 2 or 3"
    for field, suffix in zip(fields, suffixes, strict=True):
        problem = _field(field, suffix)
        if problem is not None:
            return problem
    return None


def _attributes_error(text: str) -> str | None:
    """go-nvlib ``parseMigProfileAttributes``, in its order: each attribute in turn, a repeat only
    counting once an earlier copy passed every check."""
    seen: set[str] = set()
    for a in text.split(","):
        if a in seen:
            return "non unique attribute in list"
        if a == "":
            return "empty attribute in list"
        if not _go_trimmed(a):
            return "leading or trailing spaces in attribute"
        if "0" <= a[0] <= "9":
            return "attribute begins with a number"
        if a[0] == "." or a[-1] == ".":
            return "attribute begins/ends with a dot"
        if any(not (c.isascii() and (c.isalnum() or c == ".")) for c in a):
            return "non alpha-numeric character or digit in attribute"
        seen.add(a)
    return None


def profile_error(profile: str) -> str | None:
    """go-nvlib ``parseMigProfile``'s error message for a profile name, word for word, or None
    when it parses (what ``types.MigConfig.AssertValidFormat`` applies to every mig-devices key)."""
    if profile == "":
        return "profile is the empty string"
    plus, minus = profile.split("+", 1), profile.split("-", 1)
    if len(plus) == 2 and len(minus) == 2:
        return f"profile '{profile}' contains both '+/-' attributes"
    split = plus if len(plus) == 2 else minus
    problem = _fields_error(split[0])
    if problem is not None:
        return f"cannot parse fields of '{profile}': {problem}"
    if len(split) == 2:
        problem = _attributes_error(split[1])
        if problem is not None:
            return f"cannot parse attributes of '{profile}': {problem}"
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
                errors.append(f"{where}: invalid format for '{profile}': {problem}")
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
