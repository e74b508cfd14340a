"""Learn over HTTP (docs/web.md, "Learn"; :mod:`koikoi.web.learnservice`): the lessons' list, a lesson on
the table, the rule sets' page, the first game's, a move judged and an account's stars."""

from __future__ import annotations

import functools
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from ...cards import card
from ...lessons import RULE_EXAMPLES, compare, lesson_named
from ...rules import PRESETS
from ..context import AppContext, account_of, address_of, owner_of
from ..errors import GameError
from ..learnservice import PAGES

__all__ = ["make_router"]

# The rule sets the rule sets' page compares (the two kept for tests of old records aside).
COMPARED = ("nintendo", "traditional", "wikipedia", "bga", "cardavia", "boardgame")


@functools.cache
def _rulesets() -> tuple[list[tuple[str, list[int], dict[str, list[tuple[str, int]]]]], list[dict[str, Any]]]:
    # The rule sets' page: each example pile's cards and what each compared preset scores it (the engine's,
    # the same for every request), and each preset's settling options.
    examples = [(key, [card(c) for c in pile], compare(pile, COMPARED)) for key, pile in RULE_EXAMPLES]
    return examples, [PRESETS[p].to_dict() for p in COMPARED]


def make_router(ctx: AppContext) -> APIRouter:
    router = APIRouter()
    learn = ctx.learn

    def limited(request: Request) -> None:
        learn.within((owner_of(request), f"addr:{address_of(request)}"))

    async def stars(request: Request) -> dict[str, int] | None:
        account = account_of(request)
        return await learn.stars(account) if account is not None else None

    def place(name: str) -> dict[str, Any]:
        i = PAGES.index(name)
        return {
            "lesson": name,
            "index": i,
            "total": len(PAGES),
            "next": PAGES[i + 1] if i + 1 < len(PAGES) else None,
            "pages": list(PAGES),
        }

    @router.get("/learn", response_class=HTMLResponse)
    async def index(request: Request) -> HTMLResponse:
        return ctx.page(
            request, "learn.html", "learn", pages=PAGES, config={"pages": list(PAGES), "stars": await stars(request)}
        )

    @router.get("/learn/{name}", response_class=HTMLResponse)
    async def lesson_page(request: Request, name: str) -> HTMLResponse:
        if name not in PAGES:
            raise GameError("no_lesson", f"there is no lesson {name[:40]!r}", 404)
        config = {**place(name), "stars": await stars(request)}
        if name == "rulesets":
            examples, settled = _rulesets()
            return ctx.page(
                request,
                "learn_rulesets.html",
                "learn-page",
                presets=COMPARED,
                examples=examples,
                settled=settled,
                config=config,
                **place(name),
            )
        if name == "firstgame":
            return ctx.page(request, "learn_firstgame.html", "learn-page", config=config, **place(name))
        lesson = lesson_named(name)
        config["exercises"] = [{"name": e.name, "moves": e.moves} for e in lesson.exercises]
        return ctx.page(request, "learn_lesson.html", "table learn", config=config, **place(name))

    @router.post("/api/learn/{lesson}/{exercise}")
    async def move(request: Request, lesson: str, exercise: str) -> dict[str, Any]:
        limited(request)
        return await learn.move(lesson, exercise, await ctx.json_body(request))

    @router.get("/api/learn/progress")
    async def progress(request: Request) -> dict[str, Any]:
        return {"lessons": list(PAGES), "stars": await stars(request)}

    @router.post("/api/learn/progress")
    async def keep(request: Request) -> dict[str, Any]:
        limited(request)
        kept = await learn.keep(account_of(request), await ctx.json_body(request))
        return {"lessons": list(PAGES), "stars": kept}

    return router
