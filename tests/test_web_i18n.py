"""Every visible string of the web app exists in English and is translated into every other language."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from koikoi.ai import AGENT_NAMES
from koikoi.cards import NUM_CARDS
from koikoi.rules import PRESETS, RuleSet
from koikoi.web.chat import PHRASES
from koikoi.web.i18n import LANGUAGES, Translator, catalog, choose_language, plural_base, plural_categories
from koikoi.web.store import ENDINGS
from koikoi.yaku import YAKU_NAMES

WEB = Path(__file__).resolve().parents[1] / "src" / "koikoi" / "web"
PLACEHOLDER = re.compile(r"\{(\w+)\}")


def raw(lang: str) -> dict[str, str]:
    return json.loads((WEB / "locales" / f"{lang}.json").read_text(encoding="utf-8"))


def keys_in_use() -> set[str]:
    """Every key the pages and scripts name literally, and every key built from the game's own names."""
    found: set[str] = set()
    for path in [*(WEB / "templates").glob("*.html"), *(WEB / "static").glob("*.js")]:
        text = path.read_text(encoding="utf-8")
        # t("a.b") with a whole key; a key ending in "." is a prefix completed at run time (checked below).
        found |= {k for k in re.findall(r"""\bt\(\s*["']([a-z_]+\.[a-z0-9_.\-]*)["']""", text) if not k.endswith(".")}
        # A plural family, tn("a.b", n) in a script or t.plural("a.b", n) in a template, has at least a.b.other.
        found |= {f"{k}.other" for k in re.findall(r"""\b(?:tn|t\.plural)\(\s*["']([a-z_]+\.[a-z0-9_\-]+)["']""", text)}
        families = "error|action|event|decision|hint|summary|status|table|match"
        found |= set(re.findall(rf"""["']((?:{families})\.[a-z_]+)["']""", text))
    found |= {f"card.{c}" for c in range(NUM_CARDS)} | {f"month.{m}" for m in range(1, 13)}
    for y in [*YAKU_NAMES, "oya-ken", "teshi", "kuttsuki", "double-teshi", "brights"]:
        found |= {f"yaku.{y}", f"yakudoc.{y}"}
    for f in dataclasses.fields(RuleSet):
        if f.name != "name":
            found |= {f"opt.{f.name}", f"optdoc.{f.name}"}
            found |= {f"choice.{f.name}.{c}" for c in f.metadata.get("choices") or ()}
    found |= {f"preset.{p}" for p in PRESETS} | {f"presetdoc.{p}" for p in PRESETS}
    found |= {f"level.{a}" for a in [*AGENT_NAMES, "friend"]}
    found |= {f"kind.{k}" for k in ("brights", "animals", "ribbons", "chaff")}
    for kind in ("play", "draw"):
        found |= {f"event.{kind}", f"event.{kind}_took"}
    found |= {"event.koikoi", "event.stop", "event.declare"}
    found |= {f"phrase.{p}" for p in PHRASES}  # the chat's one-click phrases, sent by id
    # Why a match ended ("ending." + reason): the web app's endings, and a match played out (MatchOutcome.reason).
    found |= {f"ending.{e}" for e in (*ENDINGS, "hands", "target", "bankrupt")}
    codes = set()
    for path in WEB.rglob("*.py"):  # the app and its routers (routes/)
        codes |= set(re.findall(r'(?:GameError|ChatError)\(\s*"([a-z_]+)"', path.read_text()))
        codes |= set(re.findall(r'"error": "([a-z_]+)"', path.read_text()))
    found |= {f"error.{c}" for c in codes}
    return found


def test_english_has_every_key_in_use():
    missing = sorted(keys_in_use() - set(raw("en")))
    assert not missing, f"strings without English text: {missing}"


def family(key: str) -> str:
    """The key, or for a plural form (``lobby.hands.few``) its family (``lobby.hands``)."""
    return plural_base(key) or key


