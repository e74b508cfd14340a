"""The one list of built-in computer players (koikoi.ai.registry), and the places that offer them."""

from __future__ import annotations

import random

import pytest

from koikoi.ai import AGENT_ALIASES, AGENT_NAMES, EasyAgent, HardV1Agent, make_agent
from koikoi.ai.heuristic import RandomAgent
from koikoi.ai.registry import (
    BUILTINS,
    SURFACES,
    arena_names,
    find,
    lobby_levels,
    make_player,
    offered,
    playable_levels,
)
from koikoi.arena import ArenaError, builtin_names, make_builtin
from koikoi.match import Match
from koikoi.players import GreedyPlayer, RandomPlayer
from koikoi.rules import preset


def test_each_place_offers_its_own_list():
    assert lobby_levels() == ("random", "easy", "medium", "hard", "expert")
    assert playable_levels() == ("random", "greedy", "easy", "medium", "hard", "expert")
    assert offered("arena") == ("random", "easy", "medium", "hard", "expert", "hard-v1")
    # hard-v1 is a frozen yardstick: the arena measures with it, no place offers it as an opponent.
    assert [b.name for b in BUILTINS if "hard-v1" == b.name] == ["hard-v1"]
    assert "hard-v1" not in lobby_levels() + playable_levels()
    assert all(set(b.offered) <= set(SURFACES) and b.offered for b in BUILTINS)
    assert len({b.name for b in BUILTINS}) == len(BUILTINS)
    with pytest.raises(ValueError, match="no place 'shop' offers computer players"):
        offered("shop")


def test_the_old_names_read_the_registry():
    assert AGENT_NAMES == ("random", "easy", "medium", "hard", "expert", "hard-v1")
    assert AGENT_ALIASES == {"greedy": "easy", "normal": "medium", "strong": "hard", "pimc": "hard"}
    # The arena's names, in the order its error message lists them.
    assert builtin_names() == arena_names() == [*AGENT_NAMES, "greedy", "normal", "strong", "pimc"]


def test_greedy_is_the_simple_player_in_koikoi_play_and_the_easy_level_elsewhere():
    rules = preset("nintendo")
    assert type(make_player("greedy", 1, rules, surface="play")) is GreedyPlayer
    assert type(make_player("Greedy ", 1, rules)) is EasyAgent
    assert type(make_agent("greedy", 1)) is EasyAgent
    assert type(make_builtin("greedy", 1, rules)) is EasyAgent
    assert find("pimc").name == find("strong", "lobby").name == "hard"
    assert find("grandmaster") is None


def test_a_name_no_place_offers_anew_is_still_made():
    # A game saved against hard-v1 (koikoi play --resume) plays on against it.
    assert type(make_player("hard-v1", 1, preset("nintendo"), surface="play")) is HardV1Agent
    assert type(make_builtin("hard-v1", 1, preset("nintendo"))) is HardV1Agent
    with pytest.raises(ValueError, match="unknown computer player 'grandmaster'; choose from random, greedy, easy"):
        make_player("grandmaster", surface="play")
    with pytest.raises(ArenaError, match="unknown player 'grandmaster'"):
        make_builtin("grandmaster", 1, preset("nintendo"))


def test_options_reach_the_player_and_are_checked():
    hard = make_player("hard", 3, playouts=40, time_limit=None)
    assert (hard.playouts, hard.time_limit) == (40, None)
    with pytest.raises(TypeError):
        make_player("easy", 3, playouts=40)
    with pytest.raises(ArenaError, match="it takes no options"):
        make_builtin("greedy[x=1]", 1, preset("nintendo"))  # the arena's greedy is easy: no options


def test_koikoi_plays_random_moves_as_it_did_with_the_simple_random_player():
    # koikoi play made "random" with koikoi.players.RandomPlayer; the registry's random is the ai's.
    # Both draw from random.Random(seed), so a game goes the same, move for move.
    for seed in range(3):
        m = Match(preset("cardavia"), seed=seed)
        while not m.is_over():
            n = len(m.actions)
            obs = m.observation(m.current_player)
            a = RandomPlayer(seed * 1009 + n).choose(obs)
            assert make_player("random", seed * 1009 + n, m.rules, surface="play").choose(obs) == a
            assert type(make_player("random", 1, surface="play")) is RandomAgent
            m.apply_action(a)
    rng = random.Random(5)
    assert RandomAgent(5).rng.random() == rng.random()


def test_the_lobby_offers_the_registry_levels(sqlite_server):
    with sqlite_server.client() as c:
        presets = c.get("/api/presets").json()
        assert presets["opponents"] == ["friend", *lobby_levels()]
        assert presets["levels"] == list(lobby_levels())
        r = c.post("/api/games", json={"opponent": "hard-v1"})
        assert r.status_code == 422 and r.json()["error"] == "bad_opponent", r.json()
        assert r.json()["message"].endswith("'opponent' is one of friend, random, easy, medium, hard, expert")
        page = c.get("/").text
        assert 'value="hard-v1"' not in page and 'value="expert"' in page
        assert c.post("/api/games", json={"opponent": "expert"}).status_code == 201
