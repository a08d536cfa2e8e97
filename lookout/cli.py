"""The `lookout` command: `lookout serve` runs the daemon, `lookout token` prints the API token, `lookout attach`
puts your terminal on one of lookout's, `lookout ls` lists the terminals and `lookout kill` ends them (these
two work without a daemon, through the terminals' holders)."""

from __future__ import annotations

import argparse
import ipaddress
import socket
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from lookout.config import ENV_PREFIX, Settings
from lookout.core.auth_token import CONFIGURED, WeakToken, load_or_create_token, strong, token_path
from lookout.core.printable import printable
from lookout.core.private_files import check_data_dir

if TYPE_CHECKING:
    from lookout.daemon.lock import DaemonRunning


def is_loopback(host: str) -> bool:
    """Whether every address `host` resolves to is a loopback address."""
    try:
        infos = socket.getaddrinfo(host, None)
    except socket.gaierror:
        return False
    return all(ipaddress.ip_address(info[4][0]).is_loopback for info in infos)


def _settings(args: argparse.Namespace) -> Settings:
    """The settings of the environment and of these flags; a bad value ends the command (status 2), saying which."""
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
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        for error in exc.errors(include_url=False):
            name = str(error["loc"][0]) if error["loc"] else "settings"
            source = f"--{name.replace('_', '-')}" if name in overrides else f"{ENV_PREFIX}{name.upper()}"
            print(printable(f"lookout: bad {name} ({source}): {error['msg']}, got {error.get('input')!r}"),
                  file=sys.stderr)  # fmt: skip
        raise SystemExit(2) from None


def serve(args: argparse.Namespace) -> int:
    return _run(_settings(args))


def replay(args: argparse.Namespace) -> int:
    """Serve a replay archive read-only, from a private copy unpacked within bounds (lookout.replay)."""
    from lookout import replay as replaying

    return replaying.serve(args.file, args.port, args.token, args.max_bytes, _run)


