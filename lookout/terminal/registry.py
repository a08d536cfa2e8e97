"""All terminals of the daemon: create, find, list, stop; after a restart, adopt the terminals whose holders
still run and recover the others' files (how each comes to be: lookout.terminal.origins), those adopted listed at
once and each one's requests waiting for its own adoption (lookout.terminal.adoptions). Exited terminals are
held as small records until asked for (lookout.terminal.dormant)."""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import time
from functools import partial
from itertools import chain
from pathlib import Path
from typing import Any

from lookout.core import memory
from lookout.core.archive import ArchivePart
from lookout.core.errors import BadInput, Conflict, Gone, NotFound
from lookout.core.events import EventBus
from lookout.core.ids import check_id
from lookout.core.leases import LeaseBook
from lookout.core.private_files import make_dir
from lookout.core.tokens import load_soon
from lookout.terminal import commands, dormant, origins, read_ahead
from lookout.terminal.adoptions import Adoptions
from lookout.terminal.frames import resource
from lookout.terminal.holder.protocol import ProtocolError, socket_name
from lookout.terminal.journal import retention
from lookout.terminal.journal.persistence import TerminalMeta
from lookout.terminal.places import Places
from lookout.terminal.process import clean_stop
from lookout.terminal.process.holder_link import HolderLauncher
from lookout.terminal.process.holders import greet, remove_stale_socket
from lookout.terminal.process.shell_integration import supported as integration_supported
from lookout.terminal.screen.frame_screens import Recorded, exported, rebuild
from lookout.terminal.screen.model import RENDERS
from lookout.terminal.session import SessionLimits, TerminalSession
from lookout.terminal.spec import TerminalSpec
from lookout.timeline.recording import NullRecorder, Recorder, current_agent

log = logging.getLogger(__name__)

READOPT_TICK_S = 1.0
READOPT_FIRST_S = 2.0
READOPT_MOST_S = 60.0
READ_AT_ONCE = 25
"""Terminals whose files a start reads in one call in a worker (a call each made 100 running ones' records take
twice as long: the workers' hand-overs of the interpreter)."""
LISTING_GROUP = 20
"""Terminals described between two turns of the event loop in a listing."""


