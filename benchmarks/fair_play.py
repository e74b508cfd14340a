"""Fair play, tried as two accounts of one person would (issue 43): can a rating be farmed?

Starts ``koikoi serve`` (``web_attack.Server``: loopback, a fresh SQLite database) with the per-address
sign-up and seek limits raised for the run, so that what is measured is the rule, not the rate limit.
Signs up two accounts, Ann and Bob, and plays ``--games`` rated lobby games between them (Ann seeks,
Bob accepts), each ended by Bob resigning, in one of two ways:

- ``resign-at-once``: Bob resigns before anyone has moved (a rating moves only for a game both played);
- ``one-move-each``: each makes a first move, then Bob resigns (at most a few rated games between the
  same two accounts count in 24 hours).

Prints, every ``--every`` games and at the end, Ann's short-match rating, its deviation, the rated games
it counts and the seconds since the first game; then what each ending was. A seek or accept the server
refuses (Bob waiting after aborting often) ends the run there, and says why.

    python3 benchmarks/fair_play.py --games 30 --way resign-at-once
    python3 benchmarks/fair_play.py --games 30 --way one-move-each
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import httpx
from websockets.sync.client import connect

sys.path.insert(0, str(Path(__file__).parent))
from web_attack import Server  # noqa: E402  (a sibling script: the same way of starting the server)

PASSWORD = "farm the ladder twice"
SEEK = {"rules": {"preset": "nintendo"}, "hands": 1, "rated": True, "clock": "20+120"}
WAYS = ("resign-at-once", "one-move-each")


def reply_of(ws, kind: str, timeout: float = 30) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        msg = json.loads(ws.recv(timeout=max(0.1, deadline - time.monotonic())))
        if msg["type"] == kind:
            return msg
    raise SystemExit(f"no {kind} came")


def rating(c: httpx.Client, name: str) -> str:
    r = c.get(f"/api/players/{name}").json()["ratings"].get("short")
    if r is None:
        return "no rated game counted"
    return f"{r['rating']:7.1f} ± {r['rd']:5.1f}, {r['games']} rated games counted"


def play(s: Server, ann: httpx.Client, bob: httpx.Client, way: str) -> str:
    """One rated game between Ann and Bob, ended by Bob's resignation: how it ended."""
    r = ann.post("/api/lobby/seeks", json=SEEK)
    if r.status_code != 201:
        return f"seek refused ({r.status_code} {r.json()['error']}: {r.json()['message']})"
    taken = bob.post(f"/api/lobby/seeks/{r.json()['seek_id']}/accept", json={})
    if taken.status_code != 201:
        ann.delete(f"/api/lobby/seeks/{r.json()['seek_id']}")
        return f"accept refused ({taken.status_code} {taken.json()['error']}: {taken.json()['message']})"
    bob_token, game_id = taken.json()["token"], taken.json()["game_id"]
    ann_token = next(g["token"] for g in ann.get("/api/games").json()["games"] if g["game_id"] == game_id)
    if way == "one-move-each":  # each makes a first move (over HTTP: the table read, then the action)
        moved: set[str] = set()
        while len(moved) < 2:
            for c, token in ((ann, ann_token), (bob, bob_token)):
                v = c.get(f"/api/seat/{token}").json()
                if v["to_move"]:
                    action = 288 if 288 in v["legal"] else v["legal"][0]  # koi-koi: a stop could end the match
                    c.post(f"/api/seat/{token}/action", json={"action": action, "seq": v["seq"]}).raise_for_status()
                    moved.add(token)
    with connect(f"{s.ws}/ws/{bob_token}") as wb:
        wb.send(json.dumps({"type": "resign"}))
        return str(reply_of(wb, "ended")["ending"])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=30, help="rated games between the two accounts (default 30)")
    ap.add_argument("--way", choices=WAYS, default=WAYS[0], help="how each game ends (default %(default)s)")
    ap.add_argument("--every", type=int, default=10, help="print the rating every so many games (default 10)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        s = Server(
            Path(tmp),
            "signups_per_hour=100",
            "seeks_per_minute=100000",
            "games_per_minute=100000",
            "http_actions_per_second=100000",
        )
        try:
            with httpx.Client(base_url=s.url, timeout=30) as ann, httpx.Client(base_url=s.url, timeout=30) as bob:
                for c, name in ((ann, "Ann"), (bob, "Bob")):
                    r = c.post("/api/account/signup", json={"name": name, "password": PASSWORD})
                    if r.status_code != 201:
                        raise SystemExit(f"sign-up refused: {r.text}")
                endings: Counter[str] = Counter()
                start = time.monotonic()
                print(f"{args.games} rated games between Ann and Bob, each ended {args.way}:")
                for n in range(1, args.games + 1):
                    ending = play(s, ann, bob, args.way)
                    endings[ending] += 1
                    if "refused" in ending:  # the server holds the farm back: no game is made
                        print(f"  game {n}: {ending}; the farm stops here")
                    if n % args.every == 0 or n == args.games or "refused" in ending:
                        seconds = time.monotonic() - start
                        print(f"  after {n:4d} games ({seconds:6.1f} s): Ann {rating(ann, 'Ann')}")
                    if "refused" in ending:
                        break
                print("endings: " + ", ".join(f"{k} {v}" for k, v in sorted(endings.items())))
        finally:
            s.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
