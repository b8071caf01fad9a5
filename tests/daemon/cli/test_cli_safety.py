"""The CLI and the daemon's start-up never damage what is not theirs, and say clearly what is
wrong: `state reset` only moves a database, `serve` only replaces its own socket and files,
`stop` only signals the daemon, bad configuration is one line (exit 2), `start` shows why the
daemon could not start, and session-start hooks cannot exhaust the daemon's memory or fds."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import stat
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from postcompact_client import Client

from tests.daemon.cli.test_cli import cli
from tests.daemon.conftest import daemon_env, start_daemon, write_project


def _one_line_error(r: subprocess.CompletedProcess[str], code: int, *needles: str) -> None:
    assert r.returncode == code, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr, r.stderr
    assert r.stderr.startswith("postcompact: "), r.stderr
    for n in needles:
        assert n in r.stderr, r.stderr


# --- state reset -------------------------------------------------------------------------------


def test_state_reset_moves_only_a_database(base: Path) -> None:
    env = daemon_env(base)
    folder = base / "project"
    (folder / "src").mkdir(parents=True)
    (folder / "src" / "main.c").write_text("int main;\n")
    notes = base / "notes.txt"
    notes.write_text("not a database\n")
    for target, needle in ((folder, "not a regular file"), (notes, "not an SQLite database")):
        r = cli(["state", "reset", "--yes", "--state-path", str(target)], env)
        _one_line_error(r, 1, needle)
        check = cli(["state", "check", "--state-path", str(target)], env)
        _one_line_error(check, 1, needle)
    assert (folder / "src" / "main.c").read_text() == "int main;\n"
    assert notes.read_text() == "not a database\n"
    assert not [p.name for p in base.iterdir() if ".bak-" in p.name]


# --- serve, stop ---------------------------------------------------------------------------------


def test_serve_refuses_a_socket_path_that_is_not_a_socket(base: Path) -> None:
    env = daemon_env(base)
    private = base / "priv"
    private.mkdir(mode=0o700)
    (private / "notes.txt").write_text("mine\n")
    (private / "token").write_text("also mine\n")
    r = cli(["serve", "--no-persist", "--socket", str(private / "notes.txt")], env, timeout=60)
    _one_line_error(r, 1, "is not a socket")
    assert (private / "notes.txt").read_text() == "mine\n"
    assert (private / "token").read_text() == "also mine\n"


def test_a_daemon_leaves_files_it_did_not_write(base: Path) -> None:
    run = base / "d"
    run.mkdir(mode=0o700)
    (run / "token").write_text("a file of the user's\n")
    d = start_daemon(["--no-persist"], runtime_dir=run)
    assert d.stop() == 0
    assert (run / "token").read_text() == "a file of the user's\n"
    assert not (run / "d.sock").exists()
    assert not (run / "server.json").exists()


def test_stop_never_signals_a_stale_pid(base: Path) -> None:
    """After a kill -9 the daemon's server.json stays; if its pid is reused by another process,
    `stop` must not signal that process."""
    d = start_daemon(runtime_dir=_dir(base))
    d.stop(signal.SIGKILL)
    victim = subprocess.Popen(["sleep", "60"])
    try:
        info = d.server_json.read_text().replace(str(d.proc.pid), str(victim.pid))
        d.server_json.write_text(info)
        r = cli(["stop", "--socket", str(d.socket_path)], d.env)
        assert r.returncode == 3, (r.stdout, r.stderr)
        assert victim.poll() is None, "stop signalled an unrelated process"
    finally:
        victim.kill()
        victim.wait()


def _dir(base: Path) -> Path:
    d = base / "d"
    d.mkdir(mode=0o700, exist_ok=True)
    return d


# --- configuration -------------------------------------------------------------------------------

BAD_CONFIGS = [
    ('profile = ["x"]\n', "profile"),
    ('[policy]\noversize = ["x"]\n', "policy.oversize"),
    ("[policy]\ncounter = {a = 1}\n", "policy.counter"),
    ("[policy]\nmax_files = 3000000000\n", "policy.max_files"),
    ("max_message_bytes = 99999999999\n", "max_message_bytes"),
    ("[limits]\ncache_max_entries = 99999999999\n", "cache_max_entries"),
    ("[limits]\ncache_max_bytes = 99999999999999999999\n", "cache_max_bytes"),
    ("[limits]\nsocket = '/tmp/x.sock'\n", "[limits]"),
    ('[[hooks.session_start]]\ncommand = "true"\ntimeout_s = nan\n', "timeout_s"),
    ('[[hooks.session_start]]\ncommand = "true"\ntimeout_s = inf\n', "timeout_s"),
    ('[[hooks.session_start]]\ncommand = "true"\ntimout_s = 3\n', "timout_s"),
    ('[templates]\nread_call = "{filename}"\n', "allowed placeholders"),
    ('[templates]\npreset = "shakespeare"\n', "unknown template preset"),
    ('[templates]\nno_such_template = "x"\n', "unknown template"),
    ("[templates]\nread_call = 3\n", "templates.read_call"),
]


@pytest.mark.parametrize(("toml", "key"), BAD_CONFIGS, ids=[k for _, k in BAD_CONFIGS])
def test_bad_configuration_is_one_clear_line(base: Path, toml: str, key: str) -> None:
    env = daemon_env(base)
    cfg = base / "config" / "postcompact" / "config.toml"
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text(toml)
    r = cli(["serve", "--socket", str(_dir(base) / "d.sock")], env, timeout=60)
    _one_line_error(r, 2, "configuration error", key, str(cfg))


def test_a_config_file_that_is_not_utf8(base: Path) -> None:
    env = daemon_env(base)
    cfg = base / "config" / "postcompact" / "config.toml"
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_bytes(b"\xff\xfe profile = 'default'\n")
    r = cli(["serve", "--socket", str(_dir(base) / "d.sock")], env, timeout=60)
    _one_line_error(r, 2, "configuration error", str(cfg))


def test_status_and_stop_work_with_a_config_broken_after_start(base: Path) -> None:
    d = start_daemon(runtime_dir=_dir(base))
    cfg = d.dir / "config" / "postcompact" / "config.toml"
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text('log_levl = "debug"\n')
    status = cli(["status", "--socket", str(d.socket_path)], d.env)
    assert status.returncode == 0, status.stderr
    assert "warning: configuration error" in status.stderr
    stop = cli(["stop", "--socket", str(d.socket_path)], d.env)
    assert stop.returncode == 0, stop.stderr
    assert d.proc.wait(timeout=30) == 0


@pytest.mark.parametrize(
    "args",
    [
        ["--log-file", "/proc/nope/x.log"],
        ["--log-file", "/"],
        ["--state-dir", "/proc/nope"],
    ],
    ids=["log-file-unwritable", "log-file-directory", "state-dir-unwritable"],
)
def test_unusable_paths_are_one_line(base: Path, args: list[str]) -> None:
    env = daemon_env(base)
    r = cli(["serve", "--socket", str(_dir(base) / "d.sock"), *args], env, timeout=60)
    _one_line_error(r, 1)


def test_parent_directories_are_private_under_umask_000(base: Path) -> None:
    run = _dir(base)
    log = base / "logs" / "deeper" / "daemon.log"
    env = daemon_env(base, {"XDG_STATE_HOME": str(base / "state" / "nested")})
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "postcompact",
            "serve",
            "--socket",
            str(run / "d.sock"),
            "--log-file",
            str(log),
        ],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=lambda: os.umask(0),  # noqa: PLW1509 (a single-threaded test process)
    )
    client = Client(f"unix://{run / 'd.sock'}", auto_start=False)
    try:
        client.wait_for_health(30)
        for d in (
            base / "logs",
            base / "logs" / "deeper",
            base / "state",
            base / "state" / "nested",
        ):
            assert d.stat().st_mode & 0o777 == 0o700, d
    finally:
        client.close()
        proc.terminate()
        proc.wait(timeout=30)


# --- start ---------------------------------------------------------------------------------------


def test_start_says_why_the_daemon_could_not_start(base: Path) -> None:
    env = daemon_env(base)
    run = base / "run"
    run.mkdir(mode=0o755)
    os.chmod(run, 0o755)
    r = cli(["start", "--socket", str(run / "d.sock")], env, timeout=60)
    assert r.returncode == 1
    assert "must be private" in r.stderr, r.stderr


def _log_records(log: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]


def _detached_log(base: Path, sock: Path) -> Path:
    """Where `serve --detached` on `sock` logs: beside its state database (daemon_env's
    XDG_STATE_HOME), named by the socket as the database is."""
    digest = hashlib.sha256(os.fsencode(str(sock))).hexdigest()[:12]
    return base / "state" / "postcompact" / f"daemon-{digest}.log"


def test_a_detached_daemon_that_cannot_start_says_why_on_stderr_and_in_its_log(
    base: Path,
) -> None:
    cfg = base / "config" / "postcompact" / "config.toml"
    cfg.parent.mkdir(parents=True)
    cfg.write_text("[policy]\nfoo = 1\n")
    sock = _dir(base) / "d.sock"
    r = cli(["serve", "--detached", "--socket", str(sock)], daemon_env(base), timeout=60)
    _one_line_error(r, 2, "unknown key policy.foo")
    records = _log_records(_detached_log(base, sock))
    assert [rec["level"] for rec in records] == ["error"], records
    assert records[0]["msg"] == r.stderr.strip(), records


def test_a_detached_daemon_logs_to_its_state_directory_and_gives_it_stderr_once_serving(
    base: Path,
) -> None:
    sock = _dir(base) / "d.sock"
    errors = base / "stderr"
    with open(errors, "wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "postcompact", "serve", "--detached", "--socket", str(sock)],
            env=daemon_env(base),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    client = Client(f"unix://{sock}", auto_start=False)
    try:
        client.wait_for_health(30)
        log = _detached_log(base, sock)
        assert "serving" in [rec["msg"] for rec in _log_records(log)]
        assert errors.read_text() == ""  # the log went to the file, not to stderr
        # stderr is the log file now (a crash's traceback, gRPC's own lines go there), no longer
        # what the starter gave it.
        assert os.readlink(f"/proc/{proc.pid}/fd/2") == str(log)
        assert stat.S_IMODE(log.stat().st_mode) == 0o600
    finally:
        client.close()
        proc.terminate()
        proc.wait(timeout=30)
    # A second daemon on the same socket: exit 4, another one is running (a racing starter waits
    # for it); said on stderr and in the log.
    d = start_daemon(["--detached"], runtime_dir=_dir(base))
    try:
        r = cli(["serve", "--detached", "--socket", str(d.socket_path)], d.env, timeout=60)
        _one_line_error(r, 4, "already running")
        second = _log_records(_detached_log(d.dir, sock))  # its XDG_STATE_HOME is under d.dir
        assert r.stderr.strip() in [rec["msg"] for rec in second]
    finally:
        d.stop()


def test_start_logs_to_the_state_directory(base: Path) -> None:
    env = daemon_env(base)
    sock = _dir(base) / "d.sock"
    r = cli(["start", "--socket", str(sock)], env, timeout=60)
    try:
        assert r.returncode == 0, r.stderr
        assert "serving" in [rec["msg"] for rec in _log_records(_detached_log(base, sock))]
    finally:
        cli(["stop", "--socket", str(sock)], env)


def test_concurrent_starts_all_succeed(base: Path) -> None:
    env = daemon_env(base)
    sock = _dir(base) / "d.sock"
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: cli(["start", "--socket", str(sock)], env), range(4)))
    try:
        assert [r.returncode for r in results] == [0] * 4, [r.stderr for r in results]
        pids = {r.stdout.split("pid ")[1].split(")")[0] for r in results}
        assert len(pids) == 1, results
    finally:
        cli(["stop", "--socket", str(sock)], env)


# --- session-start hooks -------------------------------------------------------------------------


def _vm(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise AssertionError(key)


def test_hook_output_is_bounded_in_memory(base: Path) -> None:
    """A hook writing 400 MB: the daemon keeps 1 MiB of it, not the whole output."""
    project = write_project(base / "proj")
    hook = (
        "[[hooks.session_start]]\n"
        "command = \"head -c 400000000 /dev/zero | tr '\\\\0' a\"\ntimeout_s = 60\n"
    )
    d = start_daemon(["--no-persist"], runtime_dir=_dir(base), config_toml=hook)
    try:
        before = _vm(d.proc.pid, "VmHWM")
        s = d.client.open_session(str(project))
        resp = s.compact()
        hooks = [x for x in resp.decisions if x.name.startswith("head -c")]
        assert hooks[0].detail == f"{1 << 20} characters of context"
        grown_mb = (_vm(d.proc.pid, "VmHWM") - before) / 1024
        assert grown_mb < 100, f"the daemon's peak memory grew by {grown_mb:.0f} MB"
    finally:
        d.stop()


def test_a_timed_out_hook_with_a_detached_child_leaks_no_fds(base: Path) -> None:
    project = write_project(base / "proj")
    pids = base / "pids"
    hook = (
        "[[hooks.session_start]]\n"
        f'command = "setsid sleep 30 & echo $! >> {pids}; echo hi"\ntimeout_s = 0.3\n'
    )
    d = start_daemon(["--no-persist"], runtime_dir=_dir(base), config_toml=hook)
    try:
        s = d.client.open_session(str(project))
        counts = []
        for _ in range(5):
            s.compact()
            counts.append(len(os.listdir(f"/proc/{d.proc.pid}/fd")))
        assert len(set(counts)) == 1, counts
    finally:
        d.stop()
        for pid in pids.read_text().split() if pids.exists() else []:
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), signal.SIGKILL)


def test_the_documented_example_config_is_valid_and_complete(base: Path) -> None:
    """config.py's docstring shows every key (README): it loads as it stands, and each key
    `load_config` accepts appears in it."""
    import textwrap
    import tomllib

    from postcompact import config
    from postcompact.v1.postcompact_pb2 import RestorePolicy

    doc = config.__doc__ or ""
    example = textwrap.dedent(doc[doc.index("    socket =") :])
    path = base / "example.toml"
    path.write_text(example.replace("/run/user/1000/postcompact/daemon.sock", str(base / "d.sock")))
    loaded = config.load_config({}, env={}, config_file=path)
    assert loaded.hooks
    assert loaded.policy.max_files == 20
    shown = tomllib.loads(example)
    commented = {
        line.split("=")[0].strip("# ").strip() for line in example.splitlines() if "=" in line
    }
    # state_url's aliases are shown commented out: the example gives state_url, and both at once
    # are a configuration error.
    top = set(shown) - {"limits", "policy", "hooks"} | {"state_path", "state_dir"}
    assert "state_url" in shown
    assert set(config.ENV_KEYS.values()) <= top | set(shown["limits"])
    assert set(shown["limits"]) >= config.LIMIT_KEYS
    policy_keys = {f.name for f in RestorePolicy.DESCRIPTOR.fields}
    assert policy_keys <= set(shown["policy"]) | commented
