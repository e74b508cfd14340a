"""Terminal rendering with Rich. Everything here reads :class:`~koikoi.observation.Observation` objects
(plus the public rule set), never a match, so nothing hidden can leak onto the screen.

>>> from koikoi.match import Match
>>> from koikoi.rules import preset
>>> m = Match(preset("cardavia"), seed=3)
>>> text = to_text(render_game(m.observation(0), preset("cardavia")))
>>> "Table" in text and "Your hand" in text
True
>>> plain_card(0)
'pine-crane (1)'
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

from rich.columns import Columns
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from .actions import DECLARE, KOIKOI, STOP
from .cards import (
    ANIMALS,
    BLUE_RIBBONS,
    BRIGHTS,
    CARD_NAMES,
    CHAFF,
    CURTAIN,
    INO_SHIKA_CHO,
    MONTH_MASKS,
    MONTH_NAMES,
    MOON,
    POETRY_RIBBONS,
    RIBBONS,
    SAKE_CUP,
    Kind,
    iter_cards,
    kind_of,
    month_of,
)
from .hand import HandResult
from .observation import Observation
from .rules import RuleSet
from .yaku import yaku_progress  # the rules' facts; re-exported for those who import it from here

__all__ = [
    "KIND_STYLES",
    "card_text",
    "plain_card",
    "cards_text",
    "yaku_progress",
    "render_game",
    "render_result",
    "render_outcome",
    "render_hand_end",
    "render_events",
    "HintRow",
    "render_hint",
    "short_card",
    "yaku_cards",
    "LEGEND",
    "describe_event",
    "to_text",
    "make_console",
]

# Colour by kind, and a symbol too so the kind reads without colour.
KIND_STYLES = {
    Kind.BRIGHT: ("bold yellow", "★"),
    Kind.ANIMAL: ("bold magenta", "◆"),
    Kind.RIBBON: ("bold red", "▬"),
    Kind.CHAFF: ("green", "·"),
}
_BLUE_RIBBON_STYLE = "bold blue"
_LIGHTNING = 1 << 43  # willow-lightning: the one chaff card with a name of its own
KIND_LABELS = {Kind.BRIGHT: "brights", Kind.ANIMAL: "animals", Kind.RIBBON: "ribbons", Kind.CHAFF: "chaff"}


# What the symbols and numbers on the screen mean (the terminal game's help shows it).
LEGEND = (
    "★ bright  ◆ animal  ▬ ribbon (blue ▬: aotan)  · plain (chaff)\n"
    "(n) after a card is its month:  "
    + "  ".join(f"{m} {name}" for m, name in enumerate(MONTH_NAMES, 1) if m <= 5)
    + "\n"
    + "  ".join(f"{m} {name}" for m, name in enumerate(MONTH_NAMES, 1) if m > 5)
)
MARK = "✓"  # before a card of the winning yaku in the final piles


def _style(c: int) -> tuple[str, str]:
    style, symbol = KIND_STYLES[kind_of(c)]
    if (1 << c) & BLUE_RIBBONS:
        style = _BLUE_RIBBON_STYLE
    return style, symbol


def plain_card(c: int) -> str:
    """A card's name with its month, without colour."""
    return f"{CARD_NAMES[c]} ({month_of(c)})"


def card_text(c: int, *, month: bool = True) -> Text:
    """A card as coloured text: kind symbol, name and month."""
    style, symbol = _style(c)
    t = Text(f"{symbol} ", style=style)
    t.append(CARD_NAMES[c], style=style)
    if month:
        t.append(f" ({month_of(c)})", style="dim")
    return t


def cards_text(cards: Sequence[int] | int, *, sep: str = "  ", month: bool = True) -> Text:
    """Several cards on one line (a sequence of ids or a mask)."""
    ids = list(iter_cards(cards)) if isinstance(cards, int) else list(cards)
    if not ids:
        return Text("—", style="dim")
    return Text(sep).join(card_text(c, month=month) for c in ids)


