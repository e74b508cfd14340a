"""``koikoi import kkai``: KoiKoi-AI's game records as ours (:mod:`koikoi.kkai`), one record a match,
every move played through the engine under the ``koikoi-japan`` rules."""

from __future__ import annotations

import argparse
from pathlib import Path

from .common import CliError, Commands


def cmd_kkai(args: argparse.Namespace) -> int:
    from ..kkai import KkaiError, convert, kkai_files, read_kkai
    from ..records import write_record
    from ..rules import PRESETS

    if args.rules not in PRESETS:
        raise CliError(f"no rule preset {args.rules!r}; the presets are {', '.join(PRESETS)}")
    rules = PRESETS[args.rules]
    out = Path(args.out) if args.out else None
    if out is None and not args.report:
        raise CliError("say where the records go (--out DIR), or only compare them (--report)")
    done, refused = [], []
    try:
        files = list(kkai_files(args.paths))
    except KkaiError as e:
        raise CliError(str(e)) from None
    for f in files:
        try:
            done.append(convert(read_kkai(f), str(f), rules, strict=not args.report))
        except KkaiError as e:
            refused.append(str(e))
            if not args.report:
                break
    hands = [h for imp in done for h in imp.hands]
    moves = sum(imp.moves for imp in done)
    agree = sum(h.agrees for h in hands)
    finals = [imp.final_agrees for imp in done if imp.final_agrees is not None]
    print(
        f"{len(done)} of {len(files)} records played through the engine under {rules.name}: "
        f"{len(hands)} hands, {moves} half-turns; the points of {agree} of {len(hands)} hands agree, "
        f"and the final scores of {sum(finals)} of {len(finals)} finished matches"
    )
    for line in refused[:20]:
        print(f"refused: {line}")
    if refused and not args.report:
        raise CliError("nothing was written: fix or leave out the record above")
    if out is not None and not refused:
        out.mkdir(parents=True, exist_ok=True)
        for imp in done:
            write_record(imp.record, out / f"{Path(imp.source).stem}.record.json")
        print(f"wrote {len(done)} records to {out}")
    return 1 if refused else 0


def add_parser(sub: Commands) -> None:
    p = sub.add_parser(
        "import",
        help="turn other programs' game records into ours",
        description="Read game records written by other programs and write them as this program's records "
        "(docs/records.md), each move played through the engine.",
    )
    inner = p.add_subparsers(dest="import_format", metavar="FORMAT", required=True)
    k = inner.add_parser(
        "kkai",
        help="KoiKoi-AI's JSON game records",
        description="KoiKoi-AI's JSON records (one match a file; a folder of them): every half-turn is played "
        "through the engine under the koikoi-japan rules and written as one record a match. A record the "
        "engine does not play as written is refused with its file, hand and half-turn, and nothing is "
        "written. --report compares every hand's points instead, and writes nothing.",
    )
    k.add_argument("paths", nargs="+", metavar="FILE_OR_DIR")
    k.add_argument("--out", metavar="DIR", help="the folder to write the records to")
    k.add_argument("--rules", default="koikoi-japan", metavar="PRESET", help="the rule preset (default koikoi-japan)")
    k.add_argument(
        "--report",
        action="store_true",
        help="play every record, count the hands, half-turns and points that agree, and write nothing",
    )
    k.set_defaults(func=cmd_kkai)
