"""A device: the operations lookout does on one Android device (adb work runs in threads), named by the
registry (lookout.device.registry).

Every call checks the device's state first: an offline or unauthorized device is never used (409 with
what to do), an unknown serial is a 404, and no adb server is a 503. Screenshots and UI dumps are
observations; taps and swipes take image coordinates and are converted with the observation they name
(or the device's latest one), after checking that the device has not rotated since. Every action and
observation is recorded in the device's `actions.jsonl`, published on the event bus and recorded in the
timeline, as done by the agent of the request being served (`current_agent`).

Reading the screen (a screenshot, a UI dump joined to it only while the device still shows what it
showed) is lookout.device.reading; the listing an agent gets is lookout.device.shown.
"""

from __future__ import annotations

import asyncio
import base64
import re
import time
from collections.abc import Callable
from dataclasses import replace
from functools import partial, wraps
from pathlib import Path
from typing import Any, TypeVar

from lookout.core.errors import BadInput, Conflict, LookoutError, NotFound
from lookout.core.images import ImageFormat
from lookout.core.patterns import run_bounded
from lookout.core.scaling import RAW_WARNING, fit, image_tokens
from lookout.device import text_input
from lookout.device.aim import Aim, aim_element, aim_point, aim_swipe, to_device, verify
from lookout.device.frames import device_frame, failed_action_frame
from lookout.device.info import DeviceInfo
from lookout.device.keys import keycode
from lookout.device.logcat import LOGCAT_MAX_LINES, filter_lines
from lookout.device.observations import Observation
from lookout.device.reading import AdbLink, read_ui, take_screenshot
from lookout.device.shown import as_they_are, render_elements
from lookout.device.ui_tree import UiNode, find, prefer_visible
from lookout.timeline.recording import current_agent

T = TypeVar("T")
STATE_ADVICE = {
    "unauthorized": "accept the 'Allow USB debugging?' prompt on the device, then try again",
    "offline": "reconnect it (`adb reconnect offline`, or `adb connect` again for a network device)",
}
PACKAGE = re.compile(r"[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)+")


