"""Finding the daemon, exactly as docs/clients.md specifies for every client."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path


def runtime_dir(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    xdg = env.get("XDG_RUNTIME_DIR", "")
    if xdg:
        return Path(xdg) / "postcompact"
    return Path(f"/tmp/postcompact-{os.getuid()}")


def read_server_json(env: Mapping[str, str] | None = None) -> dict[str, object] | None:
    try:
        data = json.loads((runtime_dir(env) / "server.json").read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


@dataclass(frozen=True, slots=True)
class Target:
    """Where to connect: a gRPC target string, the Unix socket (if any) and the TCP token."""

    address: str
    socket_path: str | None
    token: str | None = field(repr=False)  # printed, a Target shows no token
    explicit: bool  # named by the caller or POSTCOMPACT_ADDRESS (no auto-start unless asked)

    @property
    def is_tcp(self) -> bool:
        return self.socket_path is None


def normalize(address: str) -> tuple[str, str | None]:
    """(grpc target, socket path or None) for `unix:///p`, `unix:/p`, `/p` or `host:port`."""
    if address.startswith("unix://"):
        path = address[len("unix://") :]
    elif address.startswith("unix:"):
        path = address[len("unix:") :]
    elif address.startswith("/"):
        path = address
    else:
        return address, None
    path = os.path.abspath(path)
    return f"unix://{path}", path


def _token(env: Mapping[str, str], info: Mapping[str, object] | None) -> str | None:
    if env.get("POSTCOMPACT_TOKEN"):
        return env["POSTCOMPACT_TOKEN"].strip()
    candidates = []
    if info and isinstance(info.get("token_file"), str):
        candidates.append(Path(str(info["token_file"])))
    candidates.append(runtime_dir(env) / "token")
    for c in candidates:
        try:
            return c.read_text().strip()
        except OSError:
            continue
    return None


def resolve(
    address: str | None = None, token: str | None = None, env: Mapping[str, str] | None = None
) -> Target:
    env = os.environ if env is None else env
    explicit = True
    info = read_server_json(env)
    if address:
        chosen = address
    elif env.get("POSTCOMPACT_ADDRESS"):
        chosen = env["POSTCOMPACT_ADDRESS"]
    elif info and isinstance(info.get("address"), str) and info["address"]:
        chosen, explicit = str(info["address"]), False
    else:
        chosen, explicit = f"unix://{runtime_dir(env) / 'daemon.sock'}", False
    target, sock = normalize(chosen)
    tok = token
    if sock is None and tok is None:
        tok = _token(env, info)
    return Target(target, sock, tok, explicit)