def cards_block(cards: Sequence[int] | int, *, month: bool = True) -> RenderableType:
    """Several cards laid out in columns, never breaking a card across lines."""
    ids = list(iter_cards(cards)) if isinstance(cards, int) else list(cards)
    if not ids:
        return Text("—", style="dim")
    return Columns([card_text(c, month=month) for c in ids], padding=(0, 2))


def _progress_text(pile: int, rules: RuleSet | None, month: int) -> Text:
    if rules is None:
        return Text("")
    items = yaku_progress(pile, rules, month)
    if not items:
        return Text("—", style="dim")
    parts = []
    for name, have, need in items:
        close = need - have == 1
        parts.append(Text(f"{name} {have}/{need}", style="bold cyan" if close else "cyan"))
    return Text("  ").join(parts)


def _yaku_line(obs: Observation, p: int) -> Text:
    """A player's yaku and points, what stopping would score now, and their koi-koi calls."""
    yaku = obs.yaku[p]
    if yaku:
        t = Text("  ").join(Text(f"{n} {pts}", style="bold green") for n, pts in yaku)
        base, mult = obs.yaku_scores[p], obs.multipliers[p]
        total = base * mult
        t.append(
            f"  = {base}" + (f" × {mult} = {total}" if mult != 1 else "") + (" point" if total == 1 else " points"),
            style="bold green",
        )
    else:
        t = Text("none yet", style="dim")
    calls = obs.koikoi_calls[p]
    if calls:
        t.append(f"   koi-koi called {calls}×" if calls > 1 else "   koi-koi called", style="bold red")
    return t


def _chaff_text(mask: int) -> Text:
    """Chaff by month (``pine ×2``): plain cards differ only in their month."""
    parts = []
    for m in range(12):
        got = mask & MONTH_MASKS[m]
        n = got.bit_count()
        if n:
            label = MONTH_NAMES[m] if got & ~_LIGHTNING else ""
            if got & _LIGHTNING:
                label = "willow-lightning"
            parts.append(Text(label + (f" ×{n}" if n > 1 else ""), style=KIND_STYLES[Kind.CHAFF][0]))
    return Text(", ").join(parts)


def _pile_table(pile: int) -> RenderableType:
    """A capture pile grouped by kind, one row per kind."""
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True)
    grid.add_column(justify="right", no_wrap=True)
    grid.add_column()
    for kind, mask in ((Kind.BRIGHT, BRIGHTS), (Kind.ANIMAL, ANIMALS), (Kind.RIBBON, RIBBONS), (Kind.CHAFF, CHAFF)):
        got = pile & mask
        style, symbol = KIND_STYLES[kind]
        if not got:
            continue  # only the kinds captured so far, to keep the screen short
        shown: RenderableType
        if kind is Kind.CHAFF:
            shown = _chaff_text(got)
        else:
            shown = cards_block(got, month=False)
        grid.add_row(Text(f"{symbol} {KIND_LABELS[kind]}", style=style), Text(str(got.bit_count()), style=style), shown)
    if not pile:
        return Text("nothing yet", style="dim")
    return grid


# -- events ---------------------------------------------------------------------------------------


def describe_event(event: tuple[int, str, int, int], names: Sequence[str]) -> Text:
    """One public event (player, kind, card, captured mask) as a line of text."""
    player, kind, c, captured = event
    t = Text()
    t.append(f"{names[player]} ", style="bold")
    if kind in ("play", "draw"):
        t.append("played " if kind == "play" else "drew ")
        t.append_text(card_text(c))
        took = captured & ~(1 << c)
        if took:
            t.append(" → took ")
            t.append_text(cards_text(took, sep=", "))
        else:
            t.append(" → stays on the table", style="dim")
    elif kind == "koikoi":
        t.append("called KOI-KOI!", style="bold red")
    elif kind == "stop":
        t.append("stopped (agari)", style="bold green")
    elif kind == "declare":
        t.append("declared the dealt hand (teshi/kuttsuki)", style="bold green")
    else:
        t.append(kind)
    return t


def render_events(events: Sequence[tuple[int, str, int, int]], names: Sequence[str]) -> RenderableType:
    return Text("\n").join(describe_event(e, names) for e in events) if events else Text("—", style="dim")


# -- the game screen ------------------------------------------------------------------------------