class TerminalRegistry:
    def __init__(
        self,
        root: Path,
        engine: str,
        limits: SessionLimits,
        max_sessions: int,
        bus: EventBus | None = None,
        recorder: Recorder | None = None,
        read_only: bool = False,
        keep: retention.Retention | None = None,
        leases: LeaseBook | None = None,
    ) -> None:
        """`read_only`: show the terminals of the data dir as recorded (a replay archive), adopting none; `keep`:
        which exited terminals' files are kept (lookout.terminal.journal.retention; None: all, and `prune` refuses);
        `leases`: the daemon's book of leases (lookout.core.leases), in memory only when not given."""
        self.root = root
        self.leases = leases or LeaseBook(None)
        self.read_only = read_only
        self.bus = bus or EventBus()
        self.recorder = recorder or NullRecorder()
        self.engine = engine
        self.limits = limits
        self.max_sessions = max_sessions
        self._sessions: dict[str, TerminalSession] = {}
        """The terminals whose sessions are built: every one but those let go (`_dormant`)."""
        self._dormant: dict[str, dormant.Dormant] = {}
        """Exited terminals let go (lookout.terminal.dormant): listed from their records, built when asked for."""
        self._recent = dormant.Recent()
        self._adopting = Adoptions(lambda listed: self._load(listed.directory, listed.meta), self._keep, self._lost)
        """Running terminals of the run before, listed, not yet adopted (lookout.terminal.adoptions)."""
        self._stopped: clean_stop.CleanStop | None = None
        self._ahead: dict[str, read_ahead.Ahead] = {}
        """Exited terminals' records read ahead of `start` (lookout.terminal.read_ahead)."""
        self._building: dict[str, asyncio.Future[TerminalSession]] = {}
        self._opening = 0
        """Opens admitted and not yet listed: counted against `max_sessions` from their first step on."""
        self.holders = root.parent / "holders"
        """Where the holders' sockets are (see lookout.terminal.holder.protocol)."""
        self.launcher = HolderLauncher()
        self.places = Places(root.parent, self.holders)
        self._readopting: asyncio.Task[None] | None = None
        self._released = False
        """Another daemon has taken the terminals over (`release`): none is adopted again here."""
        self.keep = None if read_only else keep
        self._pruning: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Load the terminals of earlier runs (exited or lost), and list those that still run, which are adopted
        from now on (`adopted` waits until they are)."""
        began = time.monotonic()
        make_dir(self.root)
        make_dir(self.holders)
        self._stopped = None if self.read_only else clean_stop.take(self.root.parent)
        ahead, directories = await asyncio.to_thread(read_ahead.records_at_start, self.root, self._ahead)
        self._ahead = {}
        self._dormant.update(ahead)
        batches = [directories[i : i + READ_AT_ONCE] for i in range(0, len(directories), READ_AT_ONCE)]
        for loaded in chain(*await asyncio.gather(*(self._load_or_record(batch, later=True) for batch in batches))):
            if isinstance(loaded, dormant.Dormant):
                self._dormant[loaded.meta.id] = loaded
            elif isinstance(loaded, origins.ToAdopt):
                self._adopting.add(loaded.record)
            else:
                self._keep(loaded)
        log.info("took up %d terminals in %.0f ms: %d to adopt, %d exited (records only, %d read ahead), %d other",
                 len(directories) + len(ahead), (time.monotonic() - began) * 1000, len(self._adopting), len(self._dormant),
                 len(ahead), len(self._sessions))  # fmt: skip
        if not self.read_only:
            self._readopting = asyncio.create_task(self._readopt_lost())
            if self.keep is not None:
                self._pruning = asyncio.create_task(self._prune_every(retention.PRUNE_EVERY_S))
            await self.places.start()
        self._adopting.begin()  # (after the places' sweep, which would wait for a worker behind the adoptions)

    async def read_ahead(self) -> None:
        """Read the exited terminals' records ahead of `start`, which uses those whose files have not changed
        since (lookout.terminal.read_ahead): a daemon that waits to take over calls it now and then."""
        self._ahead = await asyncio.to_thread(read_ahead.read_ahead, self.root, self._ahead)

    async def _load_or_record(
        self, directories: list[Path], record: bool = True, later: bool = False, meta: TerminalMeta | None = None
    ) -> list[TerminalSession | dormant.Dormant | origins.ToAdopt]:
        """The terminals of `directories`: an exited one as its record, read without building its session
        (`record`; lookout.terminal.dormant), a running one listed to be adopted (`later`), else its session:
        adopted, recovered, or (its files fail) listed `lost` with the reason. Their files are read in one call in
        a worker (origins.read_up; `meta`: the one directory's meta.json, when read already); an adopted one's
        holder is awaited on the loop."""
        assert meta is None or len(directories) == 1, "a meta.json read already is one directory's"
        reads = await asyncio.to_thread(lambda: [origins.read_up(
            directory, self.limits, self.holders, self.engine, self.bus, self.recorder, record=record,
            adopting=not self.read_only, later=later, meta=meta) for directory in directories])  # fmt: skip
        return list(await asyncio.gather(*(self._adopted(read) for read in reads)))

    async def _adopted(
        self, read: TerminalSession | dormant.Dormant | origins.ToAdopt | origins.Found
    ) -> TerminalSession | dormant.Dormant | origins.ToAdopt:
        if not isinstance(read, origins.Found):
            return read
        try:
            return await origins.adopted(read, self._stopped)
        except Exception as exc:  # noqa: BLE001 (one terminal's damaged files never stop the daemon)
            return origins.unusable_because(read.session.directory, read.session.meta, exc, self.limits, self.holders,
                                            engine=self.engine, bus=self.bus, recorder=self.recorder)  # fmt: skip

    async def _load(self, directory: Path, meta: TerminalMeta | None = None) -> TerminalSession:
        """The session of the terminal of `directory` (see `_load_or_record`), also when it has exited."""
        (session,) = await self._load_or_record([directory], record=False, meta=meta)
        assert isinstance(session, TerminalSession)
        return session

    def _lost(self, listed: dormant.Dormant, reason: str) -> TerminalSession:
        """A terminal whose adoption failed (lookout.terminal.adoptions): `lost` with the reason, tried again as
        any lost one whose holder may live (`_readopt_lost`)."""
        session = origins.unusable(listed.directory, listed.meta, reason, self.limits, self.holders,
                                   engine=self.engine, bus=self.bus, recorder=self.recorder)  # fmt: skip
        session.readopt = True
        return session

    async def adopted(self) -> None:
        """Until every terminal of the run before that was listed at start is adopted (or lost)."""
        await self._adopting.settled()

    async def _readopt_lost(self) -> None:
        """Adopt again, now and then, each `lost` terminal whose holder may live (its socket is there): one that
        answered late, or whose socket was away for a while, is followed again once it answers, after the
        same checks (socket owner, peer credentials, the program's pid). Each terminal is tried after
        READOPT_FIRST_S, then less and less often, up to every READOPT_MOST_S."""
        due: dict[str, tuple[float, float]] = {}
        while True:
            await asyncio.sleep(READOPT_TICK_S)
            for session in list(self._sessions.values()):
                if self._released or not (session.readopt and session.meta.status == "lost" and not session.ending):
                    due.pop(session.id, None)
                    continue
                at, delay = due.setdefault(session.id, (time.monotonic() + READOPT_FIRST_S, READOPT_FIRST_S))
                if time.monotonic() < at:
                    continue
                if await self._readopt(session):
                    due.pop(session.id, None)
                else:
                    due[session.id] = (time.monotonic() + delay, min(delay * 2, READOPT_MOST_S))

    async def _readopt(self, lost: TerminalSession) -> bool:
        """Adopt `lost` again if its holder answers now; whether it was."""
        await lost.screen_model.written()  # its end's files (meta.json among them) are written before it is read
        if not await asyncio.to_thread(os.path.lexists, self.holders / socket_name(lost.id)):
            return False
        try:
            await asyncio.to_thread(greet, self.holders, lost.meta)
        except (ConnectionRefusedError, FileNotFoundError):
            await asyncio.to_thread(remove_stale_socket, self.holders, lost.id)
            return False
        except (OSError, ProtocolError):
            return False
        try:
            session = await origins.adopt(
                lost.directory, self.limits, self.holders, bus=self.bus, recorder=self.recorder
            )
        except Exception as exc:  # noqa: BLE001 (as at start: this terminal stays lost, the daemon goes on)
            log.warning("terminal %s is not adopted again: %s", lost.id, exc)
            return False
        if not session.running:
            return False
        if lost.ending or self._released or self._sessions.get(lost.id) is not lost:  # ended, purged, or released
            await session.detach()
            return True
        self._keep(session)
        log.info("terminal %s is adopted again: its holder answers", lost.id)
        self.bus.publish("terminal.adopted", id=lost.id)
        return True

    async def _prune_every(self, period_s: float) -> None:
        await self.adopted()  # (the first after a take-over, away from its busiest moment, and with what ended)
        await asyncio.sleep(retention.PRUNE_FIRST_S)
        while True:
            if not self._released:
                try:
                    await self.prune()
                except Exception:  # a failed prune is logged; the next one tries again
                    log.exception("pruning exited terminals failed")
            await asyncio.sleep(period_s)

    async def prune(self, dry_run: bool = False) -> dict[str, Any]:
        """Remove (purge) the exited terminals the retention does not keep, oldest first (lookout.terminal.journal.retention);
        `dry_run`: only say which. Conflict when this lookout keeps every terminal (read-only, handed over)."""
        if self.keep is None or self._released:
            raise Conflict("this lookout prunes no terminals (it is read-only, or another daemon took them over)")
        exited = [(s.meta, s.directory) for s in self._sessions.values() if s.meta.status == "exited" and not s.running]
        exited += [(d.meta, d.directory) for d in self._dormant.values()]
        sizes = await asyncio.to_thread(lambda: [retention.size_of(directory) for _meta, directory in exited])
        ended = [
            retention.Ended(meta.id, meta.ended_at or meta.created_at, size)
            for (meta, _directory), size in zip(exited, sizes, strict=True)
        ]
        pruned: list[dict[str, Any]] = []
        for terminal, why in retention.to_prune(ended, time.time(), self.keep):
            if not dry_run:
                await self.close(terminal.id, purge=True)
            pruned.append({"id": terminal.id, "ended_at": terminal.ended_at, "bytes": terminal.size, "reason": why})
        if pruned and not dry_run:
            log.info("pruned %d exited terminals (%d bytes)", len(pruned), sum(p["bytes"] for p in pruned))
        return {
            "pruned": pruned,
            "dry_run": dry_run,
            "kept": len(exited) - len(pruned),
            "retention": self.keep.describe(),
        }

    async def shutdown(self) -> None:
        """Leave every running terminal to its holder: it goes on, and the next daemon adopts it (a clean
        stop is recorded, so that those a container's stop ends with it say so: lookout.terminal.process.clean_stop)."""
        left = self._adopting.stop("this daemon is stopping before it adopted the terminal: ask the next one")
        await self.adopted()
        if not (self.read_only or self._released):
            running = [s.id for s in self._sessions.values() if s.running] + left
            await asyncio.to_thread(clean_stop.record, self.root.parent, running)
        if self._pruning is not None:
            self._pruning.cancel()
        if self._readopting is not None:
            self._readopting.cancel()
            await asyncio.gather(self._readopting, return_exceptions=True)
        await asyncio.gather(*(s.detach() for s in self._sessions.values() if s.running))
        await self.launcher.close()
        await self.places.close()

    async def release(self) -> None:
        """Another daemon takes the terminals over (a hot restart): each is left to it, followed here only
        for the answers already begun (see TerminalSession.release); its holders' fork server ends."""
        await self.adopted()
        self._released = True
        self.leases.released = True  # the next daemon reads the book as it is now
        await asyncio.gather(*(s.release() for s in self._sessions.values()))
        await self.launcher.close()

    def take_back(self) -> None:
        """Undo `release` (the daemon that was to take the terminals over failed)."""
        self._released = False
        self.leases.released = False
        for session in self._sessions.values():
            session.take_back()

    def stop_waits(self) -> None:
        """The daemon is stopping: every wait in flight answers now, with the cursor to resume from."""
        for session in self._sessions.values():
            session.stop_waits()

    async def stop_all(self) -> None:
        """End every running terminal (`lookout kill --all`, tests)."""
        await self.adopted()
        await asyncio.gather(*(s.stop() for s in self._sessions.values() if s.running))

    def sessions(self) -> list[TerminalSession]:
        """Every terminal whose session is built (not the exited ones let go), oldest first."""
        return sorted(self._sessions.values(), key=lambda s: s.meta.created_at)

    async def describe_all(self, status: set[str] | None = None) -> list[dict[str, Any]]:
        """Every terminal's facts (of a `status` among these), oldest first, as listings show them (an exited one let
        go, or one not yet adopted with the state `adopting`, from its record), letting the loop run other work
        between groups of LISTING_GROUP: hundreds of terminals would hold every other request up meanwhile."""
        self._let_go()
        every: list[TerminalSession | dormant.Dormant] = [*self._sessions.values(), *self._dormant.values()]
        every += self._adopting.records()
        if status is not None:
            every = [terminal for terminal in every if terminal.meta.status in status]
        out = []
        for i, terminal in enumerate(sorted(every, key=lambda t: t.meta.created_at)):
            if i and i % LISTING_GROUP == 0:
                await asyncio.sleep(0)
            if isinstance(terminal, TerminalSession):
                out.append(terminal.describe(fresh=False))
            elif terminal.meta.id in self._adopting:
                out.append(terminal.describe(self.leases, state="adopting"))
            else:
                out.append(terminal.describe(self.leases))
        return out

    async def get(self, terminal_id: str) -> TerminalSession:
        """The terminal's session: one not yet adopted once it is, an exited one let go built again from its files
        (in a thread)."""
        check_id(terminal_id, "terminal")
        session = self._sessions.get(terminal_id)
        if session is None and terminal_id in self._adopting:
            session = await self._adopting.session(terminal_id)
        elif session is None:
            session = await self._build(terminal_id)
        self._recent.used(terminal_id)
        self._let_go()
        return session

    def _files(self, terminal_id: str) -> tuple[Path, TerminalMeta]:
        """A terminal's directory and meta, without building its session."""
        check_id(terminal_id, "terminal")
        terminal = (
            self._sessions.get(terminal_id) or self._dormant.get(terminal_id) or self._adopting.record(terminal_id)
        )
        if terminal is None:
            raise NotFound(f"no terminal {terminal_id!r}")
        return terminal.directory, terminal.meta

    async def _build(self, terminal_id: str) -> TerminalSession:
        """The session of an exited terminal let go, built from its files once for all who ask meanwhile."""
        building = self._building.get(terminal_id)
        if building is None:
            if terminal_id not in self._dormant:
                raise NotFound(f"no terminal {terminal_id!r}")
            building = asyncio.ensure_future(self._load(self._dormant[terminal_id].directory))
            self._building[terminal_id] = building
            building.add_done_callback(lambda _: self._building.pop(terminal_id, None))
        session = await asyncio.shield(building)
        if terminal_id not in self._sessions:
            if self._dormant.pop(terminal_id, None) is None:  # purged meanwhile
                raise NotFound(f"no terminal {terminal_id!r}")
            session.writes.released = self._released
            self._keep(session)
        return self._sessions[terminal_id]

    def _let_go(self) -> None:
        """Let the exited sessions go that were not asked for, or not among the last asked for (their records
        stay listed: lookout.terminal.dormant)."""
        exited = [s for s in self._sessions.values() if dormant.may_let_go(s) and s.id not in self._building]
        let_go = self._recent.beyond(exited)
        for session in let_go:
            self._dormant[session.id] = dormant.let_go(session)
            del self._sessions[session.id]
            self._recent.forget(session.id)
        if let_go:
            memory.trim_soon()

    async def create(self, spec: TerminalSpec) -> TerminalSession:
        """A new terminal; Conflict when the running ones and those being opened reach `max_sessions`, counted
        when the open is admitted (before its first await), so no number of concurrent opens passes it."""
        if len(self._sessions) + len(self._adopting) + self._opening >= self.max_sessions:  # (only then may the
            live = sum(1 for s in self._sessions.values() if s.running) + len(self._adopting)  # running be as many)
            if live + self._opening >= self.max_sessions:
                raise Conflict(f"{live} terminals are running and {self._opening} opening, the limit "
                               f"is LOOKOUT_MAX_SESSIONS={self.max_sessions}; delete one first",
                               limit="max_sessions", value=self.max_sessions)  # fmt: skip
        self._opening += 1
        try:
            return await self._create(spec)
        finally:
            self._opening -= 1

    async def _create(self, spec: TerminalSpec) -> TerminalSession:
        argv, display, is_shell = commands.argv_of(spec.command)
        cwd = commands.checked_cwd(spec.cwd)
        env = commands.child_env(spec.env)
        commands.check_executable(argv[0], env.get("PATH"))
        place = await self.places.take()
        terminal_id = place.id
        meta = TerminalMeta(
            id=terminal_id,
            name=spec.name or display.split(" ", 1)[0].rsplit("/", 1)[-1],
            command=display,
            argv=argv,
            cwd=cwd,
            cols=spec.cols,
            rows=spec.rows,
            engine=self.engine,
            shell=is_shell,
            created_at=time.time(),
            shell_integration=spec.shell_integration and integration_supported(argv),
        )
        try:
            session = await origins.start(meta, place, self.root, env, self.limits, self.holders, self.launcher,
                                          bus=self.bus, recorder=self.recorder)  # fmt: skip
        finally:
            self.places.fill()
        self._keep(session)
        self._recent.used(terminal_id)
        self.bus.publish("terminal.created", id=terminal_id, name=meta.name, command=meta.command)
        # Its frames count tokens (its end at the latest): the tokenizer loads now, once this answer is on its way.
        asyncio.get_running_loop().call_soon(load_soon)
        return session

    async def observed(self, terminal_id: str, refs: dict[str, Any]) -> dict[str, Any] | None:
        """What a frame of this terminal showed the agent: the screen rebuilt at the frame's raw offset with
        the view it asked for (lookout.terminal.screen.frame_screens; None for a frame that read no screen); Gone when
        the terminal's records are gone."""
        try:
            recorded = Recorded.from_refs(refs)
        except BadInput as exc:
            raise Gone(f"the record of this frame of terminal {terminal_id} is unreadable: {exc}") from exc
        if recorded is None:
            return None
        try:
            directory, meta = self._files(terminal_id)
        except NotFound:
            raise Gone(f"terminal {terminal_id} is gone (purged): its screens cannot be shown again") from None
        try:
            shown = await RENDERS.run(partial(rebuild, directory, meta, recorded))
        except BadInput as exc:
            raise Gone(f"the screen of the frame at offset {recorded.offset} of terminal {terminal_id} cannot be "
                       f"rebuilt: {exc}") from exc  # fmt: skip
        out = {"kind": "terminal screen", "terminal_id": terminal_id, "raw_offset": recorded.offset,
               "view": refs.get("view"), "replayed_bytes": shown.replayed, "screen": shown.screen}  # fmt: skip
        if shown.incomplete is not None:
            out["incomplete"] = shown.incomplete
        return out

    def exported(self, terminal_id: str, refs: list[dict[str, Any]]) -> list[ArchivePart]:
        """The files that rebuild the screens the refs name (lookout.terminal.screen.frame_screens.exported)."""
        try:
            directory = self._files(terminal_id)[0]
        except NotFound:
            return []
        return exported(directory, f"{self.root.name}/{terminal_id}", refs)

    def _keep(self, session: TerminalSession) -> None:
        session.leases = self.leases
        self._sessions[session.id] = session

    async def close(self, terminal_id: str, purge: bool = False) -> dict[str, Any]:
        """Stop the terminal (its files stay, and it stays listed, unless `purge`); another hand's lease
        refuses it (Leased), and the lease ends with it. Returns its facts; an exited terminal let go has nothing
        to stop, and is not built for it."""
        check_id(terminal_id, "terminal")
        record = None if terminal_id in self._building else self._dormant.get(terminal_id)
        session = None if record is not None else await self.get(terminal_id)
        self.leases.admit(resource(terminal_id), current_agent.get())
        if session is not None:
            await session.stop()
        self.leases.forget(resource(terminal_id))
        directory = session.directory if session is not None else self._files(terminal_id)[0]
        if purge:
            try:
                await asyncio.to_thread(shutil.rmtree, directory)
            except FileNotFoundError:
                pass
            except OSError as exc:
                raise Conflict(f"terminal {terminal_id} is stopped, but its files in {directory} could not "
                               f"all be removed ({exc}); it stays listed, not purged") from exc  # fmt: skip
            self._sessions.pop(terminal_id, None)
            self._dormant.pop(terminal_id, None)  # (let go while it stopped)
            self._recent.forget(terminal_id)
        self.bus.publish("terminal.deleted", id=terminal_id, purged=purge)
        if session is not None:
            return session.describe()
        assert record is not None
        return record.describe(self.leases)
