"""The card faces, ``/cards/<0..47 or back>.svg``: our own SVG art, or the folder given with ``--card-art``."""

from __future__ import annotations

import re

from fastapi import APIRouter
from fastapi.responses import JSONResponse, Response

from ..context import AppContext

__all__ = ["make_router"]

_CARD_RE = re.compile(r"[0-9]|[1-3][0-9]|4[0-7]|back")


def make_router(ctx: AppContext) -> APIRouter:
    router = APIRouter()

    @router.get("/cards/{name}.svg")
    async def card_face(name: str) -> Response:
        svg = ctx.art.svg(name) if _CARD_RE.fullmatch(name) else None
        if svg is None:
            return JSONResponse({"error": "no_card", "message": f"no card {name[:20]!r}: use 0..47 or back"}, 404)
        return Response(svg, media_type="image/svg+xml", headers={"Cache-Control": "public, max-age=3600"})

    return router