def _recorded_failure(what: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """An action that fails (refused input, a stale observation, a device gone) is a pinned frame too."""

    def decorate(action: Callable[..., Any]) -> Callable[..., Any]:
        @wraps(action)
        async def run(self: Device, *args: Any, **kwargs: Any) -> Any:
            try:
                return await action(self, *args, **kwargs)
            except LookoutError as exc:
                self.link.recorder.record(failed_action_frame(self.serial, what, exc.message))
                raise

        return run

    return decorate


class Device:
    """One device, by serial: its observations (screenshot, ui, find, image), actions (tap, swipe, type,
    key, app, script) and log (logcat)."""

    def __init__(self, serial: str, link: AdbLink) -> None:
        self.serial = serial
        self.link = link

    async def _ready(self) -> None:
        """Raise unless the adb server lists the device in the `device` state."""
        states = dict(await self.link.thread(self.link.adb.devices))
        state = states.get(self.serial)
        if state is None:
            known = ", ".join(states) or "none"
            raise NotFound(f"no device {self.serial!r} on the adb server at {self.link.adb.address} (devices: {known})")
        if state != "device":
            advice = STATE_ADVICE.get(state, "wait until `adb devices` shows it as `device`")
            raise Conflict(f"device {self.serial} is {state}: {advice}", state=state)

    # ------------------------------------------------------------------ observations

    async def screenshot(
        self, *, max_dimension: int | None, raw: bool, fmt: ImageFormat, inline: bool, marks: bool,
        ui: bool = False, all_nodes: bool = False, bounds: bool = False, max_tokens: int | None = None,
    ) -> dict[str, Any]:  # fmt: skip
        await self._ready()
        limit = None if raw else (max_dimension or self.link.max_dimension)
        obs, data, warnings, nodes = await self.link.thread(
            take_screenshot, self.link, self.serial, limit, fmt, marks or ui
        )
        if raw:
            warnings.insert(0, RAW_WARNING)
        result = self._observation_json(obs)
        result.update(path=str(self.link.store.image_path(obs)), url=_image_url(obs), format=fmt, black=obs.black)
        result["tokens"] = image_tokens(obs.scale.image_width, obs.scale.image_height)
        if warnings:
            result["warning"] = " ".join(warnings)
        frame_elements = None
        if ui and nodes is not None:
            result["ui"] = await asyncio.to_thread(self._render, obs, nodes, all_nodes=all_nodes, bounds=bounds,
                                                   max_tokens=max_tokens)  # fmt: skip
            frame_elements = result["ui"]["elements"]
        if inline:
            result["image_b64"] = base64.b64encode(data).decode()
        self._record("observation", "screenshot", obs_id=obs.obs_id, image=result["image"],
                     warning=result.get("warning"), frame_elements=frame_elements,
                     app=_app(nodes) if ui and nodes else None)  # fmt: skip
        return result

    def _render(self, obs: Observation, nodes: list[UiNode], *, all_nodes: bool, bounds: bool,
                max_tokens: int | None, header: dict[str, Any] | None = None) -> dict[str, Any]:  # fmt: skip
        """The UI listing within `max_tokens` (call in a worker thread: it counts tokens)."""
        screen = (obs.scale.device_width, obs.scale.device_height)
        return render_elements(nodes, obs.scale.factor, screen=screen, all=all_nodes, bounds=bounds,
                               max_tokens=max_tokens, header=header)  # fmt: skip

    async def ui(
        self, *, obs_id: str | None, all_nodes: bool, max_tokens: int | None, bounds: bool = False
    ) -> dict[str, Any]:  # fmt: skip
        await self._ready()
        obs, nodes = await self.link.thread(read_ui, self.link, self.serial, obs_id)
        header = self._observation_json(obs)
        result = await asyncio.to_thread(self._render, obs, nodes, all_nodes=all_nodes, bounds=bounds,
                                         max_tokens=max_tokens, header=header)  # fmt: skip
        self._record("observation", "ui", obs_id=obs.obs_id, elements=result.get("shown"),
                     frame_elements=result["elements"], app=_app(nodes))  # fmt: skip
        return result

    async def find(self, criteria: dict[str, Any], obs_id: str | None, all_nodes: bool = False,
                   bounds: bool = False) -> dict[str, Any]:  # fmt: skip
        """The matching nodes; a hidden match (no visible area, or off the screen) gives way to the visible
        node around it that carries the same text or description, unless `all_nodes` asks for every match
        as it is (hidden ones flagged)."""
        await self._ready()
        obs, nodes = await self.link.thread(read_ui, self.link, self.serial, obs_id)
        try:
            found = await run_bounded(partial(find, nodes, **criteria))  # regexes: off the loop
        except ValueError as exc:
            raise BadInput(str(exc)) from exc
        screen = (obs.scale.device_width, obs.scale.device_height)
        if not all_nodes:
            found = prefer_visible(nodes, found, screen)
        elements = as_they_are(nodes, found, obs.scale.factor, screen, bounds=bounds)
        result = {**self._observation_json(obs), "elements": elements, "total": len(nodes), "matched": len(found)}
        self._record("observation", "find", obs_id=obs.obs_id, criteria=criteria, found=len(found),
                     frame_elements=elements, app=_app(nodes))  # fmt: skip
        return result

    def image(self, obs_id: str) -> tuple[Path, str]:
        obs = self.link.store.get(self.serial, obs_id)
        return self.link.store.image_path(obs), obs.image_format or "png"

    def _observation_json(self, obs: Observation) -> dict[str, Any]:
        return {"obs_id": obs.obs_id, "serial": obs.serial, "device": obs.device, "image": obs.image,
                "scale_factor": round(obs.scale.factor, 6)}  # fmt: skip

    # ------------------------------------------------------------------ actions

    @_recorded_failure("tap")
    async def tap(self, *, x: float | None, y: float | None, element: int | None, obs_id: str | None,
                  hold_ms: int | None = None) -> dict[str, Any]:  # fmt: skip
        """A tap (a long press with `hold_ms`) on an element of the observation's listing or at a point of its
        image, sent only once the device shows there what the observation showed (lookout.device.aim)."""
        await self._ready()

        def aim(obs: Observation, nodes: list[UiNode] | None, info: DeviceInfo) -> Aim:
            if element is not None:
                return aim_element(obs, nodes, element, info)
            assert x is not None and y is not None
            return aim_point(obs, nodes, x, y)

        obs, source, target = await self.link.thread(self._aimed, obs_id, aim)
        px, py = target.point
        command = f"input tap {px} {py}" if hold_ms is None else f"input swipe {px} {py} {px} {py} {hold_ms}"
        await self._input(command)
        detail: dict[str, Any] = {"obs_id": obs.obs_id, "observation": source, **target.answer(obs.scale)}
        if hold_ms is not None:
            detail["held_ms"] = hold_ms
        self._record("action", "long_press" if hold_ms is not None else "tap", **detail)
        return {"ok": True, **detail}

    @_recorded_failure("swipe")
    async def swipe(self, *, points: tuple[float, float, float, float] | None, direction: str | None,
                    distance: float, duration_ms: int, obs_id: str | None) -> dict[str, Any]:  # fmt: skip
        await self._ready()

        def aim(obs: Observation, nodes: list[UiNode] | None, info: DeviceInfo) -> Aim:
            return aim_swipe(obs, nodes, info, points=points, direction=direction, distance=distance)

        obs, source, target = await self.link.thread(self._aimed, obs_id, aim)
        assert target.end is not None
        (x1, y1), (x2, y2) = target.point, target.end
        await self._input(f"input swipe {x1} {y1} {x2} {y2} {duration_ms}")
        detail: dict[str, Any] = {"obs_id": obs.obs_id, "observation": source, "device_from": [x1, y1],
                                  "device_to": [x2, y2], "duration_ms": duration_ms}  # fmt: skip
        if target.hit is not None:
            detail["element"] = target.hit
        self._record("action", "swipe", **detail, direction=direction)
        return {"ok": True, **detail}

    def _aimed(self, obs_id: str | None, aim: Callable[[Observation, list[UiNode] | None, DeviceInfo], Aim]
               ) -> tuple[Observation, str, Aim]:  # fmt: skip
        """In a worker thread: the observation (named, else the device's latest), the action's target in it,
        checked against the device now (raises Conflict when it no longer shows it)."""
        obs, source = self._observation(obs_id)
        nodes = self.link.store.ui_nodes(obs)
        info = self.link.info(self.serial)
        target = aim(obs, nodes, info)
        verify(obs, target, info, self.link.store, self.link.observer)
        return obs, source, target

    @_recorded_failure("type")
    async def type_text(self, text: str) -> dict[str, Any]:
        commands = text_input.type_commands(text)
        await self._ready()
        for command in commands:
            await self._input(command)
        self._record("action", "type", text=text)
        return {"ok": True, "typed": len(text), "commands": len(commands)}

    @_recorded_failure("key")
    async def key(self, key: str | int) -> dict[str, Any]:
        code = keycode(key)
        await self._ready()
        await self._input(f"input keyevent {code}")
        self._record("action", "key", key=key, keycode=code)
        return {"ok": True, "keycode": code}

    @_recorded_failure("app")
    async def app(self, package: str, action: str) -> dict[str, Any]:
        _check_package(package)
        await self._ready()
        if action == "launch":
            command = f"monkey -p {package} -c android.intent.category.LAUNCHER 1"
        else:
            command = f"am force-stop {package}"
        result = await self.link.thread(self.link.adb.shell, self.serial, command)
        said = (result.stdout + result.stderr).decode("utf-8", "replace")
        if action == "launch" and (result.exit_code != 0 or "No activities found" in said or "aborted" in said):
            raise NotFound(f"cannot launch {package}: not installed or no launcher activity ({said.strip()[:200]})")
        self._record("action", "app", package=package, app_action=action)
        return {"ok": True, "package": package, "action": action}

    async def script(self, steps: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
        """Run steps in order, each as its single action would run (coordinates and element indices of the
        observation it names, else the device's latest: a screenshot step's, once it ran; each action checked
        against the device before it is sent). Every step's input is checked before the first runs (a
        BadInput then, nothing sent). The first step that fails stops the script: the failure is raised as
        that step's error, with the results so far and `stopped_at`. {ok, results: [{step, action, ...}]}."""
        await self._ready()
        await self.link.thread(self._check_steps, steps)
        results: list[dict[str, Any]] = []
        for index, (action, args) in enumerate(steps):
            try:
                done = await self._step(action, args)
            except LookoutError as exc:
                stopped = {"step": index, "action": action, "reason": exc.message}
                results.append({"step": index, "action": action, "ok": False,
                                "error": {"code": exc.code, "message": exc.message}})  # fmt: skip
                raise type(exc)(f"step {index} ({action}) failed and the script stopped there ({index} step"
                                f"{'' if index == 1 else 's'} before it ran): {exc.message}",
                                **{**exc.details, "stopped_at": stopped, "results": results}) from exc  # fmt: skip
            results.append({"step": index, "action": action, **done})
        return {"ok": True, "results": results}

    def _check_steps(self, steps: list[tuple[str, dict[str, Any]]]) -> None:
        """In a worker thread: raise BadInput for the first step whose input cannot be right: text `input text`
        cannot type, an unknown key or package name, coordinates outside the image or an element index
        outside the listing of the observation in force at that step (the device's latest one, or the one a
        screenshot step before it will make, whose size follows from the device's)."""
        latest = self.link.store.latest(self.serial)
        scale = latest.scale if latest else None
        nodes = self.link.store.ui_nodes(latest) if latest else None
        for index, (action, args) in enumerate(steps):
            try:
                if action == "screenshot":
                    info = self.link.info(self.serial)
                    limit = None if args["raw"] else (args["max_dimension"] or self.link.max_dimension)
                    scale, nodes = fit(info.width, info.height, limit), None
                elif action == "type":
                    text_input.check_typeable(args["text"])
                elif action == "key":
                    keycode(args["key"])
                elif action == "app":
                    _check_package(args["package"])
                elif action in ("tap", "swipe"):
                    named = self.link.store.get(self.serial, args["obs_id"]) if args["obs_id"] else None
                    step_scale = named.scale if named else scale
                    step_nodes = self.link.store.ui_nodes(named) if named else nodes
                    points = (args["x"], args["y"]) if action == "tap" else args["points"]
                    if points is not None and points[0] is not None and step_scale is not None:
                        for px, py in zip(points[::2], points[1::2], strict=True):
                            to_device(step_scale, px, py)
                    element = args["element"] if action == "tap" else None
                    if element is not None and step_nodes is not None and not 0 <= element < len(step_nodes):
                        raise BadInput(f"element {element} is not in the listing it would use (indices "
                                       f"0-{len(step_nodes) - 1})")  # fmt: skip
            except LookoutError as exc:
                raise BadInput(f"step {index} ({action}): {exc.message}; no step was run", field="steps") from exc

    async def _step(self, action: str, args: dict[str, Any]) -> dict[str, Any]:
        if action == "wait":
            await asyncio.sleep(args["ms"] / 1000)
            return {"ok": True, "waited_ms": args["ms"]}
        if action == "screenshot":
            done = await self.screenshot(**args, inline=False)
            return {"ok": True, **{k: v for k, v in done.items() if k not in ("path", "serial")}}
        run = {"tap": self.tap, "swipe": self.swipe, "type": self.type_text, "key": self.key, "app": self.app}[action]
        return await run(**args)

    async def logcat(self, *, lines: int, package: str | None, tag: str | None,
                     level: str | None) -> dict[str, Any]:  # fmt: skip
        await self._ready()
        command = f"logcat -d -v threadtime -t {LOGCAT_MAX_LINES if (tag or level) else lines}"
        if package is not None:
            if not PACKAGE.fullmatch(package):
                raise BadInput(f"{package!r} is not an Android package name", field="package")
            pid = (await self.link.thread(self.link.adb.shell, self.serial, f"pidof -s {package}")).text.strip()
            if not pid.isdigit():
                raise Conflict(f"{package} is not running, so it has no log lines; launch it first")
            command += f" --pid={pid}"
        result = await self.link.thread(self.link.adb.shell, self.serial, command)
        kept = filter_lines(result.text.splitlines(), tag=tag, level=level, limit=lines)
        return {"serial": self.serial, "lines": kept, "count": len(kept),
                "filters": {"package": package, "tag": tag, "level": level}}  # fmt: skip

    # ------------------------------------------------------------------ helpers

    def _observation(self, obs_id: str | None) -> tuple[Observation, str]:
        """The named observation, else the device's latest one (never an older one with a listing: element
        indices belong to the observation they are used with), and which of the two it is."""
        if obs_id is not None:
            return self.link.store.get(self.serial, obs_id), "named"
        obs = self.link.store.latest(self.serial)
        if obs is None:
            raise Conflict(f"no observation of {self.serial} yet: take one with POST /screenshot (ui=true for "
                           "its elements), then use its coordinates or element indices")  # fmt: skip
        return obs, "latest"

    async def _input(self, command: str) -> None:
        self.link.observer.forget(self.serial)  # no capture from before this input vouches for the screen after it
        result = await self.link.thread(self.link.adb.shell, self.serial, command)
        if result.exit_code != 0:
            said = (result.stderr or result.stdout).decode("utf-8", "replace").strip()
            raise Conflict(f"the device refused `{command.split(' ', 2)[1]}`: {said[:300]}")

    def _record(self, kind: str, what: str, frame_elements: list[dict[str, Any]] | None = None,
                app: str | None = None, **fields: Any) -> None:  # fmt: skip
        """One line in the device's actions.jsonl, an event on the bus, a frame in the timeline."""
        agent = current_agent.get()
        entry = {"ts": time.time(), "agent": agent, "kind": kind, "what": what, "serial": self.serial,
                 **{k: v for k, v in fields.items() if v is not None}}  # fmt: skip
        self.link.store.record(self.serial, entry)
        self.link.recorder.record(replace(device_frame(entry, frame_elements, app), agent=agent))
        self.link.bus.publish(f"device.{kind}", **{k: v for k, v in entry.items() if k != "ts"})


def _app(nodes: list[UiNode]) -> str | None:
    return next((n.package for n in nodes if n.package), None)


def _check_package(package: str) -> None:
    if not PACKAGE.fullmatch(package):
        raise BadInput(f"{package!r} is not an Android package name (like com.example.app)", field="package")


def _image_url(obs: Observation) -> str:
    return f"/v1/devices/{obs.serial}/observations/{obs.obs_id}/image"
