"""Accounts over HTTP: sign up, sign in and out (here or everywhere), change the password, who am I.

Accounts are optional (:mod:`koikoi.web.accounts`). A session is a random token in the ``koikoi_session``
cookie (``HttpOnly``, ``SameSite=Lax``, ``Secure`` over HTTPS), kept in the database as its hash
(:mod:`koikoi.web.accountstore`); the app's ``identify`` middleware reads it on every request, and a
signed-in browser plays as its account. Sign-ups and sign-ins are limited per address here, and failed
sign-ins per account in the database; the password's hashing, the slow part, runs on threads of its own.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from ..accounts import (
    SESSION_COOKIE,
    check_name,
    check_password,
    name_key,
    new_session_token,
    normalised_password,
    session_key,
)
from ..accountstore import SESSION_IDLE, Account, Login
from ..context import AppContext, account_of, address_of, cookie_of, credentials, owner_of
from ..cookies import DEVICE, cookie_name, is_secure
from ..devices import Device
from ..errors import GameError
from ..limits import Backoff, RateLimiter
from ..store import StoreError

__all__ = ["make_router"]


# Wrong passwords from one client address (per process): past ADDRESS_FREE in half an hour, it waits 15 s
# after the next, twice as long after each more, up to 15 min; whatever names it tries.
ADDRESS_FREE = 20
DEVICE_MAX_AGE = 400 * 86400  # a device cookie lasts as long as browsers keep one (400 days)


def account_waits(until: datetime, *, this_browser: bool = False) -> GameError:
    """The answer to a sign-in (or a password change) while the browsers the account does not know wait
    after too many wrong passwords (``this_browser``: this known browser waits, after too many of its
    own): how long, in minutes, for the page to say in its own words."""
    minutes = max(1, math.ceil((until - datetime.now(UTC)).total_seconds() / 60))
    whose = "from this browser" if this_browser else "from browsers it does not know"
    return GameError(
        "account_waits",
        f"too many wrong passwords for this account {whose}: try again in {minutes} min (after {until:%H:%M} "
        "UTC); a browser you have signed in with before is not held up",
        429,
        params={"minutes": minutes},
    )


def make_router(ctx: AppContext) -> APIRouter:
    router = APIRouter()
    service, limits, accounts, passwords = ctx.service, ctx.limits, ctx.accounts, ctx.passwords
    signups = RateLimiter(limits.signups_per_hour / 3600, limits.signups_per_hour)
    logins = RateLimiter(limits.logins_per_minute / 60, limits.logins_per_minute)
    failing = Backoff(ADDRESS_FREE, 15.0, 900.0, 1800.0)  # wrong passwords by address

    def known_browser(request: Request, account_id: str) -> Device | None:
        """The asking browser's device cookie for ``account_id``, if it has one (it signed in to it before)."""
        device = ctx.devices.read(cookie_of(request, DEVICE))
        return device if device is not None and device.account_id == account_id else None

    def set_device(request: Request, response: JSONResponse, account_id: str, device: Device | None) -> None:
        """A browser that signed in to ``account_id`` is known to it from now on (a cookie it keeps)."""
        if device is not None:
            return
        secure = is_secure(request)
        response.set_cookie(
            cookie_name(DEVICE, secure),
            ctx.devices.issue(account_id),
            max_age=DEVICE_MAX_AGE,
            httponly=True,
            samesite="lax",
            secure=secure,
        )

    def address_checked(request: Request) -> str:
        """The asker's address, refused (429) while it waits after too many wrong passwords of its own."""
        address = address_of(request)
        wait = failing.wait(address)
        if wait:
            raise GameError(
                "too_many_sign_ins",
                f"too many wrong passwords from this address: try again in {math.ceil(wait)} s",
                429,
            )
        return address

    async def check_password_of(request: Request, found: Login, password: str) -> Device | None:
        """Whether ``password`` is the account's, as a sign-in checks it: refused (429) while this browser
        waits (a known one after too many of its own wrong passwords, an unknown one after too many from
        all unknown browsers, or its address after too many of its own); a wrong one counted where it
        belongs and refused (401). Returns the browser's device, if it is a known one."""
        address = address_checked(request)
        device = known_browser(request, found.account.id)
        if device is not None:
            until = await service.db(accounts.device_waits, device.id)
            if until is not None:
                raise account_waits(until, this_browser=True)
        elif found.locked_until is not None:
            raise account_waits(found.locked_until)
        ok = await passwords.verify(found.password_hash, password, address=address, known_browser=device is not None)
        if not ok:
            failing.failed(address)
            if device is not None:
                await service.db(accounts.device_failed, device.id, found.account.id)
            else:
                await service.db(accounts.failed, found.account.id)
            raise GameError("bad_login", "wrong name or password", 401)
        return device

    def set_session(request: Request, response: JSONResponse, token: str) -> None:
        response.set_cookie(
            cookie_name(SESSION_COOKIE, is_secure(request)),
            token,
            max_age=int(SESSION_IDLE.total_seconds()),
            httponly=True,
            samesite="lax",
            secure=request.url.scheme == "https",
        )

    def end_session_cookie(request: Request, response: JSONResponse) -> None:
        secure = is_secure(request)
        response.delete_cookie(cookie_name(SESSION_COOKIE, secure), httponly=True, samesite="lax", secure=secure)

    def describe(account: Account) -> dict[str, Any]:
        return {"name": account.name, "created": account.created.isoformat(), "url": f"/@/{account.name}"}

    def guest_browser(request: Request) -> str | None:
        """The asking browser's id if it plays as a guest (its games go to the account it signs in to)."""
        return None if account_of(request) is not None else owner_of(request)

    @router.post("/api/account/signup")
    async def signup(request: Request) -> JSONResponse:
        data = await ctx.json_body(request)
        name = check_name(data.get("name"))
        password = check_password(data.get("password"), name)
        ctx.within(signups, request, "rate_limited", f"at most {limits.signups_per_hour} new accounts an hour")
        hashed = await passwords.hash(password, address=address_of(request))
        token = new_session_token()
        key = session_key(token)
        assert key is not None
        try:
            account = await service.db(accounts.create, name, name_key(name), hashed, guest_browser(request), key)
        except StoreError as e:
            if e.conflict:
                raise GameError("name_taken", f"the name {name!r} is taken: choose another", 409) from None
            raise
        response = JSONResponse(describe(account), status_code=201)
        set_session(request, response, token)
        set_device(request, response, account.id, None)
        return response

    @router.post("/api/account/login")
    async def login(request: Request) -> JSONResponse:
        data = await ctx.json_body(request)
        raw_name, raw_password = data.get("name"), data.get("password")
        if not isinstance(raw_name, str) or not isinstance(raw_password, str) or len(raw_password) > 256:
            raise GameError("bad_login", "wrong name or password", 401)
        ctx.within(
            logins,
            request,
            "too_many_sign_ins",
            f"at most {limits.logins_per_minute} sign-ins a minute from one address",
        )
        try:
            key = name_key(check_name(raw_name))
        except GameError:
            key = None
        found = None if key is None else await service.db(accounts.login_of, key)
        password = normalised_password(raw_password)
        if found is None:  # as slow as a wrong password, and last in line for the hashing threads
            address = address_checked(request)
            await passwords.verify(None, password, address=address)
            failing.failed(address)
            raise GameError("bad_login", "wrong name or password", 401)
        device = await check_password_of(request, found, password)
        if found.disabled:
            raise GameError("bad_login", "wrong name or password", 401)
        rehash = (
            await passwords.hash(password, address=address_of(request))
            if passwords.needs_rehash(found.password_hash)
            else None
        )
        token = new_session_token()
        session = session_key(token)
        assert session is not None
        await service.db(
            accounts.signed_in,
            found.account.id,
            session,
            guest_browser(request),
            rehash,
            None if device is None else device.id,
        )
        response = JSONResponse(describe(found.account))
        set_session(request, response, token)
        set_device(request, response, found.account.id, device)
        return response

    @router.post("/api/account/logout")
    async def logout(request: Request) -> JSONResponse:
        key = session_key(credentials(request)[1] or "")
        if key is not None:
            await service.db(accounts.end_session, key)
        response = JSONResponse({"signed_in": False})
        end_session_cookie(request, response)
        return response

    @router.post("/api/account/logout-everywhere")
    async def logout_everywhere(request: Request) -> JSONResponse:
        account = require(request)
        ended = await service.db(accounts.end_sessions, account.id)
        response = JSONResponse({"signed_in": False, "sessions_ended": ended})
        end_session_cookie(request, response)
        return response

    @router.post("/api/account/password")
    async def change_password(request: Request) -> dict[str, Any]:
        account = require(request)
        data = await ctx.json_body(request)
        old, new = data.get("old_password"), data.get("new_password")
        if not isinstance(old, str) or len(old) > 256:
            raise GameError("bad_login", "the current password is wrong", 401)
        new_password = check_password(new, account.name)
        ctx.within(
            logins,
            request,
            "too_many_sign_ins",
            f"at most {limits.logins_per_minute} sign-ins a minute from one address",
        )
        found = await service.db(accounts.login_of, name_key(account.name))
        if found is None:
            raise GameError("bad_login", "the current password is wrong", 401)
        try:
            # The same limits as signing in: a session alone (a shared computer left signed in) must not let
            # anyone guess the password without them.
            await check_password_of(request, found, normalised_password(old))
        except GameError as e:
            if e.code == "bad_login":
                raise GameError("bad_login", "the current password is wrong", 401) from None
            raise
        hashed = await passwords.hash(new_password, address=address_of(request))
        keep = session_key(credentials(request)[1] or "")
        await service.db(accounts.set_password, account.id, hashed, keep)
        return {"changed": True, "other_sessions_ended": True}

    @router.get("/api/account")
    async def me(request: Request) -> dict[str, Any]:
        return describe(require(request))

    def require(request: Request) -> Account:
        account = account_of(request)
        if account is None:
            raise GameError("not_signed_in", "sign in first", 401)
        return account

    return router