def _header(obs: Observation, rules: RuleSet | None, names: Sequence[str]) -> Text:
    t = Text()
    t.append("Koi-Koi", style="bold")
    t.append(f" · {obs.rules} rules", style="cyan")
    if rules is not None and rules.hands:
        t.append(f" · hand {obs.hand_number} of {rules.hands}")
    else:
        t.append(f" · hand {obs.hand_number}")
    if rules is not None and rules.target_score:
        t.append(f" · first to {rules.target_score}")
    t.append(f" · month {obs.month} ({MONTH_NAMES[obs.month - 1]})")
    return t


def _title(obs: Observation, p: int, names: Sequence[str], hand_count: int | None) -> Text:
    t = Text(names[p], style="bold")
    t.append(" · ")
    t.append(f"{obs.scores[p]} point{'' if obs.scores[p] == 1 else 's'}", style="bold yellow")
    if hand_count is not None:
        t.append(f" · {hand_count} cards in hand", style="dim")
    if obs.dealer == p:
        t.append(" · dealer (oya)", style="dim")
    return t


def _player_block(
    obs: Observation, p: int, rules: RuleSet | None, names: Sequence[str], hand: Sequence[int] | None = None
) -> RenderableType:
    """One player's public state: capture pile by kind, yaku, progress, koi-koi calls (and hand, if shown)."""
    grid = Table.grid(padding=(0, 1))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column()
    if hand is not None:
        grid.add_row("hand", cards_block(hand))
    grid.add_row("captured", _pile_table(obs.pile_masks[p]))
    grid.add_row("yaku", _yaku_line(obs, p))
    if rules is not None:
        grid.add_row("progress", _progress_text(obs.pile_masks[p], rules, obs.month))
    return grid


def _hand_choices(obs: Observation) -> Table:
    """The player's hand, numbered, with what each card would capture."""
    grid = Table.grid(padding=(0, 2))
    grid.add_column(justify="right", style="bold cyan", no_wrap=True)
    grid.add_column(no_wrap=True)
    grid.add_column()
    for i, c in enumerate(obs.hand, 1):
        matches = obs.table_mask & MONTH_MASKS[c >> 2]
        n = matches.bit_count()
        if n == 0:
            what = Text("stays on the table", style="dim")
        elif n == 2:
            what = Text("takes one of ", style="")
            what.append_text(cards_text(matches, sep=" or ", month=False))
        else:
            what = Text("takes ")
            what.append_text(cards_text(matches, sep=", ", month=False))
        grid.add_row(str(i), card_text(c), what)
    return grid


def render_game(
    obs: Observation,
    rules: RuleSet | None = None,
    names: Sequence[str] = ("You", "Computer"),
    *,
    recent: Sequence[tuple[int, str, int, int]] = (),
    other: Observation | None = None,
    show_results: bool = True,
    compact: bool = False,
    progress: bool = True,
    fold: bool = False,
    hint: Sequence[HintRow] | None = None,
) -> RenderableType:
    """The whole table as ``obs.player`` sees it.

    ``recent`` are events to show as what just happened. ``other`` is the opponent's observation, given
    only by a replay, where both hands are shown. ``compact`` lays it out without boxes, a line or two
    per player and the hand in two columns, for a small terminal (80×24); there ``progress=False`` leaves out
    the yaku still to be made, for a smaller one still, and ``fold=True`` folds each player into one line
    (the pile as a count by kind). ``hint`` (the computer's ranking of the player's choices, see
    :func:`render_hint`) is shown in place of the hand, whose numbers it keeps.
    """
    if compact:
        return _compact_game(obs, rules, names, recent, progress=progress, fold=fold, hint=hint)
    me, opp = obs.player, 1 - obs.player
    parts: list[RenderableType] = [_header(obs, rules, names)]
    if show_results and obs.results:
        parts.append(_results_line(obs.results, names))
    # The opponent: only the number of cards in hand, unless this is a replay.
    opp_title = _title(obs, opp, names, obs.opponent_hand_count)
    parts.append(
        Panel(
            _player_block(obs, opp, rules, names, other.hand if other is not None else None),
            title=opp_title,
            title_align="left",
            border_style="magenta",
        )
    )
    table_parts: list[RenderableType] = [cards_block(obs.table)]
    table_title = Text("Table", style="bold")
    table_title.append(f" · {obs.stock_count} cards in the stock", style="dim")
    if obs.drawn_card is not None:
        drawn = Text("drawn from the stock: ", style="bold")
        drawn.append_text(card_text(obs.drawn_card))
        table_parts.append(drawn)
    parts.append(Panel(Group(*table_parts), title=table_title, title_align="left", border_style="white"))
    my_title = _title(obs, me, names, None)
    parts.append(
        Panel(
            _player_block(obs, me, rules, names, obs.hand if other is not None else None),
            title=my_title,
            title_align="left",
            border_style="cyan",
        )
    )
    if recent:
        parts.append(Panel(render_events(recent, names), title="Last moves", title_align="left", border_style="dim"))
    if other is None and hint is not None:
        parts.append(Panel(render_hint(hint), title=_hint_title(hint), title_align="left", border_style="cyan"))
    elif other is None and obs.hand:
        hand_title = Text("Your hand", style="bold")
        if obs.to_move and obs.phase == "play":
            hand_title.append(" · type a number to play a card", style="dim")
        parts.append(Panel(_hand_choices(obs), title=hand_title, title_align="left", border_style="cyan"))
    return Group(*parts)


