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
from ..accountstore import SESSION_IDLE, Account
from ..context import AppContext, account_of, credentials, owner_of
from ..cookies import cookie_name, is_secure
from ..errors import GameError
from ..limits import RateLimiter
from ..store import StoreError

__all__ = ["make_router"]


def account_waits(until: datetime) -> GameError:
    """The answer to a sign-in (or a password change) while the account waits after too many wrong
    passwords: how long, in minutes, for the page to say in its own words."""
    minutes = max(1, math.ceil((until - datetime.now(UTC)).total_seconds() / 60))
    return GameError(
        "account_waits",
        f"too many wrong passwords for this account: try again in {minutes} min (after {until:%H:%M} UTC)",
        429,
        params={"minutes": minutes},
    )


def make_router(ctx: AppContext) -> APIRouter:
    router = APIRouter()
    service, limits, accounts, passwords = ctx.service, ctx.limits, ctx.accounts, ctx.passwords
    signups = RateLimiter(limits.signups_per_hour / 3600, limits.signups_per_hour)
    logins = RateLimiter(limits.logins_per_minute / 60, limits.logins_per_minute)

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
        hashed = await passwords.hash(password)
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
        if found is not None and found.locked_until is not None:
            raise account_waits(found.locked_until)
        password = normalised_password(raw_password)
        ok = await passwords.verify(None if found is None else found.password_hash, password)
        if found is None or not ok or found.disabled:
            if found is not None and not ok:
                await service.db(accounts.failed, found.account.id)
            raise GameError("bad_login", "wrong name or password", 401)
        rehash = await passwords.hash(password) if passwords.needs_rehash(found.password_hash) else None
        token = new_session_token()
        session = session_key(token)
        assert session is not None
        await service.db(accounts.signed_in, found.account.id, session, guest_browser(request), rehash)
        response = JSONResponse(describe(found.account))
        set_session(request, response, token)
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
        if found is not None and found.locked_until is not None:
            # The same per-account limit as signing in: a session alone (a shared computer left signed in)
            # must not let anyone guess the password without one.
            raise account_waits(found.locked_until)
        if found is None or not await passwords.verify(found.password_hash, normalised_password(old)):
            if found is not None:
                await service.db(accounts.failed, found.account.id)
            raise GameError("bad_login", "the current password is wrong", 401)
        hashed = await passwords.hash(new_password)
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