@pytest.mark.parametrize("lang", [lang for lang in LANGUAGES if lang != "en"])
def test_every_language_translates_every_string(lang):
    en, own = raw("en"), raw(lang)
    # Plural forms differ by language (see the next test): compare the families.
    assert sorted({family(k) for k in en} - {family(k) for k in own}) == [], f"{lang}: untranslated"
    assert sorted({family(k) for k in own} - {family(k) for k in en}) == [], f"{lang}: keys English does not have"
    for key, text in own.items():
        english = en[key] if plural_base(key) is None else en[f"{plural_base(key)}.other"]
        assert set(PLACEHOLDER.findall(text)) == set(PLACEHOLDER.findall(english)), (lang, key)
        assert text.strip(), (lang, key)
    en = {k: v for k, v in en.items() if k in own}
    # Translated, not copied: most texts differ from the English.
    same = [k for k in en if own[k] == en[k]]
    assert len(same) < len(en) * 0.2, f"{lang}: {len(same)} texts are the same as in English"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_plural_families_have_each_cldr_category_of_the_language(lang):
    """A text with a count is a family ``key.<category>``, exactly the categories CLDR (Babel) gives the language."""
    families: dict[str, set[str]] = {}
    for key in raw(lang):
        if plural_base(key):
            families.setdefault(plural_base(key), set()).add(key.rpartition(".")[2])
    english = {plural_base(k) for k in raw("en")} - {None}
    assert english and set(families) == english, lang
    for base, forms in families.items():
        assert forms == set(plural_categories(lang)), (lang, base, sorted(forms))
        assert base not in raw(lang), f"{lang}: {base} is both a text and a plural family"


@pytest.mark.parametrize(
    ("lang", "counts"),
    [
        ("en", {1: "1 hand", 2: "2 hands", 21: "21 hands"}),
        ("ja", {1: "1局", 12: "12局"}),
        ("ru", {1: "1 раздача", 3: "3 раздачи", 12: "12 раздач", 21: "21 раздача", 22: "22 раздачи"}),
        ("uk", {1: "1 роздача", 3: "3 роздачі", 11: "11 роздач", 21: "21 роздача"}),
        ("vi", {1: "1 ván", 12: "12 ván"}),
    ],
)
def test_plural_forms_follow_babel(lang, counts):
    tr = Translator(lang)
    for n, text in counts.items():
        assert tr.plural("lobby.hands", n, n=n) == text


@pytest.mark.parametrize("lang", LANGUAGES)
def test_option_texts_speak_to_players_not_to_the_code(lang):
    """The lobby's option texts name no option or choice by its internal name (``rain_ruins``,
    ``exhausted_points``) and no preset's value ("(nintendo: 10)"); each choice explained exists."""
    texts = {k: v for k, v in raw(lang).items() if k.split(".")[0] in ("opt", "optdoc", "choice", "choicedoc")}
    names = {f.name for f in dataclasses.fields(RuleSet)} | {
        str(c) for f in dataclasses.fields(RuleSet) for c in f.metadata.get("choices") or ()
    }
    internal = {n for n in names if "_" in n}
    for key, text in texts.items():
        words = set(re.findall(r"[a-z0-9]+(?:_[a-z0-9]+)+", text))
        assert not words & internal, (lang, key, text)
        assert not re.search(rf"\(({'|'.join(map(re.escape, PRESETS))})\s*[:：]", text), (lang, key, text)
    choices = {f.name: set(f.metadata.get("choices") or ()) for f in dataclasses.fields(RuleSet)}
    for key in texts:
        if key.startswith("choicedoc."):
            _, option, choice = key.split(".", 2)
            assert choice in choices.get(option, ()), key
    for option in ("dealer_selection", "exhausted", "koikoi_multiplier", "sake_yaku"):
        assert {k.split(".", 2)[2] for k in texts if k.startswith(f"choicedoc.{option}.")} == choices[option]


def test_language_choice():
    assert choose_language(None, None, "ja-JP,ja;q=0.9,en;q=0.8") == "ja"
    assert choose_language(None, None, "de-DE, uk;q=0.5, ru;q=0.7") == "ru"
    assert choose_language(None, None, "de, fr;q=0.5") == "en"
    assert choose_language(None, None, "vi;q=abc, en;q=0.1") == "en"
    assert choose_language("vi", "ru", "ja") == "vi"
    assert choose_language("xx", "uk", "ja") == "uk"
    assert choose_language(None, None, None) == "en"
    assert catalog("ja")["nav.rules"] != catalog("en")["nav.rules"]
    with pytest.raises(ValueError, match="unknown language 'de'"):
        catalog("de")