def _section(label: str, extra: str = "") -> Text:
    t = Text(f"─ {label}", style="bold")
    if extra:
        t.append(f" · {extra}", style="dim")
    return t


def _pile_kinds(pile: int, mark: int = 0) -> list[tuple[Text, Text]]:
    """A capture pile by kind: (symbol and count, the cards) for each kind held; chaff by month.

    Cards in ``mark`` (the winning yaku's) carry :data:`MARK`."""
    rows = []
    for kind, mask in ((Kind.BRIGHT, BRIGHTS), (Kind.ANIMAL, ANIMALS), (Kind.RIBBON, RIBBONS), (Kind.CHAFF, CHAFF)):
        got = pile & mask
        if not got:
            continue
        style, symbol = KIND_STYLES[kind]
        t = Text()
        if kind is Kind.CHAFF:
            for i, m in enumerate(m for m in range(12) if got & MONTH_MASKS[m]):
                month_cards = got & MONTH_MASKS[m]
                if i:
                    t.append(", ")
                label = "willow-lightning" if month_cards & _LIGHTNING else MONTH_NAMES[m]
                n = month_cards.bit_count()
                if month_cards & mark:
                    t.append(MARK, style="bold green")
                t.append(label + (f" ×{n}" if n > 1 else ""), style=style + (" reverse" if month_cards & mark else ""))
        else:
            for i, c in enumerate(iter_cards(got)):
                if i:
                    t.append(" ")
                c_style = _style(c)[0]
                if (1 << c) & mark:
                    t.append(MARK, style="bold green")
                    c_style += " reverse"
                t.append(CARD_NAMES[c], style=c_style)
        rows.append((Text(f"{symbol}{got.bit_count()}", style=style), t))
    return rows


def _compact_pile(pile: int, mark: int = 0) -> Text:
    """A capture pile on one line (wrapping if it must)."""
    parts = [label + Text(" ") + cards for label, cards in _pile_kinds(pile, mark)]
    if not parts:
        return Text("nothing captured", style="dim")
    return Text("   ").join(parts)


def _pile_rows(pile: int, mark: int = 0) -> RenderableType:
    """A capture pile, a row per kind, each row's cards wrapping beside its kind."""
    kinds = _pile_kinds(pile, mark)
    if not kinds:
        return Text("  nothing captured", style="dim")
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True)
    grid.add_column(justify="right", no_wrap=True)
    grid.add_column()
    for label, cards in kinds:
        grid.add_row("", label, cards)
    return grid


