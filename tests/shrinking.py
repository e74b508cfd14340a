"""A random number generator that hypothesis can shrink.

``st.randoms(use_true_random=True)`` hands the test a generator whose draws hypothesis cannot see, so a
failing game cannot be made smaller; plain ``st.randoms()`` records every draw, and a whole match of
draws makes the smallest example too large for hypothesis's health check. This one takes its first draws
from a list that hypothesis generates (and shrinks: shorter lists, and draws towards 0.0, which picks the
first legal action), then goes on from a seeded generator. A failure shrinks to the few choices that
matter, the rest being "the first legal action" or the seeded tail.
"""

from __future__ import annotations

import random

from hypothesis import strategies as st


class ScriptedRandom(random.Random):
    """``random()`` returns the scripted draws first, then the seeded tail's. Defining ``random`` (and not
    ``getrandbits``) makes ``choice``, ``shuffle``, ``sample`` and ``randrange`` draw through it too."""

    def __init__(self, draws: list[float], tail_seed: int) -> None:
        self.draws = list(draws)
        self.used = 0
        self.tail_seed = tail_seed
        super().__init__(tail_seed)

    def random(self) -> float:
        if self.used < len(self.draws):
            self.used += 1
            return self.draws[self.used - 1]
        return super().random()

    def __repr__(self) -> str:
        return f"ScriptedRandom({self.draws!r}, tail_seed={self.tail_seed})"


@st.composite
def scripted_randoms(draw: st.DrawFn, max_draws: int = 200) -> ScriptedRandom:
    unit = st.floats(0.0, 1.0, exclude_max=True, allow_nan=False)
    return ScriptedRandom(draw(st.lists(unit, max_size=max_draws)), draw(st.integers(0, 2**32 - 1)))
