"""Transcripts (daemon/postcompact/transcript/): parsing, import, replay, hostile input."""
