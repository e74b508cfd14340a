"""How strong the computer players are: full matches between levels, seats alternating.

    python3 benchmarks/strength.py --pairs hard:easy,hard:medium,medium:easy,easy:random \
        --matches N --rules nintendo --seed S --jobs 2 [--set hard.playouts=800]
    python3 benchmarks/strength.py --table --markdown --jobs 2      # the table of docs/ai.md
    python3 benchmarks/strength.py --table --write docs/ai.md --jobs 2 --yardstick ../shared/yardstick

``--table`` plays the pairings of docs/ai.md's strength table (:data:`TABLE`), each with its own number
of matches (``--matches`` caps them, for a quick look), and ``--markdown`` prints the results as that
table's rows; ``--write FILE`` (with ``--table``) puts those rows, and the command that made them, into
FILE between the lines ``<!-- strength-table:start -->`` and ``<!-- strength-table:end -->``, leaving the
rest of the file as it is. ``--hands N`` plays shorter matches than the preset's, to screen ideas cheaply.

A player may be a named variant of a level, LEVEL/NAME, with its own options: ``--pairs hard/a:hard/b
--set hard/a.noise=1 --set hard/b.noise=3`` plays two differently tuned hard players against each other.
Options are spelled as in ``koikoi arena`` (koikoi.playerspec), in brackets too:
``--pairs "hard[playouts=800;time_limit=none]:easy"``; an unknown option or a bad value stops the run
before any game.

For each pairing A:B, matches come in pairs on the same deals: matches 2j and 2j+1 are both dealt from
seed S+j, with A in seat 0 and then in seat 1 (duplicate play: the luck of the deal cancels out of
the pair); each agent gets its own seed derived from S, i and its seat. Prints per
pairing: A's wins/draws/losses, A's win rate with a 95% Wilson interval, A's mean point difference per
hand, and the mean and worst CPU seconds per decision of each level (the process's CPU time, so that
other programs on a busy machine do not inflate it; decisions with one legal action are
answered without thought and left out of the timing).

Seconds differ between machines (the reference machine ran the yardstick three times as fast as a later
one). ``--yardstick DIR`` (``../shared/yardstick``) reads the pure-Python yardstick's hands per CPU
second before and after the games and prints each level's mean time per decision also in *yardstick
hands* (seconds times that rate): the same figure on a fast or a slow machine.

``--record FILE`` keeps every finished match in FILE, one JSON line each, as it ends; run the same command
again and the matches already there are not played again, so a run of hours survives being stopped
(Ctrl-C, a closed session) and is finished by later runs. A match counts only for the same pairing,
rules, seed, match number, options and match length, played by the same code (:data:`PLAYING_MODULES`:
a change to the rules engine or a level starts afresh); lines of other settings stay in the file,
unused. Each run's yardstick readings are kept too, and the time in yardstick hands uses all of them.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import multiprocessing
import sys
import time
from collections import defaultdict
from pathlib import Path

from koikoi.arena import ArenaError, make_builtin
from koikoi.match import Match
from koikoi.playerspec import PlayerSpec, SpecError, parse_assignment, parse_spec
from koikoi.rules import preset

# The strength table of docs/ai.md: (A, B, matches). The levels a step apart, each level against the
# frozen hard-v1 or easy yardstick, and expert against hard; the cheap pairings get more matches.
TABLE = (
    ("easy", "random", 1000),
    ("medium", "easy", 1000),
    ("hard-v1", "easy", 200),
    ("hard", "easy", 400),
    ("hard", "medium", 200),
    ("hard", "hard-v1", 400),
    ("expert", "hard", 100),
)
# In the table, hard-v1 plays without its wall-clock cap (as the old table's hard did), so a busy machine
# cannot weaken it; the other levels' caps run on CPU time and are safety nets (docs/ai.md).
TABLE_OPTIONS = {"hard-v1": {"time_limit": None}}
# CPU seconds of each yardstick reading (one before the games, one after).
YARDSTICK_SECONDS = 3.0


def _yardstick(directory: str):
    """A function giving the yardstick's pure-Python hands per CPU second, from ``directory/yardstick.py``."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from hands_per_second import load_yardstick, yardstick_rate

    hands_per_second = load_yardstick(Path(directory))
    if hands_per_second is None:
        raise SystemExit(f"strength.py: no yardstick.py in {directory} (--yardstick names its folder)")
    return lambda: yardstick_rate(hands_per_second, YARDSTICK_SECONDS)


def _options(settings: list[str], players: list[str]) -> dict[str, dict[str, object]]:
    """``--set PLAYER.OPTION=VALUE`` by player (a level or LEVEL/NAME), read as the arena reads
    ``--player-set`` (koikoi.playerspec: none, true, false, a number or a word)."""
    out: dict[str, dict[str, object]] = defaultdict(dict)
    labels = sorted({parse_spec(p).name for p in players})
    for s in settings:
        try:
            label, opt, value = parse_assignment(s, labels)
        except SpecError as e:
            raise SystemExit(f"--set {e}") from None
        out[label][opt] = value
    return out


