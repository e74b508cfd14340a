"""Rated games update both players' Glicko-2 ratings once, in the transaction that stores the last move
(koikoi.web.store), on SQLite and PostgreSQL: whichever process stores it, and not at all if it fails."""

from __future__ import annotations

import threading

import pytest

from koikoi import glicko2
from koikoi.match import Match
from koikoi.rules import preset
from koikoi.web import store as store_module
from koikoi.web.accountstore import AccountStore
from koikoi.web.store import Store, StoreError

RULES = preset("nintendo").with_settings(["hands=1"])


def two_accounts(store: Store) -> tuple[str, str]:
    accounts = AccountStore(store)
    ids = []
    for name, key in (("Ann", "k" * 43), ("Bob", "j" * 43)):
        ids.append(accounts.create(name, name.lower(), "$argon2id$not-a-real-hash", None, key).id)
    return ids[0], ids[1]


def rated_game(store: Store, a: str, b: str) -> tuple[str, Match]:
    game_id, _tokens, _ = store.create_game(
        rules=RULES.to_dict(),
        seed=7,
        opponent="friend",
        ai_seed=0,
        status="playing",
        seat_specs=[(0, "human", "Ann", f"a:{a}"), (1, "human", "Bob", f"a:{b}")],
    )
    store.make_rated(game_id, "short", a, b)
    return game_id, Match(RULES, seed=7)


def play_to_the_last_move(store: Store, game_id: str, match: Match) -> tuple[int, int]:
    """Store every move but the last; (seat, action) of the last."""
    while True:
        seat, action = match.current_player, match.hand.legal_actions()[-1]
        trial = match.clone()
        trial.apply_action(action)
        if trial.is_over():
            last_seq[game_id] = match_moves(store, game_id)
            return seat, action
        match.apply_action(action)
        store.add_action(
            game_id,
            match_moves(store, game_id),
            seat,
            action,
            status="playing",
            scores=tuple(match.scores),
            computer_game=False,
        )


def match_moves(store: Store, game_id: str) -> int:
    g = store.game(game_id)
    assert g is not None
    return g.moves


def finish(store: Store, game_id: str, match: Match, seat: int, action: int) -> tuple[int, int]:
    """Store the last move, as the move number it had when it was found (a retry stores the same one)."""
    final = match.clone()
    final.apply_action(action)
    scores = (final.scores[0], final.scores[1])
    store.add_action(game_id, last_seq[game_id], seat, action, status="finished", scores=scores, computer_game=False)
    return scores


last_seq: dict[str, int] = {}


def test_a_rated_game_rates_both_players_once(database_url):
    store = Store(database_url)
    try:
        a, b = two_accounts(store)
        game_id, match = rated_game(store, a, b)
        seat, action = play_to_the_last_move(store, game_id, match)
        assert store.rating_of(a, "short") is None  # nothing before the end
        scores = finish(store, game_id, match, seat, action)
        ra, rb = store.rating_of(a, "short"), store.rating_of(b, "short")
        assert ra is not None and rb is not None and ra["games"] == rb["games"] == 1
        score_a = 1.0 if scores[0] > scores[1] else 0.0 if scores[0] < scores[1] else 0.5
        want_a, want_b = glicko2.rate_game(glicko2.new_player(), glicko2.new_player(), score_a, glicko2.LICHESS, 0)
        assert ra["rating"] == pytest.approx(want_a.rating) and rb["rating"] == pytest.approx(want_b.rating)
        assert (ra["wins"], ra["draws"], ra["losses"]) == (rb["losses"], rb["draws"], rb["wins"])
        assert [h["game_id"] for h in store.rating_history_of(a, "short")] == [game_id]
        # The last move stored again (another process, a retry): refused, and nobody rated twice.
        with pytest.raises(StoreError):
            finish(store, game_id, match, seat, action)
        assert store.rating_of(a, "short")["games"] == 1
        assert store.rating_of(a, "long") is None
    finally:
        store.close()


def test_a_rating_that_fails_takes_the_last_move_with_it(database_url, monkeypatch):
    store = Store(database_url)
    try:
        a, b = two_accounts(store)
        game_id, match = rated_game(store, a, b)
        seat, action = play_to_the_last_move(store, game_id, match)
        moves = match_moves(store, game_id)

        def crash(*args, **kwargs):
            raise RuntimeError("the process died here")

        monkeypatch.setattr(store_module, "rate", crash)
        with pytest.raises(RuntimeError):
            finish(store, game_id, match, seat, action)
        g = store.game(game_id)
        assert g is not None and g.moves == moves and g.status == "playing"  # the move is not stored either
        monkeypatch.undo()
        finish(store, game_id, match, seat, action)  # stored again (the player's retry): rated, once
        assert store.rating_of(a, "short")["games"] == 1 and store.rating_of(b, "short")["games"] == 1
    finally:
        store.close()


def test_two_processes_storing_the_last_move_at_once_rate_once(database_url):
    stores = [Store(database_url), Store(database_url)]
    try:
        a, b = two_accounts(stores[0])
        game_id, match = rated_game(stores[0], a, b)
        seat, action = play_to_the_last_move(stores[0], game_id, match)
        outcomes: list[str] = []
        go = threading.Barrier(2)

        def store_it(s: Store) -> None:
            go.wait()
            try:
                finish(s, game_id, match, seat, action)
                outcomes.append("stored")
            except StoreError:
                outcomes.append("conflict")

        threads = [threading.Thread(target=store_it, args=(s,)) for s in stores]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert sorted(outcomes) == ["conflict", "stored"]
        assert stores[0].rating_of(a, "short")["games"] == 1
        assert len(stores[1].rating_history_of(b, "short")) == 1
    finally:
        for s in stores:
            s.close()


def test_only_two_accounts_make_a_rated_game(database_url):
    store = Store(database_url)
    try:
        a, _b = two_accounts(store)
        game_id, _ = rated_game(store, a, _b)
        with pytest.raises(StoreError, match="two different accounts"):
            store.make_rated(game_id, "short", a, a)
    finally:
        store.close()