class _Flow:
    """Pieces of text side by side, a new line only between two pieces (a card name or ``kasu 7/10`` is never
    broken in two unless it alone is wider than the screen)."""

    def __init__(self, pieces: Sequence[Text], sep: str = "   ", indent: str = "") -> None:
        self.pieces, self.sep, self.indent = [x for x in pieces if x.plain], sep, indent

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        line, empty = Text(self.indent), True
        for piece in self.pieces:
            if not empty and line.cell_len + len(self.sep) + piece.cell_len > options.max_width:
                yield line
                line, empty = Text(self.indent), True
            if not empty:
                line.append(self.sep)
            line.append_text(piece)
            empty = False
        if not empty:
            yield line


def _compact_player(
    obs: Observation,
    p: int,
    rules: RuleSet | None,
    names: Sequence[str],
    hand_count: int | None,
    progress: bool,
    fold: bool = False,
) -> _Flow | Group:
    """A player in two or three lines: name, points, yaku, calls; then the pile by kind and the progress.
    Folded (``fold``), in one: the pile as its count of each kind (★2 ◆3 ▬1 ·7) after the name."""
    title = _title(obs, p, names, None)
    if hand_count is not None:
        title.append(f" · {hand_count} in hand", style="dim")
    yaku = Text("  ").join(Text(f"{n} {pts}", style="bold green") for n, pts in obs.yaku[p])
    if obs.yaku[p]:
        total = obs.yaku_scores[p] * obs.multipliers[p]
        yaku.append(f" = {total} point{'' if total == 1 else 's'}", style="bold green")
    calls = obs.koikoi_calls[p]
    called = Text(f"koi-koi called {calls}×" if calls > 1 else "koi-koi called" if calls else "", style="bold red")
    pile = obs.pile_masks[p]
    if fold:
        counts = Text(" ").join(label for label, _cards in _pile_kinds(pile)) or Text("nothing captured", style="dim")
        return _Flow([title, counts, yaku, called], sep=" · ")
    kinds = [label + Text(" ") + cards for label, cards in _pile_kinds(pile)] or [Text("nothing captured", style="dim")]
    to_make = [
        Text(f"{name} {have}/{need}", style="bold cyan" if need - have == 1 else "cyan")
        for name, have, need in (yaku_progress(pile, rules, obs.month) if rules is not None and progress else [])
    ]
    return Group(_Flow([title, yaku, called], sep=" · "), _Flow(kinds + to_make, indent="  "))


def _compact_hand(obs: Observation) -> Table:
    """The hand, numbered, in two columns: each card and the table cards of its month it would take."""
    grid = Table.grid(padding=(0, 3))
    grid.add_column(no_wrap=True)
    grid.add_column(no_wrap=True)
    cells = []
    for i, c in enumerate(obs.hand, 1):
        t = Text(f"{i} ", style="bold cyan")
        t.append_text(card_text(c))
        matches = obs.table_mask & MONTH_MASKS[c >> 2]
        if matches:
            # Same month, so the name after the month tells the table card (pine-crane: crane).
            t.append(" → ", style="dim")
            t.append_text(
                Text("/").join(Text(CARD_NAMES[m].split("-", 1)[1], style=_style(m)[0]) for m in iter_cards(matches))
            )
        cells.append(t)
    half = (len(cells) + 1) // 2
    for row in range(half):
        right = cells[row + half] if row + half < len(cells) else Text("")
        grid.add_row(cells[row], right)
    return grid


def _compact_game(
    obs: Observation,
    rules: RuleSet | None,
    names: Sequence[str],
    recent: Sequence[tuple[int, str, int, int]],
    *,
    progress: bool = True,
    fold: bool = False,
    hint: Sequence[HintRow] | None = None,
) -> RenderableType:
    me, opp = obs.player, 1 - obs.player
    parts: list[RenderableType] = [_header(obs, rules, names)]
    parts.append(_compact_player(obs, opp, rules, names, obs.opponent_hand_count, progress, fold))
    parts.append(_section("Table", f"{obs.stock_count} cards in the stock"))
    parts.append(cards_block(obs.table))
    if obs.drawn_card is not None:
        drawn = Text("drawn from the stock: ", style="bold")
        drawn.append_text(card_text(obs.drawn_card))
        parts.append(drawn)
    parts.append(_compact_player(obs, me, rules, names, None, progress, fold))
    if recent:
        parts.append(_section("Last moves"))
        parts.append(render_events(recent, names))
    if hint is not None:
        parts.append(_hint_title(hint, section=True))
        parts.append(render_hint(hint))
    elif obs.hand:
        what = "type a number to play a card" if obs.to_move and obs.phase == "play" else ""
        parts.append(_section("Your hand", what))
        parts.append(_compact_hand(obs))
    return Group(*parts)


