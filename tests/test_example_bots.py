"""The example bot in another language: examples/greedy_bot.js (Node.js) speaks protocol version 2,
plays whole matches through `koikoi arena` with no illegal move, and plays greedily as documented."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from koikoi.botproto import BotProcess
from koikoi.cards import card
from koikoi.cli import main
from koikoi.match import Match, ScriptedChance
from koikoi.observation import positions
from koikoi.records import read_record, replay
from koikoi.rules import preset

ROOT = Path(__file__).resolve().parent.parent
GREEDY_JS = ROOT / "examples" / "greedy_bot.js"
NODE = shutil.which("node")

pytestmark = pytest.mark.skipif(NODE is None, reason="examples/greedy_bot.js needs Node.js (node)")


def arena_json(capsys, players: str, rules: str, games: int, seed: int, records: Path) -> dict:
    code = main(
        ["arena", "--rules", rules, "--games", str(games), "--seed", str(seed), "--players", players]
        + ["--jobs", "1", "--records", str(records), "--json"]
    )
    assert code == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(("opponent", "rules"), [("random", "cardavia"), ("easy", "nintendo")])
def test_the_javascript_bot_plays_through_the_arena(capsys, tmp_path, opponent, rules):
    games = 4 if rules == "nintendo" else 10
    out = arena_json(capsys, f"cmd:node {GREEDY_JS},{opponent}", rules, games, 3, tmp_path)
    bot = out["players"][0]
    assert out["forfeits"] == [] and bot["forfeits"] == 0  # never an illegal, late or malformed answer
    assert bot["name"] == "greedy_bot.js" and bot["games"] == games and bot["decisions"] > 5 * games
    records = sorted(tmp_path.glob("game-*.json"))
    assert len(records) == games and all(replay(read_record(f)).is_over() for f in records)


def test_the_javascript_bot_beats_random_play(capsys, tmp_path):
    # Deterministic: the bot has no randomness and the random player is seeded by the arena.
    out = arena_json(capsys, f"cmd:node {GREEDY_JS},random", "cardavia", 20, 8, tmp_path)
    greedy, rand = out["players"]
    assert greedy["wins"] > 2 * rand["wins"]


# A deal under 4-4 with player 0 dealing (cards 5-8 and 17-20 to the dealer, 9-12 and 21-24 to the
# table): the dealer can take cherry-plain-1 with cherry-curtain or pine-crane with pine-plain-2, worth
# 21 points either way; cherry-curtain was dealt first, though it comes after pine-plain-2 in the sorted hand.
DEAL = {
    "non-dealer": ["plum-plain-1", "iris-plain-2", "willow-swallow", "wisteria-ribbon"],
    "dealer": ["maple-plain-1", "cherry-curtain", "paulownia-plain-1", "clover-plain-1"],
    "table": ["pine-crane", "plum-warbler", "cherry-plain-1", "iris-plain-1"],
    "non-dealer 2": ["peony-blue", "clover-plain-2", "pampas-plain-1", "maple-plain-2"],
    "dealer 2": ["willow-ribbon", "pine-plain-2", "peony-plain-1", "chrysanthemum-plain-1"],
    "table 2": ["iris-bridge", "wisteria-cuckoo", "clover-boar", "pampas-moon"],
}


def test_equal_captures_go_to_the_card_dealt_first():
    named = [card(n) for part in DEAL.values() for n in part]
    deck = named + [c for c in range(48) if c not in named]
    m = Match(preset("cardavia"), chance=ScriptedChance([deck], [0]))  # card 0 drawn: player 0 deals
    assert m.hand.dealer == 0 and m.current_player == 0
    obs = m.observation(0)
    assert positions(m, 0).hand.index(card("cherry-curtain")) < positions(m, 0).hand.index(card("pine-plain-2"))
    bot = BotProcess(f"node {GREEDY_JS}")
    try:
        bot.start()
        assert bot.hello(0, m.rules, 5.0, game=1, bot_seed=1) == {
            "name": "greedy_bot.js",
            "author": "the koikoi developers",
        }
        assert bot.version == 2
        assert bot.choose(obs, 1, 5.0, match=m) == card("cherry-curtain")
    finally:
        bot.close()


def ask(messages: list[dict]) -> list[dict]:
    """The bot's answers to ``messages`` (hello first), over its stdin and stdout."""
    text = "".join(json.dumps(msg) + "\n" for msg in [*messages, {"type": "quit"}])
    done = subprocess.run([NODE, str(GREEDY_JS)], input=text, capture_output=True, text=True, timeout=30, check=True)
    return [json.loads(line) for line in done.stdout.splitlines()]


def choose(legal: list[str], table: list[str], hand: list[str]) -> dict:
    observation = {
        "rules": preset("cardavia").to_dict(),
        "table": table,
        "legal_actions": [{"id": i, "name": name} for i, name in enumerate(legal)],
        "positions": {"hand": hand, "table": table, "piles": [[], []]},
    }
    return {"type": "choose", "decision": 1, "time_limit": 5.0, "observation": observation}


def test_greedy_choices():
    hello = {"type": "hello", "protocol": "koikoi-bot", "version": 1, "seat": 0, "game": 1, "rules": {}}
    answers = ask(
        [
            hello,
            # A yaku scored: stop rather than koi-koi.
            choose(["koikoi", "stop"], [], []),
            # The drawn card matched two: take the more valuable (a ribbon over a plain card).
            choose(["take maple-plain-1", "take maple-blue"], ["maple-plain-1", "maple-blue"], []),
            # Nothing to take: give the table the least valuable card (a plain card, not a bright).
            choose(["play pine-crane", "play iris-plain-1"], ["cherry-plain-1"], ["pine-crane", "iris-plain-1"]),
            # Two plain cards to give away: the one dealt first goes.
            choose(["play iris-plain-1", "play pine-plain-1"], ["cherry-plain-1"], ["pine-plain-1", "iris-plain-1"]),
            # A play with a choice of two table cards: the bright.
            choose(
                ["play pampas-plain-1 take pampas-moon", "play pampas-plain-1 take pampas-plain-2"],
                ["pampas-plain-2", "pampas-moon"],
                ["pampas-plain-1"],
            ),
            # All three of a month at once beat a single bright... when they are worth more: 10 + 5 + 1 + 1.
            choose(
                ["play willow-lightning", "play pine-plain-1"],
                ["willow-swallow", "willow-ribbon", "willow-rainman", "pine-crane"],
                ["pine-plain-1", "willow-lightning"],
            ),
            {"type": "hand_end"},
            # A dealt hand bonus is declared.
            choose(["play pine-plain-1", "declare"], ["pine-crane"], ["pine-plain-1"]),
        ]
    )
    assert answers[0]["version"] == 2 and answers[0]["name"] == "greedy_bot.js"
    assert [a["action"] for a in answers[1:]] == [1, 1, 1, 1, 0, 0, 1]
