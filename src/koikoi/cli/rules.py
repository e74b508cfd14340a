"""``koikoi rules``: the presets, one rule set's options and yaku values, or the whole rules reference."""

from __future__ import annotations

import argparse
import json
import sys

from ..rules import PRESET_DESCRIPTIONS, PRESET_NAMES, PRESETS, YAKU_OPTIONS, option_help
from .common import CliError, Commands, new_console, rules_from


def _yaku_label(option: str) -> str:
    return option.replace("_", "-")


def cmd_rules(args: argparse.Namespace) -> int:
    if args.markdown:
        if args.preset or args.rules_file or args.set or args.json:
            raise CliError(
                "--markdown prints the whole rules reference (docs/rules.md) and takes no preset, "
                "--rules-file, --set or --json"
            )
        from ..rulesdoc import rules_markdown

        sys.stdout.write(rules_markdown())
        return 0
    if not args.preset and not args.rules_file:
        if args.set:
            raise CliError("--set needs a preset: koikoi rules PRESET --set option=value")
        if args.json:
            print(json.dumps({name: PRESET_DESCRIPTIONS.get(name, "") for name in PRESET_NAMES}))
            return 0
        from rich.table import Table

        console = new_console()
        table = Table(box=None, show_header=False, padding=(0, 2))
        table.add_column(style="bold cyan", no_wrap=True)
        table.add_column()
        for name in PRESET_NAMES:
            table.add_row(name, PRESET_DESCRIPTIONS.get(name, ""))
        console.print("Presets (show one with 'koikoi rules PRESET'):")
        console.print(table)
        return 0
    args.rules = args.preset
    rules = rules_from(args)
    data = rules.to_dict()
    yaku = {_yaku_label(o): data[o] for o in YAKU_OPTIONS}
    if args.json:
        print(json.dumps({"name": rules.name, "options": data, "yaku": yaku}))
        return 0
    from rich.table import Table
    from rich.text import Text

    console = new_console()
    title = f"Rule set {rules.name}"
    base = PRESETS.get(rules.name)
    changed = {k for k, v in data.items() if base is not None and getattr(base, k) != v}
    if changed:
        title += f" (changed: {', '.join(sorted(changed))})"
    console.print(Text(title, style="bold"))
    if rules.name in PRESET_DESCRIPTIONS:
        console.print(PRESET_DESCRIPTIONS[rules.name])
    ytable = Table(title="Yaku", title_justify="left", box=None, header_style="bold", padding=(0, 2))
    ytable.add_column("yaku")
    ytable.add_column("points", justify="right")
    ytable.add_column("cards")
    docs = {name: meaning for name, _, meaning in option_help()}
    for option in YAKU_OPTIONS:
        pts = data[option]
        ytable.add_row(_yaku_label(option), str(pts) if pts else Text("off", style="dim"), docs[option])
    bonus = data["hand_bonus"]
    ytable.add_row("teshi / kuttsuki", str(bonus) if bonus else Text("off", style="dim"), docs["hand_bonus"])
    console.print(ytable)
    otable = Table(title="Options", title_justify="left", box=None, header_style="bold", padding=(0, 2))
    otable.add_column("option", no_wrap=True)
    otable.add_column("value", no_wrap=True)
    otable.add_column("meaning (allowed values)")
    for name, allowed, meaning in option_help():
        if name in YAKU_OPTIONS:
            continue
        value = data[name]
        shown = str(value).lower() if isinstance(value, bool) else str(value)
        style = "bold yellow" if name in changed else "cyan"
        otable.add_row(name, Text(shown, style=style), Text(meaning).append(f" ({allowed})", style="dim"))
    console.print(otable)
    return 0


def add_parser(sub: Commands) -> None:
    p = sub.add_parser(
        "rules",
        help="list the presets, or show every option and yaku value of one",
        description="Without PRESET: list the presets. With PRESET: every option with its "
        "value and meaning, and every yaku value.",
    )
    p.add_argument("preset", nargs="?", metavar="PRESET", help=f"one of {', '.join(PRESET_NAMES)}")
    p.add_argument("--rules-file", metavar="FILE", help="show a TOML rules file instead of a preset")
    p.add_argument(
        "--set", action="append", default=[], metavar="OPTION=VALUE", help="change one rule option (repeatable)"
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument(
        "--markdown",
        action="store_true",
        help="print the whole rules reference as Markdown, the text of docs/rules.md "
        "(koikoi rules --markdown > docs/rules.md)",
    )
    p.set_defaults(func=cmd_rules, rules=None)
