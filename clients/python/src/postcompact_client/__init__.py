"""Typed Python client for the postcompact daemon (sync `Client`, asyncio `AsyncClient`).

Discovery, auto-start and error conventions follow docs/clients.md. Every method returns the
typed values of `postcompact_client.types` (frozen dataclasses; enums that print their names);
`call()` and the generated messages (`pb`) stay available for raw protobuf.
"""

from postcompact_client import types
from postcompact_client._aio import AsyncClient, AsyncSession
from postcompact_client._autostart import AutoStartPolicy
from postcompact_client._client import Client, Session
from postcompact_client._discovery import Target, resolve, runtime_dir
from postcompact_client._errors import (
    ClientReason,
    DaemonStartFailed,
    DaemonUnavailable,
    PostcompactError,
)
from postcompact_client._requests import Injection, join, rendered_text
from postcompact_client._retry import RetryPolicy, is_idempotent
from postcompact_client.types import (
    Attachment,
    AttachmentKind,
    CompactResponse,
    Decision,
    Outcome,
    Placement,
    Profile,
    WriteCheck,
)
from postcompact_client.v1 import postcompact_pb2 as pb

__version__ = "0.1.0"

__all__ = [
    "AsyncClient",
    "AsyncSession",
    "Attachment",
    "AttachmentKind",
    "AutoStartPolicy",
    "Client",
    "ClientReason",
    "CompactResponse",
    "DaemonStartFailed",
    "DaemonUnavailable",
    "Decision",
    "Injection",
    "Outcome",
    "Placement",
    "PostcompactError",
    "Profile",
    "RetryPolicy",
    "Session",
    "Target",
    "WriteCheck",
    "is_idempotent",
    "join",
    "pb",
    "rendered_text",
    "resolve",
    "runtime_dir",
    "types",
]