def _byte_count(text: str) -> int:
    from lookout.replay import parse_bytes

    try:
        return parse_bytes(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _refused(settings: Settings) -> str | None:
    """Why a daemon of these settings would refuse to start, when it can be told before anything starts."""
    if settings.token:
        try:
            strong(settings.token, CONFIGURED)
        except WeakToken as weak:
            return str(weak)
    elif not is_loopback(settings.host):
        return f"refusing to listen on {settings.host} without a token; set LOOKOUT_TOKEN or pass --token"
    return None


def _lock_taken(data_dir: Path, running: DaemonRunning) -> str:
    """What holds the data dir's lock, told by what answers on daemon.sock: a lookout daemon (with how to restart
    or stop it), or another process, which is never offered a signal."""
    from lookout.daemon.control import answers_as_lookout
    from lookout.daemon.lock import process_name

    if running.pid is not None and answers_as_lookout(data_dir, running.pid, 1.0):
        return f"{running}; `lookout restart` restarts it, `kill -TERM {running.pid}` stops it"
    who = f"pid {running.pid} ({process_name(running.pid)})" if running.pid is not None else "another process"
    return (
        f"the lock {data_dir / 'daemon.lock'} is held by {who}, which is not a lookout daemon (nothing "
        f"answers for it on {data_dir / 'daemon.sock'}): end it, or use another data dir"
    )


def _run(settings: Settings) -> int:
    """Run the daemon of `settings` (see lookout.daemon.serve); its exit status."""
    from lookout.daemon.handover import Predecessor
    from lookout.daemon.listen import listener
    from lookout.daemon.lock import DaemonRunning, DataDirLock
    from lookout.daemon.serve import run

    if refused := _refused(settings):
        print(f"lookout: {refused}", file=sys.stderr)
        return 2
    predecessor = Predecessor.from_environment()
    lock = DataDirLock(settings.data_dir)
    try:
        if tightened := check_data_dir(settings.data_dir):
            print(f"lookout: {tightened}", file=sys.stderr)
        if predecessor is None:  # one started by `lookout restart` takes the lock from the daemon it replaces
            lock.acquire()
    except DaemonRunning as running:
        print(printable(f"lookout: {_lock_taken(settings.data_dir, running)}"), file=sys.stderr)
        return 1
    except OSError as exc:  # UnsafePath among them: says what to fix
        print(printable(f"lookout: refusing to start: {exc}"), file=sys.stderr)
        return 2
    (settings.data_dir / "daemon.pid").unlink(missing_ok=True)  # an earlier version's: the lock says it now
    try:
        served = listener(settings.host, settings.port)
    except (OSError, ValueError) as exc:  # a bad address or descriptor is a bad setting (2), one in use is not (3)
        print(printable(f"lookout: cannot listen on {settings.host}:{settings.port}: {exc}"), file=sys.stderr)
        lock.release()
        return 2 if isinstance(exc, socket.gaierror | ValueError) else 3
    if not settings.token and not served.loopback_only():
        print(f"lookout: refusing to serve the {served.origin} socket on {served.sock.getsockname()[0]} without a "
              "token: it is not loopback only; set LOOKOUT_TOKEN or pass --token", file=sys.stderr)  # fmt: skip
        served.sock.close()
        lock.release()
        return 2
    created = not settings.token and not token_path(settings.data_dir).exists()
    host, port = served.sock.getsockname()[:2]
    print(f"lookout: http://{host}:{port}  data: {settings.data_dir}  (socket: {served.origin})", file=sys.stderr)
    if created:
        print(f"lookout: new API token written to {token_path(settings.data_dir)} (mode 0600)", file=sys.stderr)
    if not served.loopback_only() and not settings.allowed_hosts:
        print("lookout: only loopback Host names are answered; list the names clients use in LOOKOUT_ALLOWED_HOSTS",
              file=sys.stderr)  # fmt: skip
    argv = [sys.executable, "-m", "lookout", *sys.argv[1:]]
    return run(settings, argv, served, lock, predecessor)


def supervise(args: argparse.Namespace) -> int:
    """Run `lookout serve` with these options, and again when it dies (lookout.daemon.supervisor)."""
    from lookout.daemon.supervisor import supervise as run_supervised

    settings = _settings(args)
    if refused := _refused(settings):  # a daemon that would refuse its settings is not started again and again
        print(f"lookout supervise: {refused}", file=sys.stderr)
        return 2
    given = sys.argv[sys.argv.index("supervise") + 1 :] if "supervise" in sys.argv else []
    serve_argv = ["serve", *(arg for arg in given if arg != "--standby")]
    return run_supervised(serve_argv, settings.data_dir, settings.host, settings.port, args.standby)


def restart(args: argparse.Namespace) -> int:
    """Hot restart of the daemon of the data dir (lookout.daemon.serve): returns once the new daemon serves."""
    from lookout.daemon.control import NoDaemon, request
    from lookout.daemon.serve import IMPORT_TIMEOUT_S, TAKEOVER_TIMEOUT_S

    data_dir = _settings(args).data_dir
    try:
        for answer in request(data_dir, {"op": "restart"}, IMPORT_TIMEOUT_S + TAKEOVER_TIMEOUT_S):
            if "error" in answer:
                print(printable(f"lookout restart: {answer['error']}"), file=sys.stderr)
                return 1
            if answer.get("step") == "starting":
                print(f"lookout: starting a new daemon (pid {answer.get('pid')}); the running one serves meanwhile")
            elif answer.get("step") == "serving":
                print(f"lookout: the new daemon (pid {answer.get('pid')}) serves; the old one ends once it has "
                      "answered what it had begun")  # fmt: skip
                return 0
    except NoDaemon as exc:
        print(printable(f"lookout restart: {exc}"), file=sys.stderr)
        return 1
    except OSError as exc:
        print(printable(f"lookout restart: lost the daemon's answer ({exc}); see its log"), file=sys.stderr)
        return 1
    print("lookout restart: the daemon did not say how the restart went; see its log", file=sys.stderr)
    return 1


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

    from lookout.clients.attach.client import AttachOptions
    from lookout.clients.attach.client import attach as attach_to
    from lookout.clients.attach.painter import parse_key
    from lookout.core.auth_token import read_token

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
    options = AttachOptions(url, str(token), args.id, read_only=args.read_only, resize=args.resize, detach_key=key,
                            take_over=args.take_over)  # fmt: skip
    code, why = asyncio.run(attach_to(options))
    print(printable(f"lookout attach: {why}"), file=sys.stderr)
    return code


def _leases(data_dir: Path) -> Callable[[str], str]:
    """What `ls` and `kill` say of a terminal's lease: "  [held by ... until ...]", or "" (the daemon's book as it
    last wrote it: read, never written)."""
    from lookout.core.leases import LeaseBook
    from lookout.terminal.frames import resource

    leases = LeaseBook(data_dir / "leases.json")
    leases.load()

    def held(terminal_id: str) -> str:
        lease = leases.current(resource(terminal_id))
        return f"  [{lease.line(time.time())}]" if lease is not None else ""

    return held


def ls(args: argparse.Namespace) -> int:
    from lookout.terminal.process.holders import terminals

    data_dir = _settings(args).data_dir
    listed = terminals(data_dir)
    rows = listed if args.exited else [t for t in listed if t.status != "exited"]
    lease_of = _leases(data_dir)
    for t in rows:
        created = time.strftime("%Y-%m-%d %H:%M", time.localtime(t.created_at))
        note = f"  ({t.note})" if t.note else ""
        held = lease_of(t.id)
        line = f"{t.id}: {t.name} [{t.cols}x{t.rows}] {t.status} pid {t.pid} since {created}: {t.command}{note}{held}"
        print(printable(line))
    if len(rows) < len(listed):
        print(f"({len(listed) - len(rows)} exited terminals not listed: `lookout ls --exited` lists them too)",
              file=sys.stderr)  # fmt: skip
    elif not rows:
        print("no terminals", file=sys.stderr)
    return 0


def prune(args: argparse.Namespace) -> int:
    """Remove the exited terminals the retention does not keep (lookout.terminal.journal.retention): through the daemon
    of the data dir, or, when none serves it, here under its lock."""
    from lookout.daemon.control import NoDaemon, request
    from lookout.daemon.lock import DaemonRunning, DataDirLock
    from lookout.terminal.journal.retention import Retention, prune_files

    settings = _settings(args)
    verb = "would prune" if args.dry_run else "pruned"
    try:
        answers = list(request(settings.data_dir, {"op": "prune", "dry_run": args.dry_run}, 600))
        if not answers or "error" in answers[0]:
            print(printable(f"lookout prune: {answers[0]['error'] if answers else 'the daemon did not answer'}"),
                  file=sys.stderr)  # fmt: skip
            return 1
        pruned = [(p["id"], p["bytes"], p["reason"]) for p in answers[0]["pruned"]]
    except NoDaemon:
        keep = Retention(settings.retain_exited_days * 86400, settings.retain_exited_count,
                         settings.retain_exited_mb << 20)  # fmt: skip
        lock = DataDirLock(settings.data_dir)
        try:
            lock.acquire()
        except DaemonRunning as exc:
            print(printable(f"lookout prune: {exc}"), file=sys.stderr)
            return 1
        try:
            chosen = prune_files(settings.data_dir / "terminals", keep, time.time(), args.dry_run)
        finally:
            lock.release()
        pruned = [(t.id, t.size, why) for t, why in chosen]
    for terminal_id, size, why in pruned:
        print(printable(f"{terminal_id}: {verb} ({why}; {size >> 10} KB)"))
    if not pruned:
        print("nothing to prune", file=sys.stderr)
    return 0


def kill(args: argparse.Namespace) -> int:
    from lookout.daemon.lock import lock_holder
    from lookout.terminal.process import holders

    data_dir = _settings(args).data_dir
    followed = lock_holder(data_dir) is not None  # a daemon serves the data dir: it records what holders tell it
    ids = [t.id for t in holders.terminals(data_dir) if t.status in holders.LIVE] if args.all else args.ids
    if not ids and not args.all:
        print("lookout kill: name terminal ids, or --all", file=sys.stderr)
        return 2

    lease_of = _leases(data_dir)  # an operator's kill goes through a lease; it says whose it was

    def ending(terminal_id: str) -> tuple[str, bool]:
        try:
            ended = f"{terminal_id}: {holders.kill(data_dir, terminal_id, followed=followed)}{lease_of(terminal_id)}"
            return ended, True
        except (OSError, holders.NotEnded) as exc:
            return f"{terminal_id}: not ended: {exc}", False

    failed = 0
    for line, ended in holders.in_parallel(ending, ids):  # each with the whole stop ladder, all at once
        print(printable(line), file=sys.stdout if ended else sys.stderr)
        failed += not ended
    return 1 if failed else 0


def _daemon_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, help="port (default 8765)")
    parser.add_argument("--data-dir", type=Path, help="where sessions and the token are stored")
    parser.add_argument("--token", help="API token (default: LOOKOUT_TOKEN, else generated into the data dir)")
    parser.add_argument("--allowed-hosts", help="comma-separated Host names answered besides loopback ones "
                         "(LOOKOUT_ALLOWED_HOSTS; needed to reach lookout by another name)")  # fmt: skip
    parser.add_argument("--screen-engine", choices=["avt", "pyte"], help="terminal emulator (default avt)")
    parser.add_argument("--adb-host", help="host of the adb server to use (default 127.0.0.1)")
    parser.add_argument("--adb-port", type=int, help="port of the adb server to use (default 5037)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="lookout", description=__doc__)
    sub = parser.add_subparsers(dest="cmd", required=True)
    p_serve = sub.add_parser("serve", help="run the daemon")
    p_supervise = sub.add_parser("supervise", help="run the daemon and start it again when it dies (a container's "
                                 "main process): the options of serve")  # fmt: skip
    for p_daemon in (p_serve, p_supervise):
        _daemon_options(p_daemon)
    p_supervise.add_argument("--standby", action="store_true",
                             help="keep a second daemon ready to take over at once when the daemon dies (the "
                             "memory of a second daemon)")  # fmt: skip
    p_supervise.set_defaults(func=supervise)
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
    p_attach.add_argument(
        "--take-over", action="store_true", help="type even while another hand holds the terminal's lease (recorded)"
    )
    p_attach.add_argument("--detach-key", default="C-\\", help="the key that leaves (default C-\\)")
    p_attach.set_defaults(func=attach)
    p_restart = sub.add_parser("restart", help="restart the running daemon in place (terminals stay)")
    p_restart.add_argument("--data-dir", type=Path)
    p_restart.set_defaults(func=restart)
    p_replay = sub.add_parser("replay", help="serve a run exported from GET /v1/timeline/export, read-only")
    p_replay.add_argument("file", type=Path)
    p_replay.add_argument("--port", type=int, default=8766, help="port on 127.0.0.1 (default 8766)")
    p_replay.add_argument("--token", help="its API token (default: a new one, printed)")
    p_replay.add_argument("--max-bytes", type=_byte_count, default="1G",
                          help="refuse an archive that unpacks to more (default 1G; the copy goes to TMPDIR)")  # fmt: skip
    p_replay.set_defaults(func=replay)
    p_ls = sub.add_parser("ls", help="list the terminals (and whether their programs run)")
    p_ls.add_argument("--data-dir", type=Path)
    p_ls.add_argument("--exited", action="store_true", help="list the exited terminals too")
    p_ls.set_defaults(func=ls)
    p_prune = sub.add_parser("prune", help="remove the exited terminals the retention does not keep "
                             "(LOOKOUT_RETAIN_EXITED_DAYS, _COUNT, _MB)")  # fmt: skip
    p_prune.add_argument("--dry-run", action="store_true", help="only say which")
    p_prune.add_argument("--data-dir", type=Path)
    p_prune.set_defaults(func=prune)
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
