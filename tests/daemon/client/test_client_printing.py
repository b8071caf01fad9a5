"""Printing a Python client object shows no secret (issue 35): `repr`, `str`, `pprint` and
f-strings of every public object of the sync and asyncio clients, with a fake secret in the
environment and two TCP tokens (one given, one from POSTCOMPACT_TOKEN), show neither the tokens
nor any value of the environment, and do show the address and the session and agent ids."""

from __future__ import annotations

import asyncio
import os
import pprint

import pytest
from postcompact_client import AsyncClient, Client, PostcompactError, RetryPolicy

SECRET = "sk-env-secret-3f9a1c"
GIVEN_TOKEN = "tcp-token-given-7b2e"
ENV_TOKEN = "tcp-token-from-env-91d4"
ADDRESS = "127.0.0.1:1"  # nothing listens there: a call fails at once


def printed(x: object) -> list[str]:
    return [repr(x), str(x), pprint.pformat(x), f"{x!r}", f"{x}", format(x)]


def environment_values() -> list[str]:
    skip = {"PWD", "OLDPWD", "PYTEST_CURRENT_TEST"}
    return [v for k, v in os.environ.items() if len(v) >= 8 and k not in skip]


def assert_safe(what: str, x: object, shown: list[str]) -> None:
    env = environment_values()
    for text in printed(x):
        for secret in (SECRET, GIVEN_TOKEN, ENV_TOKEN):
            assert secret not in text, f"{what} prints a secret: {text[:2000]}"
        leaked = [v for v in env if v in text]
        assert not leaked, f"{what} prints the environment ({leaked}): {text[:2000]}"
    for field in shown:
        assert field in repr(x), f"{what} does not show {field}: {x!r}"


@pytest.fixture
def secret_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SECRET_TOKEN", SECRET)
    monkeypatch.setenv("POSTCOMPACT_TOKEN", ENV_TOKEN)


@pytest.mark.usefixtures("secret_env")
def test_sync_client_objects_print_no_secret() -> None:
    with (
        Client(ADDRESS, token=GIVEN_TOKEN, retry=RetryPolicy.none()) as given,
        Client(ADDRESS, retry=RetryPolicy.none()) as from_env,
    ):
        assert from_env.target.token == ENV_TOKEN  # the token is there, only not printed
        errors: list[PostcompactError] = []
        for c in (given, from_env):
            try:
                c.stats()
            except PostcompactError as e:
                errors.append(e)
        session = given.session("ses-print-1", "agent-print-a")
        for what, x, shown in [
            ("client (token given)", given, [ADDRESS]),
            ("client (token from the environment)", from_env, [ADDRESS]),
            ("target", from_env.target, [ADDRESS]),
            ("session", session, ["ses-print-1", "agent-print-a"]),
            ("agent", session.agent("agent-print-b"), ["ses-print-1", "agent-print-b"]),
            ("retry", given.retry, []),
            ("the call's error", errors[0], [ADDRESS]),
        ]:
            assert_safe(what, x, shown)
        assert repr(given) == f"Client(address='{ADDRESS}', auto_start=False)"


@pytest.mark.usefixtures("secret_env")
def test_async_client_objects_print_no_secret() -> None:
    async def main() -> None:
        async with AsyncClient(ADDRESS, token=GIVEN_TOKEN, retry=RetryPolicy.none()) as client:
            try:
                await client.stats()
            except PostcompactError as e:
                assert_safe("the call's error", e, [ADDRESS])
            session = client.session("ses-print-2", "agent-print-c")
            assert_safe("asyncio client", client, [ADDRESS])
            assert_safe("target", client.target, [ADDRESS])
            assert_safe("asyncio session", session, ["ses-print-2", "agent-print-c"])
            assert repr(client) == f"AsyncClient(address='{ADDRESS}', auto_start=False)"

    asyncio.run(main())
