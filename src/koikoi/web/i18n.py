"""The app's languages: English, Japanese, Russian, Ukrainian and Vietnamese.

Each language is one JSON catalog in ``locales/`` mapping a key to its text; ``{name}`` marks a value put
in at run time. English is complete by definition; the test suite checks that every other catalog has
every English key with the same placeholders, so a new string cannot ship untranslated.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

__all__ = ["LANGUAGES", "Translator", "catalog", "choose_language"]

LANGUAGES: dict[str, str] = {"en": "English", "ja": "日本語", "ru": "Русский", "uk": "Українська", "vi": "Tiếng Việt"}
_DIR = Path(__file__).parent / "locales"
_PLACEHOLDER = re.compile(r"\{(\w+)\}")


@cache
def catalog(lang: str) -> dict[str, str]:
    """The texts of ``lang``, English filling any gap."""
    if lang not in LANGUAGES:
        raise ValueError(f"unknown language {lang!r}; choose from {', '.join(LANGUAGES)}")
    english = json.loads((_DIR / "en.json").read_text(encoding="utf-8"))
    if lang == "en":
        return english
    own = json.loads((_DIR / f"{lang}.json").read_text(encoding="utf-8"))
    return {**english, **own}


def choose_language(asked: str | None, cookie: str | None, accept_language: str | None) -> str:
    """The language to answer in: an explicit ``?lang=``, then the cookie, then the browser's list."""
    for choice in (asked, cookie):
        if choice in LANGUAGES:
            return choice  # type: ignore[return-value]
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

    def __call__(self, key: str, **params: object) -> str:
        text = self.catalog.get(key, key)
        if params:
            text = _PLACEHOLDER.sub(lambda m: str(params.get(m.group(1), m.group(0))), text)
        return text
