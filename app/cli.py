"""The `lookout` command: `lookout serve` runs the daemon, `lookout token` prints the API token, `lookout attach`
puts your terminal on one of lookout's, `lookout ls` lists the terminals and `lookout kill` ends them (these
two work without a daemon, through the terminals' holders)."""

from __future__ import annotations

import argparse
import ipaddress
import logging
import os
import signal
import socket
import sys
import time
from pathlib import Path

from app.config import Settings
from app.core.auth_token import WeakToken, load_or_create_token, token_path
from app.core.private_files import check_data_dir, read_bytes
from app.core.storage import atomic_write_bytes

PID_FILE = "daemon.pid"
"""The running daemon's pid, in the data dir (for `lookout restart`)."""


def is_loopback(host: str) -> bool:
    """Whether every address `host` resolves to is a loopback address."""
    try:
        infos = socket.getaddrinfo(host, None)
    except socket.gaierror:
        return False
    return all(ipaddress.ip_address(info[4][0]).is_loopback for info in infos)


def _settings(args: argparse.Namespace) -> Settings:
    overrides = {
        k: v
        for k, v in {
            "host": getattr(args, "host", None),
            "port": getattr(args, "port", None),
            "data_dir": args.data_dir,
            "token": getattr(args, "token", None),
            "allowed_hosts": getattr(args, "allowed_hosts", None),
            "screen_engine": getattr(args, "screen_engine", None),
            "adb_host": getattr(args, "adb_host", None),
            "adb_port": getattr(args, "adb_port", None),
        }.items()
        if v is not None
    }
    return Settings(**overrides)


def serve(args: argparse.Namespace) -> int:
    return _run(_settings(args))


def replay(args: argparse.Namespace) -> int:
    """Serve a replay archive read-only, from a private temporary copy that is removed at exit."""
    import secrets
    import shutil
    import tempfile

    from app.core.archive import open_archive
    from app.core.errors import BadInput

    folder = Path(tempfile.mkdtemp(prefix="lookout-replay-"))
    try:
        try:
            open_archive(args.file, folder / "data")
        except BadInput as exc:
            print(f"lookout replay: refused: {exc}", file=sys.stderr)
            return 2
        token = args.token or secrets.token_urlsafe(24)
        settings = Settings(host="127.0.0.1", port=args.port, data_dir=folder / "data", token=token, read_only=True)
        print(f"lookout replay: {args.file}, read-only, at http://127.0.0.1:{args.port}/ (token: {token})",
              file=sys.stderr, flush=True)  # fmt: skip
        return _run(settings)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _run(settings: Settings) -> int:
    import uvicorn

    from app.api.header_timeout import header_deadline_protocol
    from app.core.log_redaction import redact_all_handlers
    from app.server import create_app

    if not is_loopback(settings.host) and not settings.token:
        print(
            f"lookout: refusing to listen on {settings.host} without a token; set LOOKOUT_TOKEN or pass --token",
            file=sys.stderr,
        )
        return 2
    created = not settings.token and not token_path(settings.data_dir).exists()
    try:
        app = create_app(settings)
    except OSError as exc:  # UnsafePath among them: says what to fix
        print(f"lookout: refusing to start: {exc}", file=sys.stderr)
        return 2
    print(f"lookout: http://{settings.host}:{settings.port}  data: {settings.data_dir}", file=sys.stderr)
    if created:
        print(f"lookout: new API token written to {token_path(settings.data_dir)} (mode 0600)", file=sys.stderr)
    if not is_loopback(settings.host) and not settings.allowed_hosts:
        print("lookout: only loopback Host names are answered; list the names clients use in LOOKOUT_ALLOWED_HOSTS",
              file=sys.stderr)  # fmt: skip
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    server = uvicorn.Server(uvicorn.Config(
        app, host=settings.host, port=settings.port, access_log=False, log_level="info",
        ws_per_message_deflate=settings.ws_compression, http=header_deadline_protocol(settings.header_timeout_s),
    ))  # fmt: skip
    redact_all_handlers([app.state.token])  # after uvicorn set up its log
    reexec = []

    def reexec_later(_sig: int, _frame: object) -> None:  # SIGHUP: end as on SIGTERM, then run again
        reexec.append(True)
        server.should_exit = True

    signal.signal(signal.SIGHUP, reexec_later)
    try:
        atomic_write_bytes(settings.data_dir / PID_FILE, f"{os.getpid()}\n".encode())
    except OSError as exc:
        print(f"lookout: cannot write {PID_FILE} ({exc}): `lookout restart` will not find this daemon", file=sys.stderr)
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    if reexec and server.started:
        print("lookout: SIGHUP: starting again (the terminals stay with their holders)", file=sys.stderr, flush=True)
        os.execv(sys.executable, [sys.executable, "-m", "app", *sys.argv[1:]])
    return 0 if server.started else 3  # as uvicorn.run: 3 when it never started (e.g. the port is taken)