# -- a hint ---------------------------------------------------------------------------------------

HintRow = tuple[str, int | None, int, Sequence[int], float | None, float | None]
"""One choice of a hint: (the key that makes it: a hand card's number, k, s or d; the card played, None for
a decision; the action; the table cards it takes; the points to expect from the hand; the chance of
winning the match, None where the search does not weigh it)."""

_DECISION_WORDS = {KOIKOI: "koi-koi, play on", STOP: "stop and score", DECLARE: "declare the dealt hand"}


def _hint_title(rows: Sequence[HintRow], *, section: bool = False) -> Text:
    extra = "best first: points to expect from this hand"
    if any(win is not None for *_, win in rows):
        extra += ", chance to win the match"
    return _section("Hint", extra) if section else Text("Hint", style="bold") + Text(f" · {extra}", style="dim")


def short_card(c: int) -> str:
    """A card's name without its month, for a card shown beside another of its month (pine-crane: crane).

    >>> short_card(0), short_card(43)
    ('crane', 'lightning')
    """
    return CARD_NAMES[c].split("-", 1)[1]


def render_hint(rows: Sequence[HintRow]) -> RenderableType:
    """A hint, one line per choice and short enough for 80 columns: the key to type, the card and the table
    cards it takes (by their short names: they are of its month), the points, the chance to win."""
    with_win = any(win is not None for *_, win in rows)  # none where the search does not weigh the match
    grid = Table.grid(padding=(0, 2))
    grid.add_column(justify="right", style="bold cyan", no_wrap=True)
    grid.add_column()
    for _ in range(2 if with_win else 1):
        grid.add_column(justify="right", no_wrap=True)
    for key, c, action, takes, points, win in rows:
        if c is None:
            move = Text(_DECISION_WORDS.get(action, str(action)))
        else:
            move = card_text(c)
            if takes:
                move.append(" → ", style="dim")
                move.append_text(Text("/").join(Text(short_card(t), style=_style(t)[0]) for t in takes))
        figures = ["" if points is None else f"{points:+.1f} pts"] + (
            ["" if win is None else f"{win:.0%} win"] if with_win else []
        )
        grid.add_row(key, move, *figures)
    return grid


# -- the end of a hand ----------------------------------------------------------------------------

_BRIGHT_YAKU = ("goko", "shiko", "ame-shiko", "sanko")


def yaku_cards(names: Sequence[str], pile: int, rules: RuleSet, month: int | None = None) -> int:
    """The cards of ``pile`` that make the yaku called ``names`` (as scored for that pile).

    >>> from koikoi.cards import cards_mask
    >>> from koikoi.rules import preset
    >>> pile = cards_mask(["pine-crane", "cherry-curtain", "pampas-moon", "pine-plain-1", "maple-deer"])
    >>> [CARD_NAMES[c] for c in iter_cards(yaku_cards(["sanko"], pile, preset("traditional")))]
    ['pine-crane', 'cherry-curtain', 'pampas-moon']
    """
    # The sake cup counts as an animal and as chaff ("both"), as an animal only, or ("either") where it
    # makes a yaku: as chaff when kasu needs it, else as an animal.
    chaff_sake = rules.sake_cup == "both" or (
        rules.sake_cup == "either" and "kasu" in names and (pile & CHAFF).bit_count() < 10
    )
    animal_sake = rules.sake_cup != "either" or not chaff_sake
    masks = {
        "ino-shika-cho": ANIMALS if rules.ino_shika_cho_plus else INO_SHIKA_CHO,
        "akatan-aotan": RIBBONS if rules.akatan_plus or rules.aotan_plus else POETRY_RIBBONS | BLUE_RIBBONS,
        "akatan": RIBBONS if rules.akatan_plus else POETRY_RIBBONS,
        "aotan": RIBBONS if rules.aotan_plus else BLUE_RIBBONS,
        "tane": ANIMALS if animal_sake else ANIMALS & ~SAKE_CUP,
        "tanzaku": RIBBONS,
        "kasu": CHAFF | SAKE_CUP if chaff_sake else CHAFF,
        "tsukimi-zake": SAKE_CUP | MOON,
        "hanami-zake": SAKE_CUP | CURTAIN,
        "tsukifuda": MONTH_MASKS[month - 1] if month else 0,
    }
    out = 0
    for name in names:
        out |= BRIGHTS if name in _BRIGHT_YAKU else masks.get(name, 0)  # dealt-hand and dealer bonuses: no pile
    return pile & out


