"""Reading and replaying long game records: prints, per record size, the seconds to read and replay it.

    python3 benchmarks/record_replay.py [--hands 125,250,500,1000] [--seed S]

Each record is a real match played with random legal actions under the traditional rules with
``hands=0`` and an out-of-reach ``target_score``, saved when its N-th hand is dealt (so it holds N - 1
finished hands and the next deal: a valid record of a match in progress; N is at most
``MAX_RECORD_HANDS``, 1,000). For each it prints the size of the
JSON, the time of ``GameRecord.from_json`` + ``replay`` and of ``GameRecord.from_json`` +
``koikoi.web.views.replay_frames`` (what the web replay page does), and the time per hand: a figure
per hand that stays flat as the records grow means the work is linear in the record's size.
"""

from __future__ import annotations

import argparse
import random
import time

from koikoi.match import Match
from koikoi.records import GameRecord, replay
from koikoi.rules import preset


def long_record(hands: int, seed: int) -> str:
    """The JSON of a valid record of ``hands`` hands: ``hands - 1`` finished ones and the next deal."""
    rules = preset("traditional").replace(hands=0, target_score=1_000_000, name="custom")
    m = Match(rules, seed=seed)
    rng = random.Random(seed)
    while len(m.results) < hands - 1:
        legal = m.legal_actions()
        m.apply_action(legal[int(rng.random() * len(legal))])
    return GameRecord.from_match(m, ["A", "B"]).to_json()


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hands", default="125,250,500,1000", help="record sizes in hands, comma-separated")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    from koikoi.web.views import replay_frames

    print(f"{'hands':>6} {'KB':>8} {'read+replay s':>14} {'ms/hand':>8} {'read+frames s':>14} {'ms/hand':>8}")
    for n in (int(x) for x in args.hands.split(",")):
        text = long_record(n, args.seed)
        t1 = timed(lambda text=text: replay(GameRecord.from_json(text)))
        t2 = timed(lambda text=text: replay_frames(GameRecord.from_json(text)))
        print(
            f"{n:>6} {len(text.encode()) / 1024:>8.0f} {t1:>14.2f} {1000 * t1 / n:>8.2f} {t2:>14.2f} "
            f"{1000 * t2 / n:>8.2f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
