"""The asyncio Python client against the real daemon: the same surface as the sync one (which
scripts/unasync.py generates from it), giving the same answers."""

from __future__ import annotations

import asyncio
import inspect
from pathlib import Path

from postcompact_client import AsyncClient, AsyncSession, Client, Session, rendered_text

from tests.daemon.conftest import PROJECT_FILES, RunningDaemon, new_session_id

TEXTS = ["short text", "a longer text, " * 40, "naïve café ☕ " * 10]


def _public(cls: type) -> dict[str, inspect.Signature]:
    return {
        name: inspect.signature(fn)
        for name, fn in vars(cls).items()
        if callable(fn) and (not name.startswith("_") or name in ("__init__",))
    }


def test_the_async_classes_have_the_sync_surface() -> None:
    for sync_cls, async_cls in ((Client, AsyncClient), (Session, AsyncSession)):
        sync, aio = _public(sync_cls), _public(async_cls)
        assert sorted(sync) == sorted(aio)
        for name, sig in sync.items():
            assert list(sig.parameters) == list(aio[name].parameters), name
            fn = getattr(async_cls, name)
            blocking = name in ("__init__", "__repr__", "agent", "session")
            assert inspect.iscoroutinefunction(fn) != blocking, name


def test_async_answers_equal_sync_answers(daemon: RunningDaemon, project: Path) -> None:
    sync = daemon.client

    async def run() -> tuple[list[object], str]:
        async with AsyncClient(daemon.address, auto_start=False) as client:
            estimates = await client.estimate_tokens_batch(TEXTS)
            counts = await client.count_tokens_batch(TEXTS, encoding="o200k_base")
            cut = await client.truncate_tokens_batch(TEXTS, 5, "…", counter="exact")
            s = await client.open_session(str(project), session_id=new_session_id("aio"))
            read = await s.read_file("src/a.py")
            assert read.content == PROJECT_FILES["src/a.py"].encode()
            assert (await s.read_file("src/a.py")).unchanged
            assert await s.record_skill("lint", content="Run the linter.") == 1
            text = rendered_text(await s.compact(skip_hooks=True))
            await s.close()
            return [estimates, counts, [(r.text, r.truncated, r.tokens) for r in cut]], text

    answers, text = asyncio.run(run())
    assert answers == [
        sync.estimate_tokens_batch(TEXTS),
        sync.count_tokens_batch(TEXTS, encoding="o200k_base"),
        [
            (r.text, r.truncated, r.tokens)
            for r in sync.truncate_tokens_batch(TEXTS, 5, "…", counter="exact")
        ],
    ]
    assert any(r.truncated for r in sync.truncate_tokens_batch(TEXTS, 5, "…", counter="exact"))
    s = sync.open_session(str(project), session_id=new_session_id("sync"))
    s.read_file("src/a.py")
    s.record_skill("lint", content="Run the linter.")
    assert rendered_text(s.compact(skip_hooks=True)) == text
