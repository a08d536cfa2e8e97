"""create_app(settings): the FastAPI application, whose lifespan starts and stops the registries."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Protocol

from fastapi import FastAPI

from lookout import __version__
from lookout.api import health, mcp_http, streams, terminals, timeline, web
from lookout.api.agent import AgentContext
from lookout.api.errors import install_error_handlers
from lookout.api.front_door import FrontDoor, Streams
from lookout.api.guard import Guard
from lookout.api.handover import Handover, HandoverGate
from lookout.api.later_routes import IncludeOnFirstUse, LaterRoutes
from lookout.api.read_only import ReadOnly
from lookout.api.responses import ERROR_RESPONSES, JSONResponse
from lookout.api.text_guard import TextGuard
from lookout.browser.browser import BrowserHost, Remote
from lookout.browser.registry import PageRegistry
from lookout.config import Settings
from lookout.core.auth_token import load_or_create_token
from lookout.core.events import EventBus
from lookout.core.gc_tuning import freeze_long_lived
from lookout.core.leases import LeaseBook
from lookout.core.private_files import check_data_dir
from lookout.core.redaction import Scrubber, url_secrets
from lookout.core.registry import Registry
from lookout.device.adb import Adb
from lookout.device.registry import DeviceRegistry
from lookout.terminal.journal.retention import Retention
from lookout.terminal.registry import TerminalRegistry
from lookout.terminal.session import SessionLimits
from lookout.timeline.compression import Compressor
from lookout.timeline.llm_summarizer import ChatSummarizer
from lookout.timeline.recording import NullRecorder, Recorder
from lookout.timeline.timeline import Timeline

INCLUDED_ON_FIRST_USE = {"/v1/devices": "lookout.api.devices", "/v1/pages": "lookout.api.pages",
                         "/v1/profiles": "lookout.api.profiles"}  # fmt: skip
"""The API that an ordinary request does not need, by prefix (lookout.api.later_routes)."""


class Lifecycle(Protocol):
    """What the process running the app (lookout.daemon.serve) does around its start."""

    released: bool
    """The data dir was left to a daemon that replaced this one (a hot restart)."""

    @property
    def taking_over(self) -> bool:
        """A daemon still holds the data dir until `take_over` has taken it (a hot restart)."""

    async def prepare(self) -> None:
        """When taking over, before this daemon accepts: requests it accepts wait until it has taken over."""

    async def take_over(self, adopt: Callable[[], Awaitable[None]]) -> None:
        """When taking over, once this daemon accepts: take the data dir, `adopt` it, then serve (and say so)."""

    async def serving(self) -> None:
        """Once the app has started with the data dir its own."""


def create_app(settings: Settings | None = None, lifecycle: Lifecycle | None = None) -> FastAPI:
    """Raises UnsafePath when the data dir, the token file or a file opened here is not lookout's alone."""
    settings = settings or Settings()
    if tightened := check_data_dir(settings.data_dir):
        logging.getLogger("lookout").warning("%s", tightened)
    token = load_or_create_token(settings.data_dir, settings.token)
    limits = SessionLimits(
        scrollback=settings.scrollback_lines,
        max_journal_bytes=settings.max_journal_bytes,
        max_input_bytes=settings.max_input_bytes,
    )
    bus = EventBus()
    taking_over = lifecycle is not None and lifecycle.taking_over
    history = Timeline(settings.data_dir / "timeline", deferred=taking_over)  # read once the predecessor let go
    summarizer = (
        ChatSummarizer(settings.summarizer_url, settings.summarizer_model, settings.summarizer_key)
        if settings.summarizer_url
        else None
    )
    compressor = Compressor(history, summarizer, settings.compress_protect, settings.compress_threshold)
    recorder: Recorder = NullRecorder() if settings.read_only else history  # a read-only lookout records nothing
    keep = Retention(settings.retain_exited_days * 86400, settings.retain_exited_count, settings.retain_exited_mb << 20)
    leases = LeaseBook(None if settings.read_only else settings.data_dir / "leases.json")
    manager = TerminalRegistry(settings.data_dir / "terminals", settings.screen_engine, limits, settings.max_sessions,
                               bus, recorder, read_only=settings.read_only, keep=keep, leases=leases)  # fmt: skip

    adb = Adb(settings.adb_host, settings.adb_port, settings.device_timeout_s)
    device_registry = DeviceRegistry(settings.data_dir / "devices", adb, settings.device_max_dimension, bus, recorder)
    host = BrowserHost(settings.browser_executable, remote_browser(settings))
    uploads = settings.upload_dir or settings.data_dir / "uploads"
    page_registry = PageRegistry(settings.data_dir / "pages", host, bus, uploads, recorder,
                                 idle_s=settings.page_idle_s, max_pages=settings.max_pages, leases=leases)  # fmt: skip

    adopted = False

    async def adopt() -> None:
        """Take up the data dir (once it is this daemon's alone)."""
        nonlocal adopted
        if taking_over:  # every frame ever recorded is indexed: not on the loop, which serves meanwhile
            await asyncio.to_thread(history.open)
        await asyncio.to_thread(leases.load)  # held before a restart or a crash, still held
        await manager.start()
        if not settings.read_only:  # summaries are records too
            compressor.start()
        freeze_long_lived()
        adopted = True

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        taking: asyncio.Task[None] | None = None
        if lifecycle is not None and taking_over:  # accept first, take over then (lookout.daemon.serve)
            await lifecycle.prepare()
            taking = asyncio.create_task(lifecycle.take_over(adopt))
        else:
            await adopt()
            if lifecycle is not None:
                await lifecycle.serving()
        try:
            yield
        finally:
            if taking is not None:
                taking.cancel()
                await asyncio.gather(taking, return_exceptions=True)
            await mcp_endpoint.close()
            if adopted:  # a daemon that never took over leaves the data dir to the one that holds it
                await compressor.stop()
                await manager.shutdown()
            await page_registry.shutdown()
            device_registry.shutdown()
            if adopted:
                await asyncio.to_thread(history.close)
            await gate.close()

    app = FastAPI(
        title="lookout",
        version=__version__,
        summary="Terminals, Android devices and browser pages for AI agents, seen in compact, token-budgeted form.",
        default_response_class=JSONResponse,
        lifespan=lifespan,
    )
    app.state.settings = settings
    registries: dict[str, Registry] = {"terminals": manager, "devices": device_registry,
                                               "pages": page_registry}  # fmt: skip
    for name, registry in registries.items():  # one role in every domain (lookout.core.registry), checked by mypy
        setattr(app.state, name, registry)
    app.state.registries = registries
    app.state.events = bus
    app.state.timeline = history
    app.state.compressor = compressor
    app.state.token = token
    app.state.scrubber = scrubber(settings, token)
    gate = app.state.handover = HandoverGate(settings.takeover_wait_s)
    install_error_handlers(app, app.state.scrubber)
    app.include_router(health.router)
    for api in (terminals, streams, timeline):
        app.include_router(api.router, responses=ERROR_RESPONSES)
    app.include_router(web.router)
    mcp_endpoint = app.state.mcp = mcp_http.mount(app, token)
    later = app.state.later_routes = LaterRoutes(app, INCLUDED_ON_FIRST_USE, responses=ERROR_RESPONSES)
    app.add_middleware(IncludeOnFirstUse, routes=later)  # innermost: routes are included for requests let in
    if settings.read_only:
        app.add_middleware(ReadOnly)
    app.add_middleware(AgentContext)
    app.add_middleware(TextGuard)
    open_streams = Streams(settings.max_streams)
    app.state.front_door = FrontDoor(
        open_streams, settings.allowed_hosts, gate
    )  # for the HTTP protocol (lookout serve)
    app.add_middleware(Guard, token=token, max_body=settings.max_request_bytes, allowed_hosts=settings.allowed_hosts,
                       body_timeout_s=settings.body_timeout_s, streams=open_streams)  # fmt: skip
    app.add_middleware(Handover, gate=gate)  # outermost: what a daemon being replaced still receives
    return app


def scrubber(settings: Settings, token: str) -> Scrubber:
    """What keeps this daemon's secrets out of its answers and its log (lookout.core.redaction)."""
    addresses = (settings.browser_cdp_url, settings.browser_ws_endpoint, settings.summarizer_url)
    return Scrubber([token, settings.summarizer_key, *(s for url in addresses for s in url_secrets(url))])


def remote_browser(settings: Settings) -> Remote | None:
    """The browser elsewhere the settings name (LOOKOUT_BROWSER_CDP_URL, else LOOKOUT_BROWSER_WS_ENDPOINT)."""
    if settings.browser_cdp_url:
        return Remote("cdp", settings.browser_cdp_url)
    if settings.browser_ws_endpoint:
        return Remote("ws", settings.browser_ws_endpoint)
    return None
