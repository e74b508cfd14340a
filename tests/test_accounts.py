"""Account names, passwords and session tokens (koikoi.web.accounts): what is refused and why."""

from __future__ import annotations

import asyncio

import pytest
from argon2 import extract_parameters
from argon2.exceptions import VerifyMismatchError

from koikoi.web.accounts import (
    Passwords,
    check_name,
    check_password,
    common_passwords,
    name_key,
    new_session_token,
    session_key,
)
from koikoi.web.errors import GameError


@pytest.mark.parametrize(
    ("raw", "name"),
    [
        ("Ann", "Ann"),
        ("ｋｏｉ_Master", "koi_Master"),  # full-width letters are the same letters
        ("  bob-99  ", "bob-99"),
        ("a" * 20, "a" * 20),
    ],
)
def test_names_are_normalised(raw, name):
    assert check_name(raw) == name


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        ("ab", "3 to 20"),
        ("a" * 21, "3 to 20"),
        ("a" * 1000, "at most 20"),
        ("_ann", "begins and ends"),
        ("ann-", "begins and ends"),
        ("an n", "only letters"),
        ("аnn", "only letters"),  # a Cyrillic а: looks like Ann, is not
        ("Ann<script>", "only letters"),
        ("Computer", "kept for the server"),
        ("HARD", "kept for the server"),
        (None, "string"),
        (42, "string"),
    ],
)
def test_bad_names_say_why(raw, says):
    with pytest.raises(GameError) as e:
        check_name(raw)
    assert e.value.code == "bad_account_name" and says in e.value.message


def test_names_are_the_same_whatever_their_case():
    assert name_key("Ann") == name_key("ANN") == name_key("ann")


def test_passwords():
    assert check_password("correct horse battery", "Ann") == "correct horse battery"
    assert check_password("ｐａｓｓ　ｗｏｒｄ９", "Ann") == "pass word9"  # NFKC: as typed on another keyboard
    for weak, says in [
        ("short", "at least 8"),
        ("PassWord123", "most common"),
        ("annabel-lee", None),
        ("Annabel-Lee", None),
    ]:
        if says is None:
            assert check_password(weak, "Ann")
            continue
        with pytest.raises(GameError) as e:
            check_password(weak, "Ann")
        assert e.value.code == "weak_password" and says in e.value.message
    with pytest.raises(GameError, match="not be the name"):
        check_password("Ann-the-Bold", "ann-the-bold")
    with pytest.raises(GameError, match="at most 256"):
        check_password("x" * 257, "Ann")
    with pytest.raises(GameError, match="string"):
        check_password(["password"], "Ann")


def test_the_common_passwords_are_long_enough_to_matter():
    listed = common_passwords()
    assert len(listed) > 150
    assert "password" in listed and "12345678" in listed and "iloveyou" in listed
    assert all(len(p) >= 8 for p in listed)  # shorter ones are refused by their length anyway


def test_session_tokens_are_random_and_kept_only_as_a_hash():
    a, b = new_session_token(), new_session_token()
    assert a != b and len(a) == 43
    key = session_key(a)
    assert key is not None and len(key) == 64 and a not in key
    assert session_key(a) == key
    for bad in ["", "x" * 43 + "!", "short", "a" * 44, None, 7]:
        assert session_key(bad) is None  # type: ignore[arg-type]


def test_passwords_are_argon2id_and_checked_off_the_loop():
    async def go():
        pw = Passwords(threads=1)
        try:
            stored = await pw.hash("correct horse battery")
            assert stored.startswith("$argon2id$")
            assert "correct horse" not in stored
            assert await pw.verify(stored, "correct horse battery")
            assert not await pw.verify(stored, "correct horse battery!")
            assert not await pw.verify(None, "correct horse battery")  # no such account
            assert not await pw.verify("not a hash", "correct horse battery")
            # A missing account is checked against a decoy that costs what a real hash does: the same
            # parameters, well formed (a mismatch after the whole computation, not a refusal to read it).
            assert extract_parameters(pw.decoy) == extract_parameters(stored)
            with pytest.raises(VerifyMismatchError):
                pw.hasher.verify(pw.decoy, "correct horse battery")
            other = Passwords(threads=1)
            assert other.decoy != pw.decoy  # random, never one string for every server
            other.close()
            # Too many at once: refused, not queued without bound.
            pw.max_pending = 1
            results = await asyncio.gather(
                pw.verify(stored, "x" * 8), pw.verify(stored, "y" * 8), return_exceptions=True
            )
            assert sum(isinstance(r, GameError) and r.code == "busy" for r in results) == 1
        finally:
            pw.close()

    asyncio.run(go())


def test_the_hashing_threads_are_shared_fairly():
    """Issue 43, item 6: names with no account (a flood of made-up ones) hold at most their share of the
    slots, one address at most its own, and a known browser (its device cookie) goes before the rest."""

    async def go():
        pw = Passwords(threads=1, max_pending=32, per_address=4, unknown_share=8)
        try:
            stored = await pw.hash("correct horse battery")
            order: list[str] = []

            async def check(who: str, stored_hash, address: str, known: bool = False) -> bool:
                ok = await pw.verify(stored_hash, "correct horse battery", address=address, known_browser=known)
                order.append(who)
                return ok

            flood = [asyncio.ensure_future(check(f"flood{k}", None, f"10.0.0.{k}")) for k in range(40)]
            one_address = [asyncio.ensure_future(check(f"one{k}", stored, "10.9.9.9")) for k in range(6)]
            await asyncio.sleep(0)  # all of them asked: the first took the thread, the rest wait their turn
            known = asyncio.ensure_future(check("known", stored, "10.1.1.1", known=True))
            results = await asyncio.gather(*flood, *one_address, known, return_exceptions=True)
            busy = [isinstance(r, GameError) and r.code == "busy" for r in results]
            assert sum(busy[:40]) == 32  # eight made-up names at once, no more
            assert sum(busy[40:46]) == 2  # four from one address
            assert results[-1] is True and not busy[-1]
            # The known browser came last and went before everyone still waiting (only the one running then
            # was before it).
            assert order.index("known") <= 1, order
            # Names with an account go before made-up names that came before them.
            assert max(order.index(f"one{k}") for k in range(4)) < max(order.index(f"flood{k}") for k in range(8))
        finally:
            pw.close()

    asyncio.run(go())
