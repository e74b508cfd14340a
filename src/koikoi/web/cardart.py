"""Card faces for the table: our own drawn faces, or a folder of images the user points at.

A folder given with ``--card-art DIR`` holds ``m<month>-<index>.svg`` for every card (index 0 is the
month's highest card, as in the engine's card order), and may hold ``back.svg``. It is checked when the
server starts: a missing or unreadable file is an error then, not a broken image in the middle of a game.
"""

from __future__ import annotations

from pathlib import Path

from ..cards import NUM_CARDS
from .cardfaces import card_back_svg, card_svg

__all__ = ["CardArt", "CardArtError", "art_file_name"]

MAX_FILE = 2 * 1024 * 1024


class CardArtError(ValueError):
    """A card-art folder that cannot be used."""


def art_file_name(card_id: int) -> str:
    return f"m{card_id // 4 + 1}-{card_id % 4}.svg"


class CardArt:
    """The 48 faces and the back, as SVG text, by name: ``"0"``..``"47"`` or ``"back"``."""

    def __init__(self, folder: str | Path | None = None) -> None:
        self.folder = None if folder is None else Path(folder)
        self._faces: dict[str, str] = {}
        if self.folder is None:
            return
        if not self.folder.is_dir():
            raise CardArtError(f"--card-art {self.folder}: no such folder")
        missing = [art_file_name(c) for c in range(NUM_CARDS) if not (self.folder / art_file_name(c)).is_file()]
        if missing:
            shown = ", ".join(missing[:6]) + (f" and {len(missing) - 6} more" if len(missing) > 6 else "")
            raise CardArtError(
                f"--card-art {self.folder}: missing {shown} (expected m<month>-<index>.svg for "
                "every card, index 0 the month's highest card)"
            )
        for c in range(NUM_CARDS):
            self._faces[str(c)] = self._read(self.folder / art_file_name(c))
        back = self.folder / "back.svg"
        if back.is_file():
            self._faces["back"] = self._read(back)

    @staticmethod
    def _read(path: Path) -> str:
        if path.stat().st_size > MAX_FILE:
            raise CardArtError(f"{path}: larger than {MAX_FILE // (1024 * 1024)} MB")
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise CardArtError(f"{path}: cannot read it as UTF-8 text ({e})") from None
        if "<svg" not in text:
            raise CardArtError(f"{path}: not an SVG image")
        return text

    def svg(self, name: str) -> str | None:
        """The SVG for ``name``, or None when no card has that name."""
        if name in self._faces:
            return self._faces[name]
        if name == "back":
            return card_back_svg()
        if name.isascii() and name.isdigit() and len(name) <= 2 and int(name) < NUM_CARDS:
            return card_svg(int(name))
        return None
