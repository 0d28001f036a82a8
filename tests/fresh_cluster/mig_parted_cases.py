"""What nvidia-mig-parted accepts and refuses: values and upstream's verdicts, as data.

Each row cites the upstream lines that decide it. Upstream code is not in this repository: the
verdicts were confirmed by building mig-parted v0.15.0's own ``api/spec/v1/spec.go``,
``pkg/types/mig_config.go`` and its vendored go-nvlib ``pkg/nvlib/device/mig_profile.go`` (v0.12.0, the
same blob af79006f as go-nvlib's tag) in a scratch directory and feeding it every row (docs/testing.md,
'Upstream code as an oracle'). `tests.support.mig_parted` is our own rule set; tests/fresh_cluster/
test_mig_manager.py checks it reproduces every verdict.
"""

from __future__ import annotations

from typing import Any, NamedTuple

MIG_PARTED = "NVIDIA/mig-parted v0.15.0 (e2d5ad1fc72b)"
SPEC_GO = f"{MIG_PARTED} api/spec/v1/spec.go"
MIG_CONFIG_GO = f"{MIG_PARTED} pkg/types/mig_config.go"
MIG_PROFILE_GO = "NVIDIA/go-nvlib v0.12.0 (1aea26713dfa) pkg/nvlib/device/mig_profile.go"


class ProfileCase(NamedTuple):
    profile: str
    error: str | None
    """go-nvlib's error message, word for word (None: the name parses)."""
    source: str


class DocumentCase(NamedTuple):
    document: Any
    refused_with: str | None
    """None: mig-parted parses the document. Otherwise a part of mig-parted's error message that
    ours must say too; empty where upstream's message is encoding/json's type error."""
    source: str


def _ok(profile: str, lines: str) -> ProfileCase:
    return ProfileCase(profile, None, f"{MIG_PROFILE_GO}:{lines}")


def _raw(profile: str, error: str, lines: str) -> ProfileCase:
    return ProfileCase(profile, error, f"{MIG_PROFILE_GO}:{lines}")


def _fields(profile: str, error: str, lines: str) -> ProfileCase:
    """A name whose ``[<c>c.]<g>g.<gb>gb`` part is refused (wrapped at line 270-273)."""
    return _raw(profile, f"cannot parse fields of '{profile}': {error}", lines)


def _attrs(profile: str, error: str, lines: str) -> ProfileCase:
    """A name whose attribute list is refused (wrapped at line 286-289)."""
    return _raw(profile, f"cannot parse attributes of '{profile}': {error}", lines)


PROFILE_CASES = [
    _ok("1g.10gb", "337-347"),
    _ok("7g.80gb", "337-347"),
    _ok("0g.0gb", "300-315"),  # the format only; whether the GPU offers it is another matter
    _ok("1c.2g.20gb", "322-335"),
    _ok("1g.10gb+me", "286-297"),
    _ok("1g.10gb+me.all", "352-382"),
    _ok("1g.10gb+me,gfx", "352-382"),
    _ok("1g.10gb-me", "291-294"),
    _raw("", "profile is the empty string", "253-255"),
    _raw("1g.10gb+me-x", "profile '1g.10gb+me-x' contains both '+/-' attributes", "258-263"),
    _fields("1g", "parsed wrong number of fields, expected 2 or 3", "349"),
    _fields("+1g.10gb", "parsed wrong number of fields, expected 2 or 3", "258,349"),
    _fields("1c.1g.1g.10gb", "malformed number in '%dgb'", "321,309-312"),
    _fields("g.10gb", "malformed number in '%dg'", "309-312"),
    _fields("99999999999999999999g.10gb", "malformed number in '%dg'", "309-312"),  # strconv.Atoi's range
    _fields("1x.10gb", "missing 'g' from '%dg'", "305-307"),
    _fields("1c.1g.10GB", "missing 'gb' from '%dgb'", "305-307"),
    _fields("1g.-10gb", "missing 'gb' from '%dgb'", "259,305-307"),  # '-' starts negative attributes
    _fields(" 1g.10gb", "leading or trailing spaces on '%dg'", "301-303"),
    _fields("1g.10gb ", "leading or trailing spaces on '%dgb'", "301-303"),
    _attrs("1g.10gb+", "empty attribute in list", "361-363"),
    _attrs("1g.10gb+,,", "empty attribute in list", "358-363"),  # an attribute counts once it passed
    _attrs("1g.10gb+me,me", "non unique attribute in list", "358-360"),
    _attrs("1g.10gb+ me", "leading or trailing spaces in attribute", "364-366"),
    _attrs("1g.10gb+1me", "attribute begins with a number", "367-369"),
    _attrs("1g.10gb+.me", "attribute begins/ends with a dot", "370-372"),
    _attrs("1g.10gb+me.", "attribute begins/ends with a dot", "370-372"),
    _attrs("1g.10gb+m_e", "non alpha-numeric character or digit in attribute", "373-377"),
    _attrs("1g.10gb+mé", "non alpha-numeric character or digit in attribute", "373-377"),
]


