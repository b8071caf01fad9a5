"""`Settings.resolve` keeps the policy of a session's layer (found again by that very message)
and resolves anything else as `resolve_policy` does. No daemon."""

from __future__ import annotations

import pytest
from postcompact.config import Config
from postcompact.errors import InvalidArgument
from postcompact.restore.policy import resolve_policy
from postcompact.settings import Settings
from postcompact.v1 import postcompact_pb2 as pb


def test_a_sessions_layer_is_resolved_once_and_anything_else_as_resolve_policy_does() -> None:
    settings = Settings.of(Config())
    mine = pb.RestorePolicy(max_files=7)
    first = settings.resolve(pb.PROFILE_DEFAULT, mine)
    assert first == resolve_policy(pb.PROFILE_DEFAULT, settings.policy, mine)
    assert first.max_files == 7
    # Again, alone or with an empty request layer: the very policy kept.
    assert settings.resolve(pb.PROFILE_DEFAULT, mine) is first
    assert settings.resolve(pb.PROFILE_DEFAULT, mine, pb.RestorePolicy()) is first
    # A request layer that says something is applied on top, every time.
    asked = settings.resolve(pb.PROFILE_DEFAULT, mine, pb.RestorePolicy(max_files=2))
    assert asked.max_files == 2
    # Another profile, or another message with the same fields: resolved for itself.
    other = settings.resolve(pb.PROFILE_CLAUDE_CODE_2_1_88, mine)
    assert other == resolve_policy(pb.PROFILE_CLAUDE_CODE_2_1_88, settings.policy, mine)
    twin = pb.RestorePolicy(max_files=7)
    assert settings.resolve(pb.PROFILE_DEFAULT, twin) == first
    # A bad layer is refused each time, never kept.
    bad = pb.RestorePolicy(max_files=-1)
    for _ in range(2):
        with pytest.raises(InvalidArgument):
            settings.resolve(pb.PROFILE_DEFAULT, bad)