def _agent(name: str, seed: int, options: dict[str, dict[str, object]], rules):
    """The player ``name`` (``hard``, ``hard/a`` or ``hard[playouts=800]``) with its options: those of
    ``--set`` for its name, then those in its brackets; checked as the arena checks them."""
    spec = parse_spec(name)
    level = spec.name.split("/")[0]
    merged = {**options.get(spec.name, {}), **spec.options}
    return make_builtin(str(PlayerSpec(level, merged)), seed, rules)


def run_match(rules, deal_seed: int, agents) -> tuple[Match, list[list[float]]]:
    """One match dealt from ``deal_seed`` between ``agents`` (by seat), with each seat's CPU seconds per
    decision that had a choice."""
    m = Match(rules, seed=deal_seed)
    times: list[list[float]] = [[], []]
    while not m.is_over():
        p = m.current_player
        obs = m.observation(p)
        t = time.process_time()
        action = agents[p].choose(obs)
        if len(obs.legal_actions) > 1:
            times[p].append(time.process_time() - t)
        m.apply_action(action)
    return m, times


def play_all(play, tasks: list, jobs: int) -> list:
    """``play`` of every task, on ``jobs`` processes (one match a task, in the order of the tasks)."""
    if jobs > 1:
        with multiprocessing.Pool(jobs) as pool:
            return pool.map(play, tasks, chunksize=1)
    return list(map(play, tasks))


def _play_task(play_and_task):
    play, task = play_and_task
    return task, play(task)


def play_each(play, tasks: list, jobs: int):
    """``(task, play(task))`` for every task as each match ends (in any order), on ``jobs`` processes."""
    if jobs > 1:
        with multiprocessing.Pool(jobs) as pool:
            yield from pool.imap_unordered(_play_task, [(play, t) for t in tasks], chunksize=1)
    else:
        for task in tasks:
            yield task, play(task)


def agent_seed(seed: int, i: int, seat: int) -> int:
    """The seed of the agent in ``seat`` in match ``i`` of a run with seed ``seed``."""
    return seed * 7919 + i * 31 + seat