def render_hand_end(
    result: HandResult,
    number: int,
    events: Sequence[tuple[int, str, int, int]],
    names: Sequence[str],
    rules: RuleSet,
    month: int,
    *,
    recent: Sequence[tuple[int, str, int, int]] | None = None,
    player: int = 0,
    compact: bool = False,
) -> RenderableType:
    """How hand ``number`` ended: the last moves, both final capture piles with the cards of the winning
    yaku marked, then the result box. ``events`` are all the hand's public events (the piles are
    built from them), ``recent`` the ones to show as the last moves (by default all)."""
    piles = [0, 0]
    for p, kind, _c, captured in events:
        if kind in ("play", "draw"):
            piles[p] |= captured
    winner = result.winner
    yaku_names = [y.name for y in result.yaku]
    mark = yaku_cards(yaku_names, piles[winner], rules, month) if winner is not None else 0
    head = Text(f"Hand {number} is over", style="bold")
    head.append(f" · month {month} ({MONTH_NAMES[month - 1]})", style="dim")
    parts: list[RenderableType] = [head]
    shown = list(events) if recent is None else list(recent)
    if shown:
        parts.append(_section("Last moves"))
        parts.append(render_events(shown, names))
    for p in (1 - player, player):
        title = Text(f"─ {names[p]} · captured", style="bold")
        if p == winner and mark:
            title.append(f" ({MARK} the cards of the yaku)", style="dim")
        parts.append(title)
        if compact:
            line = Text("  ")
            line.append_text(_compact_pile(piles[p], mark if p == winner else 0))
            parts.append(line)
        else:
            parts.append(_pile_rows(piles[p], mark if p == winner else 0))
    if winner is not None and mark and not compact:
        grid = Table.grid(padding=(0, 1))
        grid.add_column(no_wrap=True)
        grid.add_column()
        for y in result.yaku:
            cards = yaku_cards([y.name], piles[winner], rules, month)
            if cards:
                grid.add_row(Text(f"  {y.name} {y.points}:", style="bold green"), _compact_pile(cards))
        parts.append(grid)
    parts.append(render_result(result, number, names))
    return Group(*parts)


def _results_line(results: Sequence[HandResult], names: Sequence[str]) -> Text:
    r = results[-1]
    t = Text(f"Last hand ({len(results)}): ", style="bold")
    t.append_text(_result_summary(r, names))
    return t


def _result_summary(r: HandResult, names: Sequence[str], *, deltas: bool = True) -> Text:
    t = Text()
    yaku = ", ".join(f"{y.name} {y.points}" for y in r.yaku)
    worth = f"{r.base} × {r.multiplier} = {r.points}" if r.multiplier != 1 else f"{r.points}"
    unit = "point" if r.points == 1 else "points"
    if r.reason == "stop" and r.winner is not None:
        t.append(f"{names[r.winner]} stopped", style="bold green")
        t.append(f" with {yaku}: {worth} {unit}")
    elif r.reason == "hand_bonus" and r.winner is not None:
        t.append(f"{names[r.winner]} won the hand bonus", style="bold green")
        t.append(f" ({yaku}): {worth} {unit}")
    elif r.reason == "exhausted":
        t.append("stock exhausted", style="bold")
        if r.winner is not None:
            t.append(f": {names[r.winner]} scores {worth} {unit}" + (f" ({yaku})" if yaku else ""))
        elif any(r.deltas):
            t.append(": " + ", ".join(f"{names[p]} {d:+d}" for p, d in enumerate(r.deltas)))
        else:
            t.append(": a draw, no points")
    else:
        t.append(r.reason)
    if deltas and any(r.deltas) and (r.reason != "exhausted" or r.winner is not None):
        t.append("  (" + ", ".join(f"{names[p]} {d:+d}" for p, d in enumerate(r.deltas)) + ")", style="dim")
    return t


