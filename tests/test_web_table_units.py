"""The jobs of a table, each unit on its own (koikoi.web.mover, finisher, gameclocks, rematches,
attendance, computer), driven in-process through a real GameService on a real SQLite database: what each
stores, what it changes in memory, and what it tells the seats."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from sqlalchemy import update

from koikoi.web.errors import GameError
from koikoi.web.games import GameService, LiveGame
from koikoi.web.schema import clocks
from koikoi.web.store import Store

RULES = {"preset": "nintendo"}


@pytest.fixture
def store(tmp_path):
    s = Store(str(tmp_path / "games.db"))
    yield s
    s.engine.dispose()


def run(store: Store, body: Callable[[GameService], Awaitable[Any]]) -> Any:
    async def main() -> Any:
        service = GameService(store)
        try:
            return await body(service)
        finally:
            await service.close()

    return asyncio.run(main())


async def friend_game(service: GameService, clock: str | None = None) -> tuple[LiveGame, list[str]]:
    """A game between two people, joined: the game, and the seat tokens by seat."""
    made = await service.create(owner="b:ann", name="Ann", opponent="friend", rules=RULES, clock=clock)
    joined = await service.join(made["invite_token"], owner="b:bob", name="Bob")
    game = await service.load(made["game_id"])
    tokens = [""] * 2
    for s in game.seats:
        tokens[s.seat] = made["token"] if s.owner == "b:ann" else joined["token"]
    return game, tokens


async def move(service: GameService, game: LiveGame, tokens: list[str]) -> dict[str, Any]:
    """The player to move plays their first legal action."""
    seat = game.match.current_player
    return await service.mover.act(tokens[seat], game.match.legal_actions()[0], game.moves)


async def both_move(service: GameService, game: LiveGame, tokens: list[str]) -> None:
    """Moves until each player has made one (a turn may take several moves of one player)."""
    while len(game.movers) < 2:
        await move(service, game, tokens)


# -- the mover ---------------------------------------------------------------------------------------------


def test_the_mover_stores_a_move_before_it_applies_and_tells_it(store):
    heard: list[tuple[int, Any]] = []

    async def body(service: GameService) -> None:
        game, tokens = await friend_game(service)
        for seat in (0, 1):

            async def listen(msg: Any, seat: int = seat) -> None:
                heard.append((seat, msg))

            game.listeners[seat].add(listen)
        mover = game.match.current_player
        ack = await move(service, game, tokens)
        assert ack == {"type": "ack", "seq": 1}
        assert store.game(game.stored.id).moves == 1 and store.actions_of(game.stored.id)[0][0] == mover
        # One text per seat, encoded once, each with that seat's own view (the join's own news, told in
        # the background, may come too: the table before the move).
        assert all(isinstance(msg, str) for _, msg in heard)
        views = [(seat, json.loads(msg)) for seat, msg in heard]
        moved = [(seat, v["state"]["seat"]) for seat, v in views if v["type"] == "state" and v["state"]["seq"] == 1]
        assert sorted(moved) == [(0, 0), (1, 1)]

    run(store, body)


def test_the_mover_changes_nothing_for_a_stale_or_illegal_move(store):
    async def body(service: GameService) -> None:
        game, tokens = await friend_game(service)
        seat = game.match.current_player
        legal = set(game.match.legal_actions())
        illegal = next(a for a in range(200) if a not in legal)
        with pytest.raises(GameError) as e:
            await service.mover.act(tokens[seat], illegal, 0)
        assert e.value.code == "illegal"
        with pytest.raises(GameError) as e:
            await service.mover.act(tokens[seat], min(legal), 5)
        assert e.value.code == "stale"
        with pytest.raises(GameError) as e:
            await service.mover.act(tokens[1 - seat], min(legal), 0)
        assert e.value.code == "not_your_turn"
        assert game.moves == 0 and store.game(game.stored.id).moves == 0

    run(store, body)


# -- the finisher ------------------------------------------------------------------------------------------


def test_the_finisher_makes_a_resignation_before_both_moved_an_abort(store):
    async def body(service: GameService) -> None:
        game, tokens = await friend_game(service)
        await move(service, game, tokens)
        (mover,) = game.movers
        quitter = 1 - mover  # has not moved yet
        assert await service.finisher.leave_game(tokens[quitter], "resign") == {"type": "ended", "ending": "abort"}
        assert (game.status, game.ending, game.winner) == ("finished", "abort", None)
        stored = store.game(game.stored.id)
        assert (stored.status, stored.ending, stored.winner) == ("finished", "abort", None)

    run(store, body)


def test_the_finisher_scores_a_resignation_after_both_moved_and_refuses_a_claim_without_a_clock(store):
    async def body(service: GameService) -> None:
        game, tokens = await friend_game(service)
        await both_move(service, game, tokens)
        with pytest.raises(GameError) as e:
            await service.finisher.claim(tokens[0])
        assert e.value.code == "no_claim"
        assert await service.finisher.leave_game(tokens[0], "resign") == {"type": "ended", "ending": "resign"}
        assert (game.ending, game.winner) == ("resign", 1)

    run(store, body)


# -- the clocks --------------------------------------------------------------------------------------------


def test_the_clocks_arm_a_running_clock_and_flag_the_player_whose_deadline_passed(store):
    async def body(service: GameService) -> None:
        await service.start()
        game, tokens = await friend_game(service, clock="10+60")
        await both_move(service, game, tokens)
        assert game.timer is not None  # armed at the deadline of the player to move
        late = game.match.current_player
        # Their deadline passed (as written in the database, which decides): the flag ends the game.
        with store.engine.begin() as conn:
            conn.execute(update(clocks).where(clocks.c.game_id == game.stored.id).values(deadline=time.time() - 1))
        game.extras_stale = True
        async with game.lock:
            await service.sync(game)
        await service.clocks.on_deadline(game)
        assert (game.status, game.ending, game.winner) == ("finished", "time", 1 - late)
        assert game.timer is None and service.flags == 1

    run(store, body)


def test_the_clocks_leave_an_unclocked_game_unarmed(store):
    async def body(service: GameService) -> None:
        game, tokens = await friend_game(service)
        await move(service, game, tokens)
        service.clocks.arm(game)
        assert game.timer is None

    run(store, body)


# -- rematches ---------------------------------------------------------------------------------------------


def test_a_rematch_offered_and_accepted_swaps_the_seats(store):
    async def body(service: GameService) -> None:
        game, tokens = await friend_game(service)
        await both_move(service, game, tokens)
        await service.finisher.leave_game(tokens[0], "resign")
        assert await service.rematches.offer(tokens[0]) == {"type": "rematch", "token": None}
        accepted = await service.rematches.offer(tokens[1])
        assert accepted["type"] == "rematch" and accepted["token"]
        seat, new = await service.seat_game(accepted["token"])
        assert new.stored.id == game.rematch != game.stored.id
        assert seat.seat == 0  # Bob held seat 1: the seats swap

    run(store, body)


def test_a_rematch_is_offered_only_once_a_match_is_over(store):
    async def body(service: GameService) -> None:
        _game, tokens = await friend_game(service)
        with pytest.raises(GameError) as e:
            await service.rematches.offer(tokens[0])
        assert e.value.code == "no_rematch"

    run(store, body)


# -- attendance --------------------------------------------------------------------------------------------


def test_attendance_is_noted_for_clocked_games_only(store):
    async def body(service: GameService) -> None:
        await service.start()  # a process at a table gives signs of life
        casual, _ = await friend_game(service)
        await service.attendance.arrive(casual.seats[0], casual)
        assert casual.presence is None  # nothing noted: no claim can come in a game without a clock
        clocked, tokens = await friend_game(service, clock="10+60")
        await service.attendance.arrive(clocked.seats[0], clocked)
        assert clocked.presence is not None and clocked.presence[0].here
        await service.attendance.depart(clocked.seats[0], clocked, closed=True)
        assert not clocked.presence[0].here

    run(store, body)


# -- the computer player -----------------------------------------------------------------------------------


def test_the_computer_answers_a_move_and_gives_hints(store):
    async def body(service: GameService) -> None:
        await service.start()
        made = await service.create(owner="b:ann", name="Ann", opponent="easy", rules=RULES)
        game = await service.load(made["game_id"])
        human = next(s.seat for s in game.seats if s.kind == "human")
        if game.match.current_player != human:  # the computer moves first
            service.computer.schedule(game)
            await asyncio.wait_for(game.ai_task, 30)
        hint = await service.computer.hint(made["token"], game.moves)
        assert hint["type"] == "hint" and {c["action"] for c in hint["choices"]} == set(game.match.legal_actions())
        before = game.moves
        await service.mover.act(made["token"], hint["choices"][0]["action"], before)
        if not game.match.is_over() and game.match.current_player != human:
            await asyncio.wait_for(game.ai_task, 30)
        assert game.moves > before + 1 or game.match.current_player == human
        assert store.game(game.stored.id).moves == game.moves

    run(store, body)
