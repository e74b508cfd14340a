"""What text a person may show others: a guest's name at a table or in the lobby, a chat message.

Control, format, private-use and unassigned characters are refused where the text is read
(``games.clean_name``, ``chat.clean_text``); this module adds what passes those checks and still fools a
reader:

- **Blank-looking characters**: the Hangul fillers (U+3164 and its half-width, choseong and jungseong
  forms), the Braille blank and the combining grapheme joiner draw nothing, so a name of them looks
  empty, and one with them looks like another's. Whitespace is not among them: it is folded to single
  spaces where the text is read.
- **Zalgo**: letters buried under stacks of combining marks, drawn over the lines above and below.
  Marks are counted after NFC (which composes the accented letters of Vietnamese, say, into single
  characters); more than :data:`MARKS_A_LETTER` in a row on one letter is refused. Scripts that write
  with marks (Thai, Devanagari) stack two or three at most.

    >>> odd_character("Hana")
    >>> odd_character("Ha\\u3164na")
    'the blank-looking character U+3164'
    >>> odd_character("Z\\u0351\\u0352\\u0353\\u0354algo")
    'a letter with 4 marks stacked on it (at most 3)'
    >>> odd_character("Tiếng Việt")
"""

from __future__ import annotations

import unicodedata

__all__ = ["BLANK_LOOKING", "MARKS_A_LETTER", "odd_character"]

BLANK_LOOKING = frozenset({"\u115f", "\u1160", "\u3164", "\uffa0", "\u2800", "\u034f"})
MARKS_A_LETTER = 3


def odd_character(text: str) -> str | None:
    """What in ``text`` would fool a reader (a blank-looking character, a letter under too many marks),
    in words for an error message; None when there is nothing. Linear in the text's length."""
    for ch in text:
        if ch in BLANK_LOOKING:
            return f"the blank-looking character U+{ord(ch):04X}"
    run = 0
    for ch in unicodedata.normalize("NFC", text):
        if unicodedata.category(ch) in ("Mn", "Me"):
            run += 1  # (counted to the end of the stack, for the message)
        else:
            if run > MARKS_A_LETTER:
                return f"a letter with {run} marks stacked on it (at most {MARKS_A_LETTER})"
            run = 0
    if run > MARKS_A_LETTER:
        return f"a letter with {run} marks stacked on it (at most {MARKS_A_LETTER})"
    return None
