"""The app's languages: English, Japanese, Russian, Ukrainian and Vietnamese.

Each language is one JSON catalog in ``locales/`` mapping a key to its text; ``{name}`` marks a value put
in at run time. English is complete by definition; the test suite checks that every other catalog has
every English key with the same placeholders, so a new string cannot ship untranslated.

Plurals: a text that depends on a count is a family of keys, one per CLDR plural category of the
language, ``base.zero``, ``base.one``, ``base.two``, ``base.few``, ``base.many``, ``base.other``, with
exactly the categories CLDR gives that language (Babel's ``Locale.plural_form``: English ``one`` and
``other``, Japanese ``other``, Russian and Ukrainian ``one``, ``few``, ``many``, ``other``). The server
picks the form with Babel (``t.plural("lobby.hands", n, n=n)``); the pages with ``Intl.PluralRules``
(``tn(key, n, params)`` in ``common.js``); both fall back to ``base.other``.

>>> Translator("ru").plural("lobby.hands", 3, n=3) == Translator("ru")("lobby.hands.few", n=3)
True
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from functools import cache
from pathlib import Path

from babel import Locale
from babel.dates import format_date, format_time, get_datetime_format

__all__ = ["LANGUAGES", "PLURAL_CATEGORIES", "Translator", "catalog", "choose_language", "plural_categories"]

LANGUAGES: dict[str, str] = {"en": "English", "ja": "日本語", "ru": "Русский", "uk": "Українська", "vi": "Tiếng Việt"}
_DIR = Path(__file__).parent / "locales"
_PLACEHOLDER = re.compile(r"\{(\w+)\}")
PLURAL_CATEGORIES = ("zero", "one", "two", "few", "many", "other")  # CLDR's, in its order


def plural_categories(lang: str) -> tuple[str, ...]:
    """The CLDR plural categories of ``lang`` (cardinal numbers), in CLDR's order.

    >>> plural_categories("en"), plural_categories("ja")
    (('one', 'other'), ('other',))
    """
    tags = Locale.parse(lang).plural_form.tags | {"other"}
    return tuple(c for c in PLURAL_CATEGORIES if c in tags)


def plural_base(key: str) -> str | None:
    """``"lobby.hands"`` for ``"lobby.hands.few"``; None for a key that is not a plural form."""
    base, _, last = key.rpartition(".")
    return base if last in PLURAL_CATEGORIES and "." in base else None


@cache
def catalog(lang: str) -> dict[str, str]:
    """The texts of ``lang``, English filling any gap (but never one plural form among the language's own)."""
    if lang not in LANGUAGES:
        raise ValueError(f"unknown language {lang!r}; choose from {', '.join(LANGUAGES)}")
    english: dict[str, str] = json.loads((_DIR / "en.json").read_text(encoding="utf-8"))
    if lang == "en":
        return english
    own = json.loads((_DIR / f"{lang}.json").read_text(encoding="utf-8"))
    translated = {plural_base(k) for k in own} - {None}
    return {**{k: v for k, v in english.items() if plural_base(k) not in translated}, **own}


def choose_language(asked: str | None, cookie: str | None, accept_language: str | None) -> str:
    """The language to answer in: an explicit ``?lang=``, then the cookie, then the browser's list."""
    for choice in (asked, cookie):
        if choice in LANGUAGES:
            return choice
    if accept_language:
        ranked = []
        for i, part in enumerate(accept_language.split(",")):
            tag, _, params = part.strip().partition(";")
            q = 1.0
            if params.strip().startswith("q="):
                try:
                    q = float(params.strip()[2:])
                except ValueError:
                    q = 0.0
            ranked.append((-q, i, tag.strip().lower().split("-")[0]))
        for _q, _i, code in sorted(ranked):
            if code in LANGUAGES:
                return code
    return "en"


class Translator:
    """``t("key", name=value)`` in one language, for the server's own pages."""

    def __init__(self, lang: str) -> None:
        self.lang = lang
        self.catalog = catalog(lang)
        self._plural_form = Locale.parse(lang).plural_form

    def __call__(self, key: str, **params: object) -> str:
        text = self.catalog.get(key, key)
        if params:
            text = _PLACEHOLDER.sub(lambda m: str(params.get(m.group(1), m.group(0))), text)
        return text

    def date(self, moment: datetime) -> str:
        """A day as every page writes it: CLDR's medium date in this language (the pages' script writes
        the same with ``Intl``'s ``dateStyle: "medium"``).

        >>> Translator("en").date(datetime(2026, 12, 6)), Translator("ja").date(datetime(2026, 12, 6))
        ('Dec 6, 2026', '2026/12/06')
        """
        # CLDR's newer data spaces some parts with a narrow no-break space; a plain one reads the same.
        return format_date(moment, "medium", locale=self.lang).replace("\u202f", " ")

    def when(self, moment: datetime) -> str:
        """A moment as every page writes it: the medium date and the short time, joined as this language
        joins them, in UTC (a page's script writes it again in the reader's own time zone, with ``Intl``'s
        ``dateStyle: "medium", timeStyle: "short"``).

        >>> Translator("en").when(datetime(2026, 12, 6, 4, 29, tzinfo=UTC))
        'Dec 6, 2026, 4:29 AM'
        """
        moment = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
        time = format_time(moment, "short", tzinfo=UTC, locale=self.lang).replace("\u202f", " ")
        joined = str(get_datetime_format("medium", locale=self.lang))  # "{1}, {0}": the date, then the time
        return joined.replace("{1}", self.date(moment)).replace("{0}", time)

    def plural(self, key: str, count: int, **params: object) -> str:
        """The form of the plural family ``key`` (``key.one``, ``key.other``, ...) that ``count`` takes.

        >>> Translator("en").plural("lobby.hands", 1, n=1), Translator("en").plural("lobby.hands", 12, n=12)
        ('1 hand', '12 hands')
        """
        form = f"{key}.{self._plural_form(count)}"
        return self(form if form in self.catalog else f"{key}.other", **params)
