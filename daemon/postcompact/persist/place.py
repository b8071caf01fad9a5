"""Where the state database lives, and the error every part of persist raises for one it
cannot use."""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
from collections.abc import Mapping
from pathlib import Path

from postcompact.lifecycle import (
    LifecycleError,
    default_socket_path,
    ensure_private_dir,
)

log = logging.getLogger("postcompact.persist")


STATE_DB_NAME = "state.db"


class StateError(LifecycleError):
    """The state database cannot be used: corrupt, too new, locked or unreadable."""


# --- where the database lives ------------------------------------------------------------------


def default_state_dir(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    base = env.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "postcompact"


def state_db_path(
    *,
    socket: Path,
    state_dir: Path | None = None,
    state_path: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> Path:
    """The database file of the daemon serving on `socket`.

    `state_path` wins; then `state_dir/state.db`. With neither, the daemon on the default socket
    uses `$XDG_STATE_HOME/postcompact/state.db` and a daemon on any other socket
    `state-<12 hex digits of the socket path's SHA-256>.db` there, so that two daemons on
    different sockets never share (or fight over) one state.
    """
    if state_path is not None:
        return state_path
    if state_dir is not None:
        return state_dir / STATE_DB_NAME
    d = default_state_dir(env)
    env_dict = dict(os.environ if env is None else env)
    if os.path.abspath(socket) == os.path.abspath(default_socket_path(env_dict)):
        return d / STATE_DB_NAME
    digest = hashlib.sha256(os.fsencode(os.path.abspath(socket))).hexdigest()[:12]
    return d / f"state-{digest}.db"


# Allocated beside the database and given up when the disk is full, so that a session can still
# be deleted (a delete appends to the write-ahead log before it frees anything).
RESERVE_BYTES = 4 * 1024 * 1024


def check_state_place(db: Path) -> None:
    """StateError unless the database's directory is the user's own and private (0700), and
    the database, if it exists, is the user's: as the runtime directory is checked."""
    try:
        ensure_private_dir(db.parent, "state directory")
    except LifecycleError as exc:
        raise StateError(str(exc)) from None
    with contextlib.suppress(FileNotFoundError):
        owner = os.lstat(db).st_uid
        if owner != os.getuid():
            raise StateError(
                f"the state database {db} is owned by uid {owner}, not by you "
                f"(uid {os.getuid()}); refusing to use it"
            )


def lock_path(db: Path) -> Path:
    return db.with_name(db.name + ".lock")


def side_files(db: Path) -> list[Path]:
    """The database and its WAL and shared-memory files."""
    return [db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")]