def restart(args: argparse.Namespace) -> int:
    """Send the running daemon SIGHUP: it executes itself again and adopts every terminal."""
    path = _settings(args).data_dir / PID_FILE
    try:
        pid = int(read_bytes(path))
        running = b"serve" in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except (OSError, ValueError) as exc:
        print(f"lookout restart: no daemon found ({path}: {exc})", file=sys.stderr)
        return 1
    if not running:
        print(f"lookout restart: pid {pid} in {path} is not a lookout daemon (any more)", file=sys.stderr)
        return 1
    os.kill(pid, signal.SIGHUP)
    print(f"lookout: the daemon (pid {pid}) is starting again; its terminals stay")
    return 0


def token(args: argparse.Namespace) -> int:
    settings = _settings(args)
    try:
        if tightened := check_data_dir(settings.data_dir):
            print(f"lookout: {tightened}", file=sys.stderr)
        print(load_or_create_token(settings.data_dir, settings.token))
    except OSError as exc:  # UnsafePath among them: says what to fix
        print(f"lookout: {exc}", file=sys.stderr)
        return 2
    return 0


def attach(args: argparse.Namespace) -> int:
    import asyncio

    from app.core.auth_token import read_token
    from clients.attach.client import AttachOptions
    from clients.attach.client import attach as attach_to
    from clients.attach.painter import parse_key

    settings = _settings(args)
    host = "127.0.0.1" if settings.host in ("0.0.0.0", "::", "") else settings.host
    url = args.url or f"http://{host}:{settings.port}"
    token = args.token or settings.token
    if not token:
        try:
            token = read_token(token_path(settings.data_dir))
        except OSError as exc:
            print(f"lookout attach: no token (give --token or LOOKOUT_TOKEN): {exc}", file=sys.stderr)
            return 2
    try:
        key = parse_key(args.detach_key)
    except ValueError as exc:
        print(f"lookout attach: {exc}", file=sys.stderr)
        return 2
    options = AttachOptions(url, str(token), args.id, read_only=args.read_only, resize=args.resize, detach_key=key)
    code, why = asyncio.run(attach_to(options))
    print(f"lookout attach: {why}", file=sys.stderr)
    return code


def ls(args: argparse.Namespace) -> int:
    from app.terminal.holders import terminals

    rows = terminals(_settings(args).data_dir)
    for t in rows:
        created = time.strftime("%Y-%m-%d %H:%M", time.localtime(t.created_at))
        note = f"  ({t.note})" if t.note else ""
        print(f"{t.id}: {t.name} [{t.cols}x{t.rows}] {t.status} pid {t.pid} since {created}: {t.command}{note}")
    if not rows:
        print("no terminals", file=sys.stderr)
    return 0


