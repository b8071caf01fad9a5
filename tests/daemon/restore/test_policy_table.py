"""The policy table (restore/policy.py, `Policy`): one row per field of the proto's
`RestorePolicy`, from which the validation, the `[policy]` keys, the defaults of each profile and
the docs are made. No daemon."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from postcompact import config, profiles
from postcompact.restore.policy import (
    FIELDS,
    Knob,
    Policy,
    PolicyField,
    profile_policy,
    resolve_policy,
    validate_policy,
)
from postcompact.v1 import postcompact_pb2 as pb

ROOT = Path(__file__).resolve().parents[3]
PROTO_FIELDS = [f.name for f in pb.RestorePolicy.DESCRIPTOR.fields]


def test_every_field_of_the_proto_has_its_row_and_every_row_its_field() -> None:
    """Adding a field to `RestorePolicy` needs its row in `Policy` (and a row needs the field:
    the import fails on one the proto lacks)."""
    rows = [f.name for f in dataclasses.fields(Policy)]
    assert sorted(rows) == sorted(PROTO_FIELDS)
    assert [f.name for f in FIELDS] == rows
    for f in dataclasses.fields(Policy):
        assert isinstance(f.metadata.get("knob"), Knob), f"Policy.{f.name} has no knob(...)"
    for row in FIELDS:
        assert row.descriptor is pb.RestorePolicy.DESCRIPTOR.fields_by_name[row.name]


def _fits(row: PolicyField, value: Any) -> bool:
    """`value` is of the field's type (None: unset, for the strings that fall back to the
    wording)."""
    if row.kind == "int":
        return type(value) is int
    if row.kind == "bool":
        return type(value) is bool
    if row.kind == "enum":
        return value in row.choices.values()
    return value is None or type(value) is str


@pytest.mark.parametrize("row", FIELDS, ids=lambda r: r.name)
def test_each_row_fits_its_field_under_every_profile(row: PolicyField) -> None:
    for profile in profiles.ALL:
        value = row.knob.value_for(profile)
        assert _fits(row, value), (profiles.name_of(profile), value)
        assert getattr(profile_policy(profile), row.name) == value
        if value is not None:  # the default passes the checks any layer's value passes
            layer = pb.RestorePolicy()
            setattr(layer, row.name, value)
            validate_policy(layer)
    for profile in (profile for profile, _ in row.knob.by_profile):
        assert profiles.known(profile)
    # Bounds and units are the numbers', checks the strings'.
    assert row.kind == "int" or (row.knob.unit, row.knob.minimum, row.knob.maximum) == ("", 0, None)
    assert row.kind == "str" or row.knob.check is None


def test_the_rows_value_is_claude_code_2_1_88s_and_policys_own_default() -> None:
    """`Policy()` is the claude-code-2.1.88 profile's policy (the base every profile takes where
    its row names no value of its own); an unknown or unspecified profile gets the default
    profile's."""
    assert Policy() == profile_policy(pb.PROFILE_CLAUDE_CODE_2_1_88)
    assert profile_policy(pb.PROFILE_UNSPECIFIED) == profile_policy(pb.PROFILE_DEFAULT)
    assert profile_policy(99) == profile_policy(pb.PROFILE_DEFAULT)  # type: ignore[arg-type]
    assert profile_policy(pb.PROFILE_DEFAULT) != Policy()


def test_a_layer_holding_a_profiles_defaults_resolves_to_them() -> None:
    for profile in profiles.ALL:
        own = profile_policy(profile)
        layer = pb.RestorePolicy(
            **{r.name: getattr(own, r.name) for r in FIELDS if getattr(own, r.name) is not None}
        )
        for other in profiles.ALL:
            assert resolve_policy(other, layer) == own


def _toml(row: PolicyField, value: Any) -> str:
    if row.kind == "enum":
        return f'"{row.choice_name(value)}"'
    if row.kind == "bool":
        return "true" if value else "false"
    if row.kind == "str":
        return f'"{value}"'
    return str(value)


@pytest.mark.parametrize("row", FIELDS, ids=lambda r: r.name)
def test_each_row_is_a_policy_key_of_the_config_file(row: PolicyField, tmp_path: Path) -> None:
    """Every value a layer may carry, spelled as config.toml spells it (an enum by its name's
    tail in lower case), is read into the field."""
    if row.kind == "enum":
        values: list[Any] = list(row.choices.values())
        assert set(values) == row.known - {0}  # all but UNSPECIFIED
    else:
        values = [v for v in (row.knob.value_for(p) for p in profiles.ALL) if v is not None]
        values = values or ["[cut]"]
    for value in values:
        path = tmp_path / "config.toml"
        path.write_text(f"[policy]\n{row.config_key} = {_toml(row, value)}\n")
        loaded = config.load_config({}, env={}, config_file=path).policy
        assert [f.name for f, _ in loaded.ListFields()] == [row.name]
        assert getattr(loaded, row.name) == value
    assert sorted(config.POLICY_KEYS) == sorted(r.config_key for r in FIELDS)  # one key each


def test_the_docs_are_generated_from_the_table() -> None:
    """docs/profiles.md's "Policy fields" and config.py's `[policy]` example are what
    scripts/policy_table.py writes from the table now (also run by `make lint`)."""
    run = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "policy_table.py"), "--check"],
        check=False,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    docs = (ROOT / "docs" / "profiles.md").read_text()
    for row in FIELDS:
        assert f"| `{row.name}`" in docs
