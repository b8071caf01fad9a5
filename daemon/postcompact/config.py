"""Daemon configuration: flags > POSTCOMPACT_* environment > config.toml > defaults.

The file is `$XDG_CONFIG_HOME/postcompact/config.toml` (`~/.config/...` when unset), or the one
named by `--config` / `POSTCOMPACT_CONFIG`. Example:

    socket = "/run/user/1000/postcompact/daemon.sock"
    tcp_port = 0                      # loopback TCP as well (0 = pick a port); absent = no TCP
    tcp_host = "127.0.0.1"            # or "::1"; anything not loopback is refused
    log_level = "info"
    log_file = "~/.local/state/postcompact/daemon.log"   # default: stderr (`start`: this file)
    log_max_bytes = 10485760          # a log file rotates at this size (10 MiB) ...
    log_backups = 3                   # ... keeping this many old ones
    max_message_bytes = 33554432      # gRPC receive/send limit (32 MiB; at least 64 KiB)
    profile = "default"               # or "claude-code", "claude-code-2.1.88" (docs/profiles.md)
    deny_globs = ["**/.env", "**/*.pem"]

    shutdown_grace_s = 5              # SIGTERM: how long in-flight calls may finish
    server_implementation = "grpcio"  # or "native": pygrpc-native (issue 41; docs/architecture.md)
    persist = true                    # durable state; false = memory only
    state_url = "sqlite:"             # embedded SQLite (WAL) in the default place, or
    # state_url = "sqlite:///path/to/state.db"          # that file, or a shared database:
    # state_url = "postgresql:///postcompact?host=/run/postgresql"   (docs/fleet.md)
    # state_dir = "~/.local/state/postcompact"   # aliases of a sqlite: URL (not with state_url):
    # state_path = "/path/to/state.db"           # the directory of state.db, or the file
    state_pool_size = 4               # PostgreSQL connections per daemon (SQLite: one writer)

    [limits]                          # every limit is answered with a clear error naming it
    max_sessions = 1000
    max_agents_per_session = 256
    cache_max_entries = 100           # per agent; unset: the profile's (5000 for claude-code)
    cache_max_bytes = 26214400
    max_skills_per_agent = 1000
    max_tasks_per_session = 10000
    max_tasks_per_agent = 1000
    max_catalog_entries = 10000       # deferred tools + agent types + MCP servers + skills
    max_catalog_bytes = 4194304       # one agent's stored catalogue, serialised
    max_roots = 256                   # roots of one session (each path at most 4096 bytes)
    max_content_bytes = 268435456     # recorded content the daemon holds, all sessions (256 MiB)
    max_calls_in_flight = 256         # more at once: OVERLOADED with a RetryInfo
    max_hooks_running = 32            # hook processes at once; the rest wait within their timeout
    max_tcp_connections = 64          # authenticated TCP connections (the Unix socket has no cap)
    max_answer_bytes_in_flight = 50331648  # answers not yet read by their clients (48 MiB)
    session_ttl_s = 604800            # idle sessions expire after 7 days (0 = never)
    sweep_interval_s = 60             # how often expired sessions are swept
    max_state_bytes = 1073741824      # the state database on disk
    max_transcript_records = 200000   # one ImportTranscript (replay, eval): its records,
    max_transcript_events = 1000000   # the events they make (a kept record counts again),
    max_transcript_boundaries = 1000  # and its compactions (each one runs the pipeline)
    max_parser_memory_bytes = 805306368  # a transcript parser process's address space (768 MiB;
                                      # unset: 256 MiB + 16 x max_message_bytes; at least 128 MiB)

    [policy]                          # daemon-wide RestorePolicy defaults (unset: the profile's);
                                      # shown: the default profile's (what each does, and the
                                      # defaults of each profile: docs/profiles.md, "Policy fields")
    # generated: policy
    max_files = 20                    # files, 0 or more; claude-code, claude-code-2.1.88: 5
    file_token_budget = 50000         # tokens, 0 or more
    max_tokens_per_file = 5000        # tokens, 1 or more
    max_tokens_per_skill = 5000       # tokens, 1 or more
    skills_token_budget = 25000       # tokens, 0 or more
    oversize = "skip"                 # "truncate_head", "reference" or "skip"; claude-code,
                                      # claude-code-2.1.88: "reference"
    # skill_truncation_marker = "..." # text without a NUL
    # file_truncation_marker = "..."  # text; placeholders {path}, {shown_lines}, {total_lines},
                                      # {next_offset}
    counter = "rough"                 # "rough" or "exact"
    encoding = "o200k_base"           # o200k_base or cl100k_base
    max_file_size_bytes = 262144      # bytes, 1 to 67,108,864 (64 MiB)
    malware_reminder = false          # true or false; claude-code-2.1.88: true
    carry_read_state = true           # true or false; claude-code-2.1.88: false
    max_read_tokens = 25000           # tokens, 1 or more
    restore_seen = true               # true or false; claude-code, claude-code-2.1.88: false
    ranking = "scored"                # "recency", "edits_first", "mtime", "claude_code_first" or
                                      # "scored"; claude-code, claude-code-2.1.88: "recency"
    left_out_index = false            # true or false
    complement = "none"               # "none" or "claude_code"
    match_budget = "claude_code"      # "none" or "claude_code"; claude-code, claude-code-2.1.88:
                                      # "none"
    # end: policy

    [templates]                       # the wording (docs/profiles.md, "Wording")
    preset = "neutral"                # no Claude Code tool named; unset: the profile's wording
    # read_tool_name = "read"         # the harness's read tool, as the kept tail names it
    # read_path_key = "filePath"      # and its path argument
    # read_call = "..."               # any template by name: {input_json}

    [[hooks.session_start]]           # run at Compact; ONLY from this file, never from clients
    command = "cat ~/notes/invariants.txt | jq -Rs '{additionalContext: .}'"
    timeout_s = 10
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from postcompact import profiles
from postcompact.errors import PostcompactError
from postcompact.lifecycle import (
    DEFAULT_TCP_HOST,
    LifecycleError,
    default_socket_path,
    loopback_host,
)
from postcompact.render import TemplateError
from postcompact.restore.policy import FIELDS as POLICY_FIELDS
from postcompact.restore.policy import PolicyField, validate_policy
from postcompact.units import INT32_MAX, INT64_MAX, MIB
from postcompact.v1 import postcompact_pb2 as pb

DEFAULT_MAX_MESSAGE_BYTES = 32 * MIB
# A transcript parser's address space by default: 256 MiB + 16 bytes for each byte a request may
# carry, 768 MiB with the default max_message_bytes. Measured (docs/reliability.md,
# "Transcripts"): a fresh parser maps ~104 MiB; 32 MiB of real transcripts peaked at 247-264 MiB,
# the densest well-formed 32 MiB one the other limits allow (157,580 records of Read pairs) at
# 510 MiB; one line of 11 million empty objects (`[{},{},...]`, 32 MiB) at 1,029 MiB.
PARSER_MEMORY_BASE = 256 * MIB
PARSER_MEMORY_PER_BYTE = 16
# Below this the interpreter itself (~104 MiB mapped) leaves a parse no room.
MIN_PARSER_MEMORY_BYTES = 128 * MIB
LOG_LEVELS = ("debug", "info", "warning", "error")
# The gRPC server the listeners run on: grpc.aio (the default) or pygrpc-native's, whose HTTP/2
# work runs in Rust (nativeserver.py; issue 41, docs/benchmarks.md "Serving").
SERVER_IMPLEMENTATIONS = {"grpcio": "grpcio", "native": "native"}
PROFILES: dict[str, pb.Profile.ValueType] = dict(profiles.NAMES)
# [policy]'s keys: the policy table's (restore/policy.py).
POLICY_KEYS: dict[str, PolicyField] = {f.config_key: f for f in POLICY_FIELDS}


class ConfigError(Exception):
    """A bad configuration value (reported as one clear line, exit code 2)."""


@dataclass(frozen=True, slots=True)
class HookConfig:
    """A session-start hook command (run with `sh -c`, JSON on stdin) and its timeout."""

    command: str
    timeout_s: float = 10.0


@dataclass(frozen=True, slots=True)
class Config:
    socket: Path = field(default_factory=default_socket_path)
    tcp_port: int | None = None  # None = no TCP listener; 0 = pick a free loopback port
    tcp_host: str = DEFAULT_TCP_HOST  # loopback only (lifecycle.loopback_host)
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    log_level: str = "info"
    log_file: Path | None = None
    log_max_bytes: int = 10 * MIB
    log_backups: int = 3
    profile: pb.Profile.ValueType = pb.PROFILE_DEFAULT
    deny_globs: tuple[str, ...] = ()
    hooks: tuple[HookConfig, ...] = ()
    policy_defaults: bytes = b""  # a serialised pb.RestorePolicy (frozen dataclass-friendly)
    templates_spec: bytes = b""  # a serialised pb.TemplateSpec: [templates] (the wording)
    max_sessions: int = 1000
    max_agents_per_session: int = 256
    cache_max_entries: int | None = None  # None = the session profile's (profiles.Rules)
    cache_max_bytes: int = 25 * MIB
    max_skills_per_agent: int = 1000
    max_tasks_per_session: int = 10_000
    max_tasks_per_agent: int = 1000
    max_catalog_entries: int = 10_000
    max_catalog_bytes: int = 4 * MIB
    max_roots: int = 256
    max_content_bytes: int = 256 * MIB
    max_calls_in_flight: int = 256
    max_hooks_running: int = 32
    max_tcp_connections: int = 64
    max_answer_bytes_in_flight: int = 48 * MIB
    session_ttl_s: float = 7 * 24 * 3600.0  # 0 = idle sessions never expire
    sweep_interval_s: float = 60.0
    max_state_bytes: int = 1024 * MIB
    # One transcript's budget (ImportTranscript, replay, eval: docs/reliability.md).
    max_transcript_records: int = 200_000
    max_transcript_events: int = 1_000_000
    max_transcript_boundaries: int = 1_000
    # A transcript parser process's address space (RLIMIT_AS); None = `parser_memory_bytes`'s
    # default, from max_message_bytes.
    max_parser_memory_bytes: int | None = None
    persist: bool = True
    state_dir: Path | None = None  # None = $XDG_STATE_HOME/postcompact
    state_path: Path | None = None  # the database file; overrides state_dir
    state_url: str | None = None  # sqlite: / postgresql://...; not with state_dir or state_path
    # Connections to a PostgreSQL state database, each its own thread (docs/fleet.md); SQLite
    # has one writer whatever this says.
    state_pool_size: int = 4
    shutdown_grace_s: float = 5.0
    server_implementation: str = "grpcio"  # SERVER_IMPLEMENTATIONS
    config_file: Path | None = None

    @property
    def policy(self) -> pb.RestorePolicy:
        return pb.RestorePolicy.FromString(self.policy_defaults)

    @property
    def parser_memory_bytes(self) -> int:
        """The address space a transcript parser process may map (docs/reliability.md,
        "Transcripts"): `max_parser_memory_bytes`, else `PARSER_MEMORY_BASE` plus
        `PARSER_MEMORY_PER_BYTE` times the largest transcript a request can carry."""
        if self.max_parser_memory_bytes is not None:
            return self.max_parser_memory_bytes
        return PARSER_MEMORY_BASE + PARSER_MEMORY_PER_BYTE * self.max_message_bytes


def default_config_path(env: Mapping[str, str]) -> Path:
    base = env.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "postcompact" / "config.toml"


def _int(name: str, value: Any, minimum: int = 0, maximum: int = INT64_MAX) -> int:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ConfigError(f"{name}: expected an integer, got {value!r}")
    try:
        n = int(value)
    except ValueError:
        raise ConfigError(f"{name}: expected an integer, got {value!r}") from None
    if n < minimum:
        raise ConfigError(f"{name}: must be >= {minimum}, got {n}")
    if n > maximum:
        raise ConfigError(f"{name}: must be <= {maximum}, got {n}")
    return n


def _choice(name: str, value: Any, choices: Mapping[str, Any]) -> Any:
    if not isinstance(value, str) or value not in choices:
        raise ConfigError(f"{name}: must be one of {', '.join(choices)}, got {value!r}")
    return choices[value]


MAX_STATE_POOL = 64  # connections of one daemon to its state database

_INT_LIMITS = (
    "max_sessions",
    "max_agents_per_session",
    "cache_max_entries",
    "cache_max_bytes",
    "max_skills_per_agent",
    "max_tasks_per_session",
    "max_tasks_per_agent",
    "max_catalog_entries",
    "max_catalog_bytes",
    "max_roots",
    "max_content_bytes",
    "max_calls_in_flight",
    "max_hooks_running",
    "max_tcp_connections",
    "max_answer_bytes_in_flight",
    "max_state_bytes",
    "max_transcript_records",
    "max_transcript_events",
    "max_transcript_boundaries",
    "max_parser_memory_bytes",
)


# The core's LRU indexes its entries with u32 (and keeps one slot free).
_LIMIT_MAX = {"cache_max_entries": 2**32 - 2}
_LIMIT_MIN = {"max_parser_memory_bytes": MIN_PARSER_MEMORY_BYTES}

# What [limits] may hold (they are applied like top-level settings).
LIMIT_KEYS = frozenset((*_INT_LIMITS, "session_ttl_s", "sweep_interval_s"))


def _seconds(name: str, value: Any, *, allow_zero: bool = False) -> float:
    if isinstance(value, bool):
        raise ConfigError(f"{name}: expected a number of seconds, got {value!r}")
    try:
        n = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{name}: expected a number of seconds, got {value!r}") from None
    if not n >= 0 or n == float("inf") or (n == 0 and not allow_zero):
        raise ConfigError(f"{name}: must be {'>= 0' if allow_zero else '> 0'}, got {value!r}")
    return n


def _bool(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("1", "true", "yes", "on"):
        return True
    if isinstance(value, str) and value.lower() in ("0", "false", "no", "off"):
        return False
    raise ConfigError(f"{name}: expected true or false, got {value!r}")


def _templates_from_table(table: Any) -> pb.TemplateSpec:
    """[templates]: `preset` ("neutral") and any template by name (docs/profiles.md, "Wording"),
    each checked as it would be used."""
    if not isinstance(table, dict):
        raise ConfigError("[templates] must be a table")
    spec = pb.TemplateSpec()
    for key, value in table.items():
        if not isinstance(value, str):
            raise ConfigError(f"templates.{key}: expected a string, got {value!r}")
        if key == "preset":
            spec.preset = value
        else:
            spec.strings[key] = value
    try:
        profiles.templates_for(pb.PROFILE_DEFAULT, spec.SerializeToString())
    except TemplateError as exc:
        raise ConfigError(f"[templates]: {exc}") from None
    return spec


def _policy_from_table(table: Mapping[str, Any]) -> pb.RestorePolicy:
    p = pb.RestorePolicy()
    for key, given in table.items():
        f = POLICY_KEYS.get(key)
        if f is None:
            raise ConfigError(f"unknown key policy.{key}")
        name, value = f"policy.{key}", given
        if f.kind == "int":
            value = _int(name, given, 0, INT32_MAX if f.int32 else INT64_MAX)
        elif f.kind == "enum":  # by its config spelling: "truncate_head", "claude_code"
            value = _choice(name, given, f.choices)
        elif f.kind == "str" and not isinstance(given, str):
            raise ConfigError(f"{name}: expected a string")
        elif f.kind == "bool" and not isinstance(given, bool):
            raise ConfigError(f"{name}: expected true or false")
        setattr(p, f.name, value)
    return p


def _hooks(value: Any) -> tuple[HookConfig, ...]:
    if not isinstance(value, dict):
        raise ConfigError("hooks: expected a table with a `session_start` array")
    unknown = set(value) - {"session_start"}
    if unknown:
        raise ConfigError(f"unknown hooks kind(s): {sorted(unknown)}")
    out = []
    hooks = value.get("session_start", [])
    if not isinstance(hooks, list):
        raise ConfigError("hooks.session_start: expected an array of tables")
    for i, item in enumerate(hooks):
        if not isinstance(item, dict) or not isinstance(item.get("command"), str):
            raise ConfigError(f"hooks.session_start[{i}]: needs a `command` string")
        unknown_keys = sorted(set(item) - {"command", "timeout_s"})
        if unknown_keys:
            raise ConfigError(
                f"hooks.session_start[{i}]: unknown key(s) {unknown_keys} (command, timeout_s)"
            )
        timeout = item.get("timeout_s", 10.0)
        if (
            isinstance(timeout, bool)
            or not isinstance(timeout, int | float)
            or not math.isfinite(timeout)
            or timeout <= 0
        ):
            raise ConfigError(f"hooks.session_start[{i}].timeout_s: a positive number of seconds")
        out.append(HookConfig(item["command"], float(timeout)))
    return tuple(out)


def _apply(cfg: Config, values: Mapping[str, Any], source: str) -> Config:
    """Apply flat settings (file top level, env or flags) on top of cfg."""
    changes: dict[str, Any] = {}
    for key, value in values.items():
        if value is None:
            continue
        if key == "socket":
            if not str(value):
                raise ConfigError(f"{source}: socket must not be empty")
            s = str(value)
            for prefix in ("unix://", "unix:"):
                if s.startswith(prefix):
                    s = s[len(prefix) :]
                    break
            changes["socket"] = Path(os.path.abspath(os.path.expanduser(s)))
        elif key == "tcp_port":
            if value is False or (isinstance(value, str) and value.lower() in ("", "off", "none")):
                changes["tcp_port"] = None
            else:
                port = _int(f"{source} tcp_port", value)
                if port > 65535:
                    raise ConfigError(f"{source}: tcp_port out of range: {port}")
                changes["tcp_port"] = port
        elif key == "tcp_host":
            try:
                changes["tcp_host"] = loopback_host(str(value))
            except LifecycleError as exc:
                raise ConfigError(f"{source}: {exc}") from None
        elif key == "max_message_bytes":  # gRPC takes a C int
            # At least 64 KiB: room for one session's paths (each up to 4 KiB) in any answer.
            changes["max_message_bytes"] = _int(
                f"{source} max_message_bytes", value, 64 * 1024, INT32_MAX
            )
        elif key == "log_level":
            level = str(value).lower()
            if level not in LOG_LEVELS:
                raise ConfigError(f"{source}: log_level must be one of {', '.join(LOG_LEVELS)}")
            changes["log_level"] = level
        elif key == "log_file":
            changes["log_file"] = Path(os.path.expanduser(str(value))) if value else None
        elif key == "log_max_bytes":
            changes[key] = _int(f"{source} {key}", value, 64 * 1024, INT64_MAX)
        elif key == "log_backups":
            changes[key] = _int(f"{source} {key}", value, 1, 100)
        elif key == "profile":
            changes["profile"] = _choice(f"{source} profile", value, PROFILES)
        elif key == "server_implementation":
            changes[key] = _choice(f"{source} {key}", value, SERVER_IMPLEMENTATIONS)
        elif key == "deny_globs":
            globs = [g for g in value.split(",") if g.strip()] if isinstance(value, str) else value
            if not isinstance(globs, list) or not all(isinstance(g, str) for g in globs):
                raise ConfigError(f"{source}: deny_globs must be a list of strings")
            changes["deny_globs"] = tuple(g.strip() for g in globs)
        elif key in _INT_LIMITS:
            changes[key] = _int(
                f"{source} {key}", value, _LIMIT_MIN.get(key, 1), _LIMIT_MAX.get(key, INT64_MAX)
            )
        elif key in ("shutdown_grace_s", "session_ttl_s", "sweep_interval_s"):
            changes[key] = _seconds(f"{source} {key}", value, allow_zero=key == "session_ttl_s")
        elif key == "persist":
            changes[key] = _bool(f"{source} persist", value)
        elif key == "state_url":
            if not isinstance(value, str):
                raise ConfigError(f"{source}: state_url must be a string")
            parse_state_url(value, f"{source} state_url")  # checked now, used by the daemon
            changes[key] = value
        elif key == "state_pool_size":
            changes[key] = _int(f"{source} {key}", value, 1, MAX_STATE_POOL)
        elif key in ("state_dir", "state_path"):
            if not isinstance(value, str | Path) or not str(value):
                raise ConfigError(f"{source}: {key} must be a non-empty path")
            changes[key] = Path(os.path.abspath(os.path.expanduser(str(value))))
        else:
            raise ConfigError(f"{source}: unknown setting {key!r}")
    return replace(cfg, **changes)


ENV_KEYS = {
    "POSTCOMPACT_SOCKET": "socket",
    "POSTCOMPACT_TCP_PORT": "tcp_port",
    "POSTCOMPACT_TCP_HOST": "tcp_host",
    "POSTCOMPACT_MAX_MESSAGE_BYTES": "max_message_bytes",
    "POSTCOMPACT_LOG_LEVEL": "log_level",
    "POSTCOMPACT_LOG_FILE": "log_file",
    "POSTCOMPACT_PROFILE": "profile",
    "POSTCOMPACT_DENY_GLOBS": "deny_globs",
    "POSTCOMPACT_PERSIST": "persist",
    "POSTCOMPACT_STATE_DIR": "state_dir",
    "POSTCOMPACT_STATE_PATH": "state_path",
    "POSTCOMPACT_STATE_URL": "state_url",
    "POSTCOMPACT_STATE_POOL_SIZE": "state_pool_size",
    "POSTCOMPACT_SERVER_IMPLEMENTATION": "server_implementation",
}


def load_config(
    flags: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
    config_file: Path | None = None,
) -> Config:
    env = os.environ if env is None else env
    flags = dict(flags or {})
    explicit = config_file or (
        Path(env["POSTCOMPACT_CONFIG"]) if env.get("POSTCOMPACT_CONFIG") else None
    )
    path = explicit or default_config_path(env)
    cfg = Config()
    if path.exists() or explicit is not None:
        try:
            data = tomllib.loads(path.read_text())
        except FileNotFoundError:
            raise ConfigError(f"config file not found: {path}") from None
        except (OSError, ValueError) as exc:  # TOMLDecodeError and UnicodeDecodeError too
            raise ConfigError(f"cannot read config file {path}: {exc}") from None
        top = dict(data)
        policy = top.pop("policy", {})
        templates = top.pop("templates", {})
        hooks = top.pop("hooks", {})
        limits = top.pop("limits", {})
        if not isinstance(policy, dict) or not isinstance(limits, dict):
            raise ConfigError(f"{path}: [policy] and [limits] must be tables")
        misplaced = sorted(k for k in limits if k not in LIMIT_KEYS)
        if misplaced:
            raise ConfigError(f"{path}: not limits, do not belong under [limits]: {misplaced}")
        cfg = _apply(cfg, {**top, **limits}, str(path))
        try:
            defaults = _policy_from_table(policy)
            validate_policy(defaults)
            wording = _templates_from_table(templates)
            hook_specs = _hooks(hooks)
        except ConfigError as exc:
            raise ConfigError(f"{path}: {exc}") from None
        except PostcompactError as exc:
            raise ConfigError(f"{path}: {exc.message}") from None
        cfg = replace(
            cfg,
            policy_defaults=defaults.SerializeToString(),
            templates_spec=wording.SerializeToString(),
            hooks=hook_specs,
            config_file=path,
        )
    cfg = _apply(cfg, {k: env[e] for e, k in ENV_KEYS.items() if env.get(e)}, "environment")
    cfg = _apply(cfg, flags, "flags")
    if cfg.state_url is not None and (cfg.state_dir is not None or cfg.state_path is not None):
        alias = "state_path" if cfg.state_path is not None else "state_dir"
        raise ConfigError(
            f"both state_url ({redact_url(cfg.state_url)}) and {alias} are set; state_url "
            f'supersedes {alias}: give one (a file is state_url = "sqlite:///path/state.db")'
        )
    return cfg


# --- where the state lives ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StateUrl:
    """A parsed `state_url`: `kind` "sqlite" with its file (`path`, or `dir`'s state.db for
    the state_dir alias; neither: the default place, persist.state_db_path) or "postgresql"
    with the libpq URL (`url`)."""

    kind: str
    path: Path | None = None
    url: str = ""
    dir: Path | None = None

    def __str__(self) -> str:
        if self.kind == "postgresql":
            return redact_url(self.url)
        return f"sqlite://{self.path}" if self.path is not None else "sqlite:"


POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def parse_state_url(value: str, what: str = "state_url") -> StateUrl:
    """`sqlite:` (the default place), `sqlite:///abs/path.db`, or a libpq URL
    `postgresql://...` (its keywords are checked by the driver when the daemon connects)."""
    if value.startswith("sqlite:"):
        rest = value[len("sqlite:") :]
        if rest in ("", "//"):
            return StateUrl("sqlite")
        path = rest[2:] if rest.startswith("//") else rest
        if "?" in path or "#" in path or not path.startswith("/") or path.endswith("/"):
            raise ConfigError(
                f"{what}: a sqlite URL is `sqlite:` (the default place) or `sqlite:///` and the "
                f"database file's absolute path, got {value!r}"
            )
        return StateUrl("sqlite", Path(os.path.abspath(path)))
    if value.startswith(POSTGRES_SCHEMES):
        return StateUrl("postgresql", url=value)
    raise ConfigError(
        f"{what}: expected `sqlite:`, `sqlite:///path/state.db` or `postgresql://...`, "
        f"got {redact_url(value)!r}"
    )


def redact_url(url: str) -> str:
    """`url` with any password replaced by `***` (what logs and errors may show)."""
    url = re.sub(r"(://[^/@:?#]*:)[^/@?#]*@", r"\1***@", url)
    return re.sub(r"([?&]password=)[^&#]*", r"\1***", url)


def state_location(cfg: Config) -> StateUrl:
    """Where `cfg` keeps its state: state_url, else its aliases state_path and state_dir."""
    if cfg.state_url is not None:
        return parse_state_url(cfg.state_url)
    if cfg.state_path is not None:
        return StateUrl("sqlite", cfg.state_path)
    return StateUrl("sqlite", dir=cfg.state_dir)


def socket_only(
    flag: str | Path | None,
    env: Mapping[str, str] | None = None,
    config_file: Path | None = None,
) -> Config:
    """The defaults with only the socket resolved (flag, POSTCOMPACT_SOCKET, the file's
    `socket`, default): what `stop` and `status` need to reach a running daemon when the rest of
    the configuration has an error (it may have been edited after the daemon started)."""
    env = os.environ if env is None else env
    path = config_file or (
        Path(env["POSTCOMPACT_CONFIG"]) if env.get("POSTCOMPACT_CONFIG") else None
    )
    path = path or default_config_path(env)
    from_file: Any = None
    with contextlib.suppress(OSError, ValueError):  # unreadable or malformed: not from there
        from_file = tomllib.loads(path.read_text()).get("socket")
    for value in (flag, env.get("POSTCOMPACT_SOCKET"), from_file):
        if isinstance(value, str | Path) and str(value):
            return _apply(Config(), {"socket": value}, "socket")
    return Config()
