"""Claude Code transcripts: parse them, build a session's state from them (import), and replay
their compactions through postcompact's pipeline (docs/transcripts.md, docs/parity.md)."""

from postcompact.transcript.parse import Transcript, TranscriptError, parse

__all__ = ["Transcript", "TranscriptError", "parse"]