_DROP = object()
"""A field `_entry` leaves out."""


def _doc(*entries: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {"version": "v1", "mig-configs": {"a": list(entries)}, **top}


def _entry(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"devices": "all", "mig-enabled": True, "mig-devices": {"1g.10gb": 7}}
    return {k: v for k, v in {**base, **fields}.items() if v is not _DROP}


_OFF = {"mig-enabled": False, "mig-devices": _DROP}

DOCUMENT_CASES = [
    DocumentCase(_doc(_entry()), None, f"{SPEC_GO}:47-99,102-183"),
    DocumentCase(_doc(_entry(**_OFF)), None, f"{SPEC_GO}:173-179"),
    DocumentCase({"version": "v1"}, None, f"{SPEC_GO}:54-72"),
    DocumentCase({}, "unknown version", f"{SPEC_GO}:54,70-72"),
    DocumentCase(
        {"mig-configs": {"a": [_entry()]}}, "unable to parse with missing 'version' field", f"{SPEC_GO}:54-56"
    ),
    DocumentCase(_doc(_entry(), version="v2"), "unknown version: v2", f"{SPEC_GO}:70-72"),
    DocumentCase(
        {"version": "v1", "mig-configs": {}},
        "at least one entry in 'mig-configs' is required",
        f"{SPEC_GO}:83-85",
    ),
    DocumentCase(
        {"version": "v1", "mig-configs": {"a": []}},
        "at least one entry in 'a' is required",
        f"{SPEC_GO}:86-90",
    ),
    DocumentCase(_doc(_entry(), other=1), "unexpected field: other", f"{SPEC_GO}:92-93"),
    DocumentCase(_doc(_entry(devices=_DROP)), "missing required field: devices", f"{SPEC_GO}:109-114"),
    DocumentCase(
        _doc(_entry(**{"mig-enabled": _DROP})), "missing required field: mig-enabled", f"{SPEC_GO}:109-114"
    ),
    DocumentCase(_doc(_entry(extra=1)), "unexpected field: extra", f"{SPEC_GO}:168-169"),
    DocumentCase(
        _doc(_entry(devices="some")), "invalid string input for 'devices': some", f"{SPEC_GO}:137-139"
    ),
    DocumentCase(_doc(_entry(devices=[0, 1])), None, f"{SPEC_GO}:143-147"),
    DocumentCase(_doc(_entry(devices=[0.5])), "", f"{SPEC_GO}:133-149"),
    DocumentCase(_doc(_entry(**{"device-filter": "0x20B010DE"})), None, f"{SPEC_GO}:119-125"),
    DocumentCase(_doc(_entry(**{"device-filter": ["0x20B010DE", "0x20B210DE"]})), None, f"{SPEC_GO}:126-131"),
    DocumentCase(_doc(_entry(**{"device-filter": 5})), "", f"{SPEC_GO}:119-132"),
    DocumentCase(_doc(_entry(**{"mig-enabled": "yes"})), "", f"{SPEC_GO}:150-155"),
    DocumentCase(
        _doc(_entry(**{"mig-devices": _DROP})),
        "missing required field 'mig-devices' when 'mig-enabled' is true",
        f"{SPEC_GO}:173-175",
    ),
    DocumentCase(
        _doc(_entry(**{"mig-devices": None})),
        "missing required field 'mig-devices' when 'mig-enabled' is true",
        f"{SPEC_GO}:157-167,173-175",
    ),
    DocumentCase(_doc(_entry(**{"mig-devices": {}})), None, f"{MIG_CONFIG_GO}:41-43; {SPEC_GO}:173"),
    DocumentCase(
        _doc(_entry(**{"mig-enabled": False})),
        "MIG devices included when 'mig-enabled' is false",
        f"{SPEC_GO}:177-179",
    ),
    DocumentCase(_doc(_entry(**{"mig-enabled": False, "mig-devices": {}})), None, f"{SPEC_GO}:177"),
    DocumentCase(
        _doc(_entry(**{"mig-devices": {"1x.10gb": 1}})),
        "invalid format for '1x.10gb': cannot parse fields of '1x.10gb': missing 'g' from '%dg'",
        f"{MIG_CONFIG_GO}:45-48",
    ),
    DocumentCase(
        _doc(_entry(**{"mig-devices": {"1g.10gb": -1, "2g.20gb": 1}})),
        "invalid count for",
        f"{MIG_CONFIG_GO}:49-51",
    ),
    DocumentCase(
        _doc(_entry(**{"mig-devices": {"1g.10gb": 0}})),
        "all counts for all MigProfiles are 0",
        f"{MIG_CONFIG_GO}:53-58",
    ),
    DocumentCase(
        _doc(_entry(**{"mig-devices": {"1g.10gb": 0, "2g.20gb": 1}})), None, f"{MIG_CONFIG_GO}:53-56"
    ),
    DocumentCase(_doc(_entry(**{"mig-devices": {"1g.10gb": 1.5}})), "", f"{SPEC_GO}:158-162"),
]