def play_match(task):
    a_name, b_name, rules_name, seed, i, options, hands = task
    rules = preset(rules_name)
    if hands:
        rules = rules.with_settings([f"hands={hands}"])
    a_seat = i % 2
    names = [b_name, b_name]
    names[a_seat] = a_name
    agents = [_agent(names[p], agent_seed(seed, i, p), options, rules) for p in (0, 1)]
    m, times = run_match(rules, seed + i // 2, agents)
    s = m.outcome.scores
    diff = s[a_seat] - s[1 - a_seat]
    hands = len(m.results)
    capped = [getattr(agents[p], "capped", 0) for p in (a_seat, 1 - a_seat)]  # decisions the time cap cut
    outcome = 0 if diff > 0 else 1 if diff == 0 else 2
    return a_name, b_name, outcome, diff, hands, times[a_seat], times[1 - a_seat], capped


# The modules whose code decides how a match between built-in players goes: the rules engine and the levels.
PLAYING_MODULES = (
    "cards", "rules", "yaku", "actions", "hand", "match", "observation", "batch", "players", "playerspec", "lineup",
    "arena/__init__", "arena/players", "arena/game", "arena/stats", "arena/run",
    "ai/__init__", "ai/base", "ai/batchplay", "ai/fastplay", "ai/hard_v1", "ai/heuristic", "ai/search",
    "ai/registry",
)  # fmt: skip


def code_fingerprint() -> str:
    """A digest of the playing modules' source: a recorded match counts only for the code that played it."""
    import koikoi

    root = Path(koikoi.__file__).resolve().parent
    digest = hashlib.sha256()
    for name in PLAYING_MODULES:
        digest.update(name.encode() + b"\0" + (root / f"{name}.py").read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def _task_key(task, code: str) -> str:
    """What makes a recorded match the same match as ``task``: everything that decides how it is played."""
    a_name, b_name, rules_name, seed, i, options, hands = task
    used = {name: options.get(name, {}) for name in sorted({parse_spec(a_name).name, parse_spec(b_name).name})}
    return json.dumps([a_name, b_name, rules_name, seed, i, used, hands, code], sort_keys=True, default=repr)


class Record:
    """``--record FILE``: the matches a run has finished, one JSON line each, and its yardstick readings.

    A run that was stopped may have left half a line at the end; it is dropped (that match is played
    again). Any other line that is not one of ours stops the run before any game, naming the line.
    """

    def __init__(self, path: Path):
        self.path = path
        self.matches: dict[str, tuple] = {}
        self.rates: list[float] = []
        keep: list[str] = []
        try:
            text = path.read_text(encoding="utf-8") if path.exists() else ""
        except (OSError, UnicodeDecodeError) as e:
            raise SystemExit(f"strength.py: cannot read --record {path}: {e}") from None
        lines = text.split("\n")
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
                if "yardstick" in entry:
                    rate = float(entry["yardstick"])
                    if not math.isfinite(rate) or rate <= 0:
                        raise ValueError("a yardstick rate is a positive number")
                    self.rates.append(rate)
                else:
                    r = entry["result"]
                    result = (
                        str(r[0]),
                        str(r[1]),
                        int(r[2]),
                        int(r[3]),
                        int(r[4]),
                        [float(t) for t in r[5]],
                        [float(t) for t in r[6]],
                        [int(c) for c in r[7]],
                    )
                    if result[2] not in (0, 1, 2):
                        raise ValueError("an outcome is 0, 1 or 2")
                    self.matches[str(entry["key"])] = result
            except (ValueError, KeyError, IndexError, TypeError, AttributeError) as e:
                if number == len(lines) and not text.endswith("\n"):
                    break  # half a line, written when the run was stopped: that match is played again
                raise SystemExit(f"strength.py: --record {path}, line {number} is not a recorded match: {e}") from None
            keep.append(line)
        if text and (keep != [line for line in lines if line.strip()]):
            path.write_text("".join(f"{line}\n" for line in keep), encoding="utf-8")

    def add(self, entry: dict) -> None:
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")
            f.flush()


TABLE_START = "<!-- strength-table:start -->"
TABLE_END = "<!-- strength-table:end -->"


def _replace_table(path: Path, table: str) -> None:
    """Put ``table`` between the strength-table markers of ``path`` (an empty table only checks that the
    file has them, once each and in order)."""
    text = path.read_text(encoding="utf-8")
    if text.count(TABLE_START) != 1 or text.count(TABLE_END) != 1 or text.index(TABLE_START) > text.index(TABLE_END):
        raise ValueError(f"{path} needs the lines {TABLE_START} and {TABLE_END}, once each and in that order")
    if not table:
        return
    head, rest = text.split(TABLE_START)
    tail = rest.split(TABLE_END)[1]
    path.write_text(f"{head}{TABLE_START}\n{table}\n{TABLE_END}{tail}", encoding="utf-8")


def wilson(wins: float, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", default="hard:easy,hard:medium,medium:easy,easy:random")
    ap.add_argument("--matches", type=int, default=None, help="matches per pairing (default 20; with --table, a cap)")
    ap.add_argument("--table", action="store_true", help="the pairings of the strength table in docs/ai.md")
    ap.add_argument("--markdown", action="store_true", help="print the results as rows of docs/ai.md's table")
    ap.add_argument(
        "--write", metavar="FILE", help="with --table: write the table into FILE between its strength-table markers"
    )
    ap.add_argument("--hands", type=int, default=0, help="hands per match (default: the preset's)")
    ap.add_argument("--rules", default="nintendo")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="LEVEL.OPTION=VALUE",
        help="an agent option, e.g. hard.playouts=800 or hard.time_limit=none",
    )
    ap.add_argument(
        "--record",
        metavar="FILE",
        help="keep each finished match in FILE (JSON lines); a later run with the same settings plays only the rest",
    )
    ap.add_argument(
        "--yardstick",
        metavar="DIR",
        help="the yardstick's folder (../shared/yardstick): time per decision also in yardstick hands",
    )
    args = ap.parse_args(argv)
    if args.write:
        if not args.table:
            ap.error("--write goes with --table: it writes the strength table")
        args.markdown = True
        try:
            _replace_table(Path(args.write), "")  # a file without the markers stops here, before any game
        except (OSError, ValueError) as e:
            raise SystemExit(f"strength.py: {e}") from None
    if args.matches is not None and (args.matches % 2 or args.matches < 2):
        ap.error("--matches must be even and at least 2: each deal is played twice, with the seats swapped")
    if args.table:
        counts = {(a, b): n if args.matches is None else min(n, args.matches) for a, b, n in TABLE}
    else:
        n = 20 if args.matches is None else args.matches
        counts = {(a, b): n for a, b in (tuple(p.split(":")) for p in args.pairs.split(",") if p)}
    pairs = list(counts)
    options = _options(args.set, [p for pair in pairs for p in pair])
    if args.table:
        for level, opts in TABLE_OPTIONS.items():
            options[level] = {**opts, **options.get(level, {})}
    for name in {p for pair in pairs for p in pair}:  # an unknown player or option stops here, before any game
        try:
            _agent(name, 0, options, preset(args.rules))
        except (ArenaError, SpecError) as e:
            raise SystemExit(f"strength.py: {e}") from None
    tasks = [(a, b, args.rules, args.seed, i, options, args.hands) for a, b in pairs for i in range(counts[a, b])]
    record = Record(Path(args.record)) if args.record else None
    results = []
    if record is not None:
        code = code_fingerprint()
        keys = {_task_key(t, code): t for t in tasks}
        results = [record.matches[k] for k in keys if k in record.matches]
        tasks = [t for k, t in keys.items() if k not in record.matches]
        print(f"--record {args.record}: {len(results)} matches already played, {len(tasks)} to play", file=sys.stderr)
    yardstick = _yardstick(args.yardstick) if args.yardstick and tasks else None
    rates = list(record.rates) if record is not None else []

    def read_yardstick() -> None:
        if yardstick:
            rates.append(yardstick())
            if record is not None:
                record.add({"yardstick": rates[-1]})

    read_yardstick()
    start = time.perf_counter()
    if record is None:
        results = play_all(play_match, tasks, args.jobs)
    else:
        for task, result in play_each(play_match, tasks, args.jobs):
            record.add({"key": _task_key(task, code), "result": list(result)})
            results.append(result)
    elapsed = time.perf_counter() - start
    read_yardstick()
    rate = sum(rates) / len(rates) if rates else None  # yardstick hands per CPU second

    def in_hands(seconds: float, unit: str = "") -> str:
        return "" if rate is None else f" ({seconds * rate:,.0f}{unit})"

    lines = []
    timing: dict[str, list[float]] = defaultdict(list)
    for a, b in pairs:
        rows = [r for r in results if r[0] == a and r[1] == b]
        wdl = [sum(1 for r in rows if r[2] == k) for k in range(3)]
        n = len(rows)
        score = wdl[0] + 0.5 * wdl[1]
        lo, hi = wilson(score, n)
        hands = sum(r[4] for r in rows)
        per_hand = sum(r[3] for r in rows) / hands if hands else 0.0
        ta = [t for r in rows for t in r[5]]
        tb = [t for r in rows for t in r[6]]
        capped = (sum(r[7][0] for r in rows), sum(r[7][1] for r in rows))
        timing[a.split("/")[0]] += ta
        timing[b.split("/")[0]] += tb
        if args.markdown:
            lines.append(f"| {a} vs {b} | {n:,} | {score / n:.1%} | {lo:.1%}–{hi:.1%} | {per_hand:+.2f} |")
            continue
        print(
            f"{a} vs {b}: {wdl[0]}W {wdl[1]}D {wdl[2]}L of {n}; win rate {score / n:.1%} "
            f"(95% CI {lo:.1%}-{hi:.1%}, draws as half); {per_hand:+.2f} points/hand"
        )
        for name, ts, cut in ((a, ta, capped[0]), (b, tb, capped[1])):
            if ts:
                mean = sum(ts) / len(ts)
                print(
                    f"    {name}: {mean * 1000:.1f} ms mean{in_hands(mean, ' yardstick hands')}, "
                    f"{max(ts) * 1000:.1f} ms worst{in_hands(max(ts))} "
                    f"per decision ({len(ts)} decisions{f'; time cap cut {cut}' if cut else ''})"
                )
    if args.markdown:
        table = [
            "| pairing | matches | win rate | 95% interval | points per hand |",
            "|---|---|---|---|---|",
            *lines,
            "",
            "| level | mean CPU time per decision | worst | decisions |"
            + (" mean, in yardstick hands |" if rate else ""),
            "|---|---|---|---|" + ("---|" if rate else ""),
        ]
        means = {name: sum(ts) / len(ts) for name, ts in timing.items() if ts}
        table += [
            f"| {name} | {mean * 1000:.0f} ms | {max(timing[name]) * 1000:.0f} ms | {len(timing[name]):,} |"
            + (f" {mean * rate:,.0f} |" if rate else "")
            for name, mean in means.items()
        ]
        if rate:
            table += ["", f"The yardstick ran at {rate:,.0f} pure-Python hands per CPU second in the same run."]
        print("\n".join(table))
        if args.write:
            command = "python3 benchmarks/strength.py " + " ".join(argv if argv is not None else sys.argv[1:])
            _replace_table(Path(args.write), "\n".join(["```sh", command, "```", "", *table]))
    print(
        f"({args.rules}{f', {args.hands} hands a match' if args.hands else ''}, "
        f"{', '.join(f'{a}:{b} {n}' for (a, b), n in counts.items())} matches, seed {args.seed}, "
        f"{elapsed:.0f} s)",
        file=sys.stderr,
    )
    if rate is not None and not args.markdown:
        print(f"yardstick: {rate:,.0f} hands per CPU second ({', '.join(f'{r:,.0f}' for r in rates)} before and after)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
