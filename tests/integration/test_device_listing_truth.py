"""A listing asked for an observation is that observation's screen (issue 48): a UI dump joins a screenshot only
while a capture taken after the dump shows the screenshot's pixels. In process, on a real adb server with the fake
device, so that no request's time comes near the 5 s a dump may join a screenshot within."""
from __future__ import annotations

from pathlib import Path

from lookout.core.scaling import fit
from lookout.device.adb import Adb
from lookout.device.observations import DeviceObservations
from lookout.device.observer import Observer
from lookout.device.reading import changed_since
from lookout.device.verify import reference
from tests.support import overlays
from tests.support.adb_fixtures import MakeDevice
from tests.support.adb_server import AdbServer
from tests.support.screens import render_dump


def test_a_change_inside_the_same_window_is_seen_and_an_unchanged_screen_is_not(
    tmp_path: Path, adb_server: AdbServer, make_device: MakeDevice
) -> None:
    fake, serial = make_device(size=overlays.SCREEN)
    fake.show(overlays.dump(overlays.content("list")))
    observer = Observer(Adb("127.0.0.1", adb_server.port, 10))
    store = DeviceObservations(tmp_path / "devices")
    scale = fit(*overlays.SCREEN, 1000)
    frame = observer.capture(serial).image
    obs = store.save(store.new(serial, scale, 0), reference=reference(frame, scale))
    assert changed_since(store, observer, obs) is None
    fake.set_screen(render_dump(overlays.dialog_window("list"), overlays.SCREEN))
    reason = changed_since(store, observer, obs)
    assert reason is not None and reason.startswith("the screen changed since it was taken (")
