"""docs/rules.md is generated from the code and must match it (koikoi.rulesdoc)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from koikoi.cards import CARD_NAMES, MONTH_NAMES
from koikoi.cli import main
from koikoi.rules import PRESET_DESCRIPTIONS, PRESET_NAMES, PRESETS, YAKU_OPTIONS, RuleSet
from koikoi.rulesdoc import PRESET_SOURCES, REGENERATE, rules_markdown

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "rules.md"


def test_docs_rules_md_is_up_to_date():
    expected = rules_markdown()
    actual = DOC.read_text(encoding="utf-8") if DOC.exists() else ""
    assert actual == expected, (
        f"docs/rules.md is out of date with the code; regenerate it with `{REGENERATE}` "
        "(or `PYTHONPATH=src python3 scripts/rules_doc.py`)"
    )


def test_cli_markdown_prints_the_document(capsys):
    assert main(["rules", "--markdown"]) == 0
    assert capsys.readouterr().out == rules_markdown()


def test_cli_markdown_takes_no_preset(capsys):
    assert main(["rules", "bga", "--markdown"]) == 2
    assert "--markdown" in capsys.readouterr().err


def _table_rows(text: str, first_header: str) -> list[list[str]]:
    """The rows of the Markdown table whose header starts with ``| first_header |``."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {first_header} |"))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]])
    return rows


def test_deck_table_lists_every_card_with_month_and_kind():
    rows = _table_rows(rules_markdown(), "id")
    assert [r[3].strip("`") for r in rows] == list(CARD_NAMES)
    for card_id, row in enumerate(rows):
        assert row[1] == f"{card_id // 4 + 1} {MONTH_NAMES[card_id // 4]}"
        assert row[2] in ("bright", "animal", "ribbon", "chaff")
        assert row[4].startswith("`") and row[4] != "``"  # a romaji alias for every card


def test_yaku_table_has_a_column_per_preset_with_the_points():
    text = rules_markdown()
    header = next(line for line in text.splitlines() if line.startswith("| yaku |"))
    assert header == "| yaku | cards | " + " | ".join(PRESET_NAMES) + " |"
    rows = {r[0]: r[2:] for r in _table_rows(text, "yaku")}
    for option in YAKU_OPTIONS:
        for rs, cell in zip((PRESETS[n] for n in PRESET_NAMES), rows[option.replace("_", "-")]):
            pts = getattr(rs, option)
            if pts == 0 or (option in ("tsukimi_zake", "hanami_zake") and rs.sake_yaku == "off"):
                assert cell == "off"
            else:
                assert cell.split()[0] == str(pts)
    assert "teshi / kuttsuki" in rows


def test_options_tables_cover_every_option_bound_and_preset_value():
    text = rules_markdown()
    options = {r[0].strip("`"): r for r in _table_rows(text, "option")}  # the first "option" table
    values = {r[0].strip("`"): r[1:] for r in _table_rows(text.split("### Values per preset", 1)[1], "option")}
    for f in dataclasses.fields(RuleSet):
        if f.name == "name":
            continue
        assert f.name in options and f.name in values
        if f.metadata.get("maximum") is not None:
            assert f"{f.metadata['minimum']}..{f.metadata['maximum']}" in options[f.name][1]
        for choice in f.metadata.get("choices") or ():
            assert choice in options[f.name][1]
        for name, cell in zip(PRESET_NAMES, values[f.name]):
            v = getattr(PRESETS[name], f.name)
            assert cell.strip("*") == (str(v).lower() if isinstance(v, bool) else str(v))


def test_every_preset_has_a_source():
    text = rules_markdown()
    for name in PRESET_NAMES:
        assert name in PRESET_SOURCES
        assert f"### `{name}`" in text


def test_every_preset_is_described_in_one_line_by_the_rules():
    # The rules own these lines (koikoi.rules), so that the document and the CLI read the same words.
    assert set(PRESET_DESCRIPTIONS) == set(PRESET_NAMES)
    text = rules_markdown()
    for name in PRESET_NAMES:
        assert PRESET_DESCRIPTIONS[name].strip() and "\n" not in PRESET_DESCRIPTIONS[name]
        assert f"In short: {PRESET_DESCRIPTIONS[name]}." in text


def test_users_are_pointed_to_docs_rules_md_not_the_shared_digest():
    # No page names the developers' digest, which a user's clone does not have: docs/rules-notes.md cites
    # the sources by what they are.
    offenders = []
    paths = [
        ROOT / "README.md",
        *(ROOT / "docs").glob("*.md"),
        *(ROOT / "src").rglob("*.py"),
        *(ROOT / "src").rglob("*.html"),
        *(ROOT / "src").rglob("*.json"),
    ]
    for path in paths:
        text = path.read_text(encoding="utf-8")
        if "RULES.md" in text:
            offenders.append(str(path.relative_to(ROOT)))
    assert not offenders, f"these files send readers to RULES.md instead of docs/rules.md: {offenders}"
