"""The Python client's runner of the shared conformance scenarios (tests/conformance/*.json).

Every scenario runs against the live daemon through `postcompact_client`; the Node, Go and Rust
clients run the same files with their own runners. See tests/conformance/README.md.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import grpc
import pytest
from postcompact_client import PostcompactError, Session, join, pb, rendered_text, types

from tests.daemon.conftest import RunningDaemon, new_session_id, short_dir, text_of

SCENARIO_DIR = Path(__file__).resolve().parents[2] / "conformance"
SCENARIOS = sorted(SCENARIO_DIR.glob("*.json"))

Step = Mapping[str, Any]


def test_scenarios_exist() -> None:
    assert len(SCENARIOS) >= 20


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_scenario(daemon: RunningDaemon, path: Path) -> None:
    scenario = json.loads(path.read_text())
    root = short_dir("pcc")
    try:
        Runner(daemon, root, scenario).run()
    finally:
        shutil.rmtree(root, ignore_errors=True)


class Runner:
    def __init__(self, daemon: RunningDaemon, root: Path, scenario: Mapping[str, Any]):
        self.daemon = daemon
        self.root = root
        self.scenario = scenario
        self.name = scenario["name"]
        for rel, text in scenario.get("files", {}).items():
            p = root / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text)
        cfg = scenario.get("session", {})
        self.session = daemon.client.open_session(
            str(root),
            session_id=new_session_id(self.name),
            roots=[str(root / r) for r in cfg.get("roots", [])],
            memory_file_names=cfg.get("memory_file_names", []),
            memory_paths=cfg.get("memory_paths", []),
            policy=cfg.get("policy"),
            profile=cfg.get("profile"),
        )

    # --- helpers -----------------------------------------------------------------------------
    def sub(self, value: Any) -> Any:
        """Replace ${root} in every string of a JSON value."""
        if isinstance(value, str):
            return value.replace("${root}", str(self.root))
        if isinstance(value, list):
            return [self.sub(v) for v in value]
        if isinstance(value, dict):
            return {k: self.sub(v) for k, v in value.items()}
        return value

    def abs_path(self, p: str) -> str:
        p = self.sub(p)
        return p if os.path.isabs(p) else str(self.root / p)

    def agent(self, step: Step) -> Session:
        return self.session.agent(step.get("agent", ""))

    def content_of(self, step: Step) -> str:
        if "content" in step:
            return str(self.sub(step["content"]))
        return (self.root / str(step["path"])).read_text()

    # --- driver ------------------------------------------------------------------------------
    def run(self) -> None:
        for i, raw in enumerate(self.scenario["steps"]):
            step = self.sub(raw)
            where = f"{self.name} step {i} ({step['op']})"
            op: Callable[[Step], Any] = getattr(self, "op_" + step["op"])
            expect_error = step.get("expect_error")
            error: PostcompactError | None = None
            try:
                result = op(step)
            except PostcompactError as err:
                if not expect_error:
                    raise AssertionError(f"{where}: unexpected error {err}") from err
                error = err
            if expect_error:
                self.check_error(where, expect_error, error)
                continue
            if "expect" in step:
                self.check(where, step["expect"], result)

    def check_error(
        self, where: str, want: Mapping[str, str], err: PostcompactError | None
    ) -> None:
        assert err is not None, f"{where}: expected {want}, the call succeeded"
        assert err.code == getattr(grpc.StatusCode, want["code"]), f"{where}: {err}"
        if "reason" in want:
            assert err.reason == want["reason"], f"{where}: {err}"
        assert err.reason, f"{where}: the error carries no reason: {err}"

    def check(self, where: str, expect: Mapping[str, Any], result: Any) -> None:
        for key, want in expect.items():
            if key == "attachments":
                self.check_attachments(where, want, list(result.attachments))
            elif key == "decisions":
                self.check_decisions(where, want, result, expect.get("decisions_exact", False))
            elif key == "decisions_exact":
                continue
            elif key == "stale_paths":
                stale = {str(p) for p in result.stale_paths}
                assert stale == {self.abs_path(p) for p in want}, f"{where}: stale {stale}"
            elif key == "result":
                name = result.result.name
                assert name == want, f"{where}: result {name}"
            elif key == "rendered_text":  # the response does not carry it: the client joins it
                text = rendered_text(result)
                assert text == want, f"{where}: rendered_text = {text!r}, want {want!r}"
            elif key == "user_blocks":
                blocks = join(result).user_blocks
                assert blocks == want, f"{where}: user_blocks = {blocks!r}, want {want!r}"
            elif key == "system_text":
                text = join(result).system_text
                assert text == want, f"{where}: system_text = {text!r}, want {want!r}"
            elif key == "boundaries":
                self.check_boundaries(where, want, list(result.boundaries))
            elif key == "warnings":
                assert len(result.warnings) == want, f"{where}: warnings {list(result.warnings)}"
            else:
                value = getattr(result, key)
                if isinstance(value, bytes):
                    value = value.decode()
                assert value == want, f"{where}: {key} = {value!r}, want {want!r}"

    def check_attachments(self, where: str, want: list[Any], got: list[types.Attachment]) -> None:
        kinds = [a.kind.name for a in got]
        assert len(got) == len(want), f"{where}: attachments {kinds}, want {len(want)}"
        for j, (w, a) in enumerate(zip(want, got, strict=True)):
            kind = kinds[j]
            assert kind == w["kind"], f"{where}: attachment {j} is {kind}, want {w['kind']}"
            if "path" in w:
                ref = a.file if a.file is not None else a.file_reference
                path = None if ref is None else ref.path
                assert path == self.abs_path(w["path"]), f"{where}: attachment {j} path {path}"
            if "placement" in w:
                placement = a.placement.name
                assert placement == w["placement"], f"{where}: attachment {j} is {placement}"
            if "blocks" in w:
                assert a.blocks == tuple(w["blocks"]), f"{where}: attachment {j} blocks"
            if "rendered_text" in w:
                assert text_of(a) == w["rendered_text"], f"{where}: attachment {j} text"
            for part in w.get("rendered_contains", []):
                assert part in text_of(a), f"{where}: attachment {j} lacks {part!r}"
            if "file_content" in w:
                assert a.file is not None, f"{where}: attachment {j} is no file"
                got_content = a.file.content.decode()
                assert got_content == w["file_content"], (
                    f"{where}: attachment {j} file content {got_content!r}"
                )

    def check_boundaries(
        self, where: str, want: list[Any], got: list[types.TranscriptBoundary]
    ) -> None:
        assert len(got) == len(want), f"{where}: {len(got)} boundaries, want {len(want)}"
        for j, (w, b) in enumerate(zip(want, got, strict=True)):
            for key in ("recorded", "restored"):
                if key in w:
                    items = [{"kind": x.kind, "path": x.path} for x in getattr(b, key)]
                    assert items == w[key], f"{where}: boundary {j} {key} {items}"

    def check_decisions(self, where: str, want: list[Any], result: Any, exact: bool) -> None:
        got = {(d.subject.name, d.name, d.outcome.name) for d in result.decisions}
        expected = set()
        for w in want:
            name = self.abs_path(w["name"]) if w["subject"] == "FILE" else w["name"]
            expected.add((w["subject"], name, w["outcome"]))
        missing = expected - got
        assert not missing, f"{where}: decisions missing {missing}; got {got}"
        if exact:
            assert got == expected, f"{where}: extra decisions {got - expected}"

    # --- ops ---------------------------------------------------------------------------------
    def op_write_file(self, step: Step) -> None:
        p = Path(self.abs_path(step["path"]))
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(step["content"])
        if "mtime_ms" in step:
            ns = int(step["mtime_ms"]) * 1_000_000
            os.utime(p, ns=(ns, ns))

    def op_delete_file(self, step: Step) -> None:
        Path(self.abs_path(step["path"])).unlink()

    def op_start_agent(self, step: Step) -> None:
        parent = self.session.agent(step.get("parent", ""))
        parent.start_agent(step["agent"], step.get("mode", "FRESH"))

    def op_attach(self, step: Step) -> Any:
        return self.session.client.attach_session(self.session.session_id)

    def op_end_agent(self, step: Step) -> Any:
        return self.agent(step).end_agent()

    def op_merge_file_state(self, step: Step) -> Any:
        return self.session.agent(step["into"]).merge_file_state(step["from"])

    def op_read_file(self, step: Step) -> Any:
        return self.agent(step).read_file(
            step["path"], offset=step.get("offset"), limit=step.get("limit")
        )

    def op_record_read(self, step: Step) -> Any:
        return self.agent(step).record_read(
            step["path"],
            self.content_of(step),
            timestamp_ms=step.get("timestamp_ms", 0),
            offset=step.get("offset"),
            limit=step.get("limit"),
            partial_view=step.get("partial_view", False),
        )

    def op_record_write(self, step: Step) -> Any:
        return self.agent(step).record_write(
            step["path"],
            self.content_of(step),
            timestamp_ms=step.get("timestamp_ms", 0),
            if_entry_timestamp_ms=step.get("if_entry_timestamp_ms"),
            changed_lines=(
                [(r[0], r[1]) for r in step["changed_lines"]] if "changed_lines" in step else None
            ),
        )

    def op_check_write(self, step: Step) -> Any:
        return self.agent(step).check_write(step["path"])

    def op_check_stale(self, step: Step) -> Any:
        return self.agent(step).check_stale(step.get("command", ""), step.get("started_at_ms", 0))

    def op_record_skill(self, step: Step) -> Any:
        return self.agent(step).record_skill(
            step["name"],
            path=step.get("skill_path", ""),
            content=step.get("content", ""),
            invoked_at_ms=step.get("invoked_at_ms", 0),
        )

    def op_set_plan(self, step: Step) -> Any:
        return self.agent(step).set_plan(step["plan_path"])

    def op_set_mode(self, step: Step) -> Any:
        return self.agent(step).set_mode(step["mode"])

    def op_upsert_task(self, step: Step) -> Any:
        return self.agent(step).upsert_task(step["task"])

    def op_set_catalog(self, step: Step) -> Any:
        servers = step.get("mcp_servers")
        mcp = None if servers is None else {s["name"]: s["instructions"] for s in servers}
        resp = self.agent(step).set_catalog(
            deferred_tools=step.get("deferred_tools"),
            agent_types=step.get("agent_types"),
            show_concurrency_note=step.get("show_concurrency_note", False),
            mcp_servers=mcp,
        )
        return types.SetCatalogResponse(attachments=tuple(resp))

    def _messages(self, step: Step) -> list[pb.ConversationMessage]:
        out = []
        for m in step.get("preserved_messages", []):
            blocks = []
            for b in m["content"]:
                if "text" in b:
                    blocks.append(pb.ContentBlock(text=b["text"].encode()))
                elif "tool_use" in b:
                    u = b["tool_use"]
                    blocks.append(
                        pb.ContentBlock(
                            tool_use=pb.ToolUse(
                                id=u["id"], name=u["name"], input_json=json.dumps(u["input"])
                            )
                        )
                    )
                else:
                    r = b["tool_result"]
                    blocks.append(
                        pb.ContentBlock(
                            tool_result=pb.ToolResult(
                                tool_use_id=r["tool_use_id"], content=r["content"].encode()
                            )
                        )
                    )
            role = pb.ROLE_USER if m["role"] == "user" else pb.ROLE_ASSISTANT
            out.append(pb.ConversationMessage(role=role, content=blocks))
        return out

    def op_compact(self, step: Step) -> Any:
        return self.agent(step).compact(
            kind=step.get("kind"),
            preserved_messages=self._messages(step),
            policy=step.get("policy"),
            additional_context=step.get("additional_context", []),
            skip_hooks=step.get("skip_hooks", False),
            include_content=step.get("include_content", False),
        )

    def op_preview_compact(self, step: Step) -> Any:
        return self.agent(step).preview_compact(
            kind=step.get("kind"),
            preserved_messages=self._messages(step),
            policy=step.get("policy"),
            additional_context=step.get("additional_context", []),
            skip_hooks=step.get("skip_hooks", False),
            include_content=step.get("include_content", False),
        )

    def op_import_transcript(self, step: Step) -> Any:
        data = "".join(json.dumps(r) + "\n" for r in step["transcript"])
        sid = f"{self.session.session_id}-{step['session_id']}"
        resp = self.daemon.client.import_transcript(data, cwd=str(self.root), session_id=sid)
        return resp

    def op_estimate_tokens(self, step: Step) -> Any:
        tokens = self.daemon.client.estimate_tokens(step["text"], step.get("ext", ""))
        return types.EstimateTokensResponse(tokens=tokens)

    def op_count_tokens(self, step: Step) -> Any:
        tokens = self.daemon.client.count_tokens(step["text"], step.get("encoding", ""))
        return types.CountTokensResponse(tokens=tokens)

    def op_truncate_tokens(self, step: Step) -> Any:
        return self.daemon.client.truncate_tokens(
            step["text"], step["max_tokens"], step.get("marker", ""), counter=step.get("counter")
        )
