"""lookout.api.handover's gate in the daemon that takes over (a hot restart): what it accepts waits until it has
taken over, and is refused with what to do when that takes too long or fails."""

from __future__ import annotations

import asyncio

from lookout.api.handover import HandoverGate


async def test_requests_wait_until_the_new_daemon_has_taken_over() -> None:
    gate = HandoverGate(adopt_wait_s=600)
    gate.adopting()
    waiting = asyncio.ensure_future(gate.until_adopted())
    await asyncio.sleep(0)
    assert not waiting.done(), "it waits while the daemon adopts"
    gate.adopted()
    assert await waiting is None and gate.phase == "serving"


async def test_a_request_that_waits_longer_than_the_takeover_wait_is_told_to_send_it_again() -> None:
    gate = HandoverGate(adopt_wait_s=0.01)
    gate.adopting()
    refusal = await gate.until_adopted()
    assert refusal is not None and "LOOKOUT_TAKEOVER_WAIT_S" in refusal and "send the request again" in refusal


async def test_a_failed_take_over_refuses_what_waits_and_what_comes_after() -> None:
    gate = HandoverGate(adopt_wait_s=600)
    gate.adopting()
    waiting = asyncio.ensure_future(gate.until_adopted())
    await asyncio.sleep(0)
    gate.adoption_failed("the restart failed; send the request again")
    assert await waiting == "the restart failed; send the request again"
    assert await gate.until_adopted() == "the restart failed; send the request again"
