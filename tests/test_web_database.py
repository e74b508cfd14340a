"""The database's threads (koikoi.web.database): a player's move goes before the table reads of sockets
that have just opened, and those reads wait their turn while the database answers, instead of being
refused after the usual deadline."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from koikoi.web.database import Database, Unavailable
from koikoi.web.store import Store


@pytest.fixture
def store(tmp_path):
    s = Store(str(tmp_path / "games.db"))
    yield s
    s.engine.dispose()


def test_a_move_goes_before_the_reads_that_wait(store):
    order: list[str] = []
    gate = threading.Event()

    def hold() -> None:  # the thread's current call: everything else queues behind it
        gate.wait(10)

    def note(name: str) -> str:
        order.append(name)
        return name

    async def main() -> None:
        db = Database(store, wait=5.0)
        try:
            held = db.submit(hold)
            reads = [asyncio.create_task(db.queued(note, f"read {i}")) for i in range(3)]
            await asyncio.sleep(0)  # the tasks made above submit their calls
            move = asyncio.create_task(db(note, "move"))
            await asyncio.sleep(0)  # the tasks made above submit their calls
            gate.set()
            assert await move == "move"
            assert await asyncio.gather(*reads) == ["read 0", "read 1", "read 2"]
            await held
        finally:
            db.close()

    asyncio.run(main())
    assert order == ["move", "read 0", "read 1", "read 2"]


def test_a_queued_read_waits_past_the_deadline_while_the_database_answers(store):
    """Four reads of 0.4 s each behind each other, on one thread, with a deadline of 1 s: the last waits
    1.2 s for its turn, and is served (a call comes back every 0.4 s: the database answers)."""

    def slow(x: int) -> int:
        time.sleep(0.4)
        return x

    async def main() -> list[int]:
        db = Database(store, wait=1.0, queue_wait=20.0)
        try:
            return await asyncio.gather(*(db.queued(slow, i) for i in range(4)))
        finally:
            db.close()

    assert asyncio.run(main()) == [0, 1, 2, 3]


def test_queued_reads_are_bounded_and_refused_past_the_bound(store):
    gate = threading.Event()

    async def main() -> str:
        db = Database(store, wait=5.0, max_queued=2)
        try:
            db.submit(gate.wait, 10)
            waiting = [asyncio.create_task(db.queued(lambda: "read")) for _ in range(2)]
            await asyncio.sleep(0)  # the tasks made above submit their calls
            try:
                await db.queued(lambda: "one too many")
            except Unavailable as e:
                refused = e.message
            else:
                raise AssertionError("a read past max_queued was queued")
            gate.set()
            assert await asyncio.gather(*waiting) == ["read", "read"]
            return refused
        finally:
            gate.set()
            db.close()

    assert "2 tables are waiting to be read" in asyncio.run(main())


def test_a_queued_read_is_refused_when_the_database_stops_answering(store):
    """A call stuck on the database (past STUCK_SECONDS): a read waiting behind it is told unavailable
    after the usual deadline, not after the queue's."""
    gate = threading.Event()

    async def main() -> None:
        db = Database(store, wait=0.3, queue_wait=60.0)
        try:
            db.submit(gate.wait, 20)
            with pytest.raises(Unavailable):  # well before the queue's 60 s (or this wait_for fails)
                await asyncio.wait_for(db.queued(lambda: "read"), 10)
        finally:
            gate.set()
            db.close()

    asyncio.run(main())
