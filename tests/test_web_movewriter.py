"""Group commit (koikoi.web.movewriter): the moves that come while others are being written go together,
in one transaction; a move that cannot be stored fails alone; a move is done only once it is stored."""

from __future__ import annotations

import asyncio
import threading

import pytest

from koikoi.rules import preset
from koikoi.web.database import Database
from koikoi.web.movewriter import MoveWriter
from koikoi.web.store import Move, Store, StoreError


@pytest.fixture
def store(tmp_path):
    s = Store(str(tmp_path / "games.db"))
    yield s
    s.engine.dispose()


def new_games(store: Store, n: int) -> list[str]:
    seats = [(0, "human", "Ann", None), (1, "human", "Bob", None)]
    rules = preset("nintendo").to_dict()
    return [
        store.create_game(rules=rules, seed=i, opponent="friend", ai_seed=0, status="playing", seat_specs=seats)[0]
        for i in range(n)
    ]


def move(game_id: str, seq: int) -> Move:
    return Move(game_id, seq, seq % 2, 1, "playing", (0, 0), computer_game=False)


def test_moves_that_wait_go_in_one_commit_and_a_bad_one_fails_alone(store):
    games = new_games(store, 10)
    gate = threading.Event()

    async def main() -> tuple[list[object], MoveWriter]:
        db = Database(store, wait=10.0)
        writer = MoveWriter(db, store)
        try:
            db.submit(gate.wait, 10)  # the database thread is busy: the moves queue up
            first = writer.write(move(games[0], 0))
            rest = [writer.write(move(g, 0)) for g in games[1:]]
            rest.append(writer.write(move(games[1], 5)))  # game 1 is at move 0, not 5: refused
            await asyncio.sleep(0)  # callbacks run: none of them may finish a move
            assert not first.done() and not any(f.done() for f in rest)  # nothing is acknowledged unwritten
            gate.set()
            done = await asyncio.gather(first, *rest, return_exceptions=True)
            return done, writer
        finally:
            gate.set()
            db.close()

    done, writer = asyncio.run(main())
    assert done[:10] == [None] * 10
    assert isinstance(done[10], StoreError) and "move 5" in str(done[10])
    # The first move went alone (nothing else was waiting); the nine others and the bad one came while it
    # was written, went in one transaction, which the bad one undid, and then one by one.
    assert writer.moves == 10
    assert [store.game(g).moves for g in games] == [1] * 10


def test_a_lone_move_goes_at_once(store):
    (game,) = new_games(store, 1)

    async def main() -> int:
        db = Database(store, wait=10.0)
        writer = MoveWriter(db, store)
        try:
            for seq in range(3):
                await writer.write(move(game, seq))
            return writer.commits
        finally:
            db.close()

    assert asyncio.run(main()) == 3
    assert store.game(game).moves == 3
    assert store.actions_of(game) == [(0, 1), (1, 1), (0, 1)]
