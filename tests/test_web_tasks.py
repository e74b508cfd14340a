"""koikoi.web.tasks: a server's stop never waits long on a background task that lost its cancellation
(Python 3.11's asyncio.wait_for can swallow one, gh-86296: a stop hung with the bots' keeper still
looping)."""

from __future__ import annotations

import asyncio
import logging

from koikoi.web.tasks import cancel_all


def test_a_stop_goes_on_past_a_task_that_swallows_its_cancellation(caplog):
    released = False

    async def stubborn() -> None:
        while not released:  # as a loop whose cancellation a database call's wait_for lost
            try:
                await asyncio.sleep(0.05)
            except asyncio.CancelledError:
                continue

    async def polite() -> None:
        await asyncio.sleep(10)

    async def go() -> tuple[bool, bool]:
        a, b = asyncio.ensure_future(stubborn()), asyncio.ensure_future(polite())
        await asyncio.sleep(0)
        with caplog.at_level(logging.WARNING, logger="koikoi.web"):
            await asyncio.wait_for(cancel_all([a, b], "the test", timeout=0.2), 5)
        done = (a.done(), b.cancelled())
        nonlocal released
        released = True  # it may end now, before the loop closes
        await a
        return done

    stubborn_done, polite_cancelled = asyncio.run(go())
    assert not stubborn_done and polite_cancelled  # it returned anyway, after its timeout
    assert "1 of the test's tasks did not end within 0 s of the stop" in caplog.text