def kill(args: argparse.Namespace) -> int:
    from app.terminal import holders

    data_dir = _settings(args).data_dir
    ids = [t.id for t in holders.terminals(data_dir) if t.status in holders.LIVE] if args.all else args.ids
    if not ids and not args.all:
        print("lookout kill: name terminal ids, or --all", file=sys.stderr)
        return 2
    failed = 0
    for terminal_id in ids:
        try:
            print(f"{terminal_id}: {holders.kill(data_dir, terminal_id)}")
        except (OSError, holders.NotEnded) as exc:
            print(f"{terminal_id}: not ended: {exc}", file=sys.stderr)
            failed += 1
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="lookout", description=__doc__)
    sub = parser.add_subparsers(dest="cmd", required=True)
    p_serve = sub.add_parser("serve", help="run the daemon")
    p_serve.add_argument("--host", help="address to listen on (default 127.0.0.1)")
    p_serve.add_argument("--port", type=int, help="port (default 8765)")
    p_serve.add_argument("--data-dir", type=Path, help="where sessions and the token are stored")
    p_serve.add_argument("--token", help="API token (default: LOOKOUT_TOKEN, else generated into the data dir)")
    p_serve.add_argument("--allowed-hosts", help="comma-separated Host names answered besides loopback ones "
                         "(LOOKOUT_ALLOWED_HOSTS; needed to reach lookout by another name)")  # fmt: skip
    p_serve.add_argument("--screen-engine", choices=["avt", "pyte"], help="terminal emulator (default avt)")
    p_serve.add_argument("--adb-host", help="host of the adb server to use (default 127.0.0.1)")
    p_serve.add_argument("--adb-port", type=int, help="port of the adb server to use (default 5037)")
    p_serve.set_defaults(func=serve)
    p_token = sub.add_parser("token", help="print the API token (creating it if needed)")
    p_token.add_argument("--data-dir", type=Path)
    p_token.set_defaults(func=token)
    p_attach = sub.add_parser("attach", help="put this terminal on one of lookout's (detach with C-\\)")
    p_attach.add_argument("id", metavar="ID")
    p_attach.add_argument("--url", help="the daemon (default: http://LOOKOUT_HOST:LOOKOUT_PORT)")
    p_attach.add_argument("--token", help="its API token (default: LOOKOUT_TOKEN, else the data dir's token file)")
    p_attach.add_argument("--data-dir", type=Path)
    p_attach.add_argument("--read-only", action="store_true", help="watch: keys are not sent")
    p_attach.add_argument("--resize", action="store_true",
                          help="take over: the terminal is resized to this window (and recorded as such)")  # fmt: skip
    p_attach.add_argument("--detach-key", default="C-\\", help="the key that leaves (default C-\\)")
    p_attach.set_defaults(func=attach)
    p_restart = sub.add_parser("restart", help="restart the running daemon in place (terminals stay)")
    p_restart.add_argument("--data-dir", type=Path)
    p_restart.set_defaults(func=restart)
    p_replay = sub.add_parser("replay", help="serve a run exported from GET /v1/timeline/export, read-only")
    p_replay.add_argument("file", type=Path)
    p_replay.add_argument("--port", type=int, default=8766, help="port on 127.0.0.1 (default 8766)")
    p_replay.add_argument("--token", help="its API token (default: a new one, printed)")
    p_replay.set_defaults(func=replay)
    p_ls = sub.add_parser("ls", help="list the terminals (and whether their programs run)")
    p_ls.add_argument("--data-dir", type=Path)
    p_ls.set_defaults(func=ls)
    p_kill = sub.add_parser("kill", help="end terminals (hangup, terminate, kill), with or without a daemon")
    p_kill.add_argument("ids", nargs="*", metavar="ID")
    p_kill.add_argument("--all", action="store_true", help="every running terminal")
    p_kill.add_argument("--data-dir", type=Path)
    p_kill.set_defaults(func=kill)
    args = parser.parse_args(argv)
    try:
        sys.exit(args.func(args))
    except WeakToken as weak:
        print(f"lookout: {weak}", file=sys.stderr)
        sys.exit(2)