def render_result(r: HandResult, number: int, names: Sequence[str]) -> RenderableType:
    """A finished hand."""
    return Panel(_result_summary(r, names), title=f"Hand {number} over", title_align="left", border_style="green")


# How a match ended before its last hand (koikoi.terminal.ENDINGS), in the words of the web's replay page.
_EARLY_ENDINGS = {
    "time": "{loser} ran out of time: {winner} {wins} the match.",
    "resign": "{loser} resigned: {winner} {wins} the match.",
    "claim": "{loser} left the table; {winner} claimed the match.",
    "abort": "The game was aborted: no result.",
    "closed": "Nobody moved for 30 days: the game was closed.",
    "expired": "Nobody took the invitation: the game expired.",
}


def render_outcome(
    obs: Observation, names: Sequence[str], *, ending: tuple[str, int | None] | None = None
) -> RenderableType:
    """The end of the match: every hand's result and the winner. ``ending`` (how, and who won) is a match
    that ended before its last hand (on time, resigned, ...): it decides, whatever the score."""
    table = Table(title="Results", title_justify="left", show_lines=False)
    table.add_column("hand", justify="right")
    table.add_column("result")
    table.add_column(names[0], justify="right")
    table.add_column(names[1], justify="right")
    for i, r in enumerate(obs.results, 1):
        table.add_row(str(i), _result_summary(r, names, deltas=False), f"{r.deltas[0]:+d}", f"{r.deltas[1]:+d}")
    table.add_row(
        "",
        Text("final score" if ending is None else "score when it ended", style="bold"),
        Text(str(obs.scores[0]), style="bold"),
        Text(str(obs.scores[1]), style="bold"),
    )
    if ending is not None:
        how, won = ending
        if won is None:
            text = _EARLY_ENDINGS[how] if how in ("abort", "closed", "expired") else f"The match ended early ({how})."
            verdict = Text(text, style="bold yellow")
        else:
            winner = names[won]
            text = _EARLY_ENDINGS.get(how, "The match ended early: {winner} {wins} it.")
            verdict = Text(
                text.format(loser=names[1 - won], winner=winner, wins="win" if winner == "You" else "wins"),
                style="bold green" if won == obs.player else "bold red",
            )
    elif obs.match_winner is None:
        verdict = Text("The match is drawn.", style="bold yellow")
    else:
        winner = names[obs.match_winner]
        verdict = Text(
            f"{winner} win the match!" if winner == "You" else f"{winner} wins the match!",
            style="bold green" if obs.match_winner == obs.player else "bold red",
        )
    return Group(table, verdict)


# -- output helpers -------------------------------------------------------------------------------


def make_console(file: Any = None, *, color: bool | None = None, width: int | None = None) -> Console:
    """A console for the CLI: colour on a terminal (or when told), plain otherwise."""
    kwargs: dict[str, Any] = {"file": file, "highlight": False, "emoji": False}
    if color is not None:
        kwargs["force_terminal"] = color
        kwargs["no_color"] = not color
    if width is not None:
        kwargs["width"] = width
    return Console(**kwargs)


def to_text(renderable: RenderableType, *, width: int = 100, color: bool = False) -> str:
    """Render to a string (plain by default), for tests and logs."""
    console = Console(
        width=width, record=True, force_terminal=color, no_color=not color, highlight=False, emoji=False, file=_Null()
    )
    console.print(renderable)
    return console.export_text(styles=color)


class _Null(io.StringIO):
    """A file that keeps nothing: the console records what it prints, and that record is all we want."""

    def write(self, _s: str) -> int:
        return 0

    def flush(self) -> None:
        pass
