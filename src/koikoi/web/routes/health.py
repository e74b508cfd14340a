"""How this process is doing: ``/api/health`` for the operator, ``/api/ready`` for a load balancer.

Health never waits on the database (a liveness check must not fail because the database is slow);
readiness is 503 while the database does not answer. Under ``koikoi serve --workers N`` the server
stores the workers' :class:`~koikoi.web.siblings.Siblings` as ``app.state.siblings``, and
``/api/health?all=1`` asks every worker through them.
"""

from __future__ import annotations

import os
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from starlette.datastructures import State

from ... import __version__
from ..context import AppContext

__all__ = ["local_health", "make_router"]


def local_health(ctx: AppContext, state: State) -> dict[str, Any]:
    """This process's health; never waits on the database (a load balancer's liveness check)."""
    service = ctx.service
    siblings = getattr(state, "siblings", None)  # koikoi serve --workers N: which worker this is
    me = siblings.identity() if siblings is not None else {"worker": 0, "workers": 1}
    return {
        "ok": True,
        **me,
        "pid": os.getpid(),
        "version": __version__,
        "live_games": len(service.live),
        "sockets": ctx.open_sockets,
        "lobby_sockets": ctx.lobby.open_sockets,  # the public lobby's, /ws/lobby
        # Tournaments: those this process directs now, how many it took over from another, the matches it
        # made, and the tournament pages' sockets here.
        "tournaments_directed": len(ctx.tournaments.director.directing),
        "tournament_takeovers": ctx.tournaments.director.takeovers,
        "tournament_pairings": ctx.tournaments.director.pairings,
        "tournament_sockets": ctx.tournaments.open_sockets(),
        "lobby_reads": ctx.lobby.snapshot_reads,  # reads of the whole lobby for its sockets (opens share them)
        "spectator_sockets": ctx.spectators.open,  # the spectators', /ws/watch/<game id>
        "actions": service.actions,
        # Group commit: the batches of moves written and the moves they stored (koikoi.web.movewriter).
        "move_commits": service.writer.commits,
        "moves_committed": service.writer.moves,
        "computer_moves": service.computer_moves,
        "thinking": service.thinking,  # games whose computer is moving now (they stay in memory till then)
        "flags": service.flags,  # games this process ended on time
        "ai_processes": len(service.pool.pids) + len(ctx.records_pool.pids),
        # With other processes on the database: whether this one hears their moves.
        "listening": None if service.listener is None else service.listener.connected,
        "database": service.db.state(),
        "loop": ctx.loop_lag.state(),
    }


def make_router(ctx: AppContext) -> APIRouter:
    router = APIRouter()

    @router.get("/api/health")
    async def health(request: Request, all: str = "") -> dict[str, Any]:
        me = local_health(ctx, request.app.state)
        if all not in ("", "0"):
            siblings = getattr(request.app.state, "siblings", None)
            # A copy: the list holds this worker's health too, which must not hold the list.
            me["all"] = await siblings.health_all(me.copy()) if siblings is not None else [me.copy()]
        return me

    @router.get("/api/ready")
    async def ready() -> JSONResponse:
        """For a load balancer's readiness check: 503 while the database does not answer."""
        db = ctx.service.db.state()
        return JSONResponse({"ready": db["reachable"], "database": db}, status_code=200 if db["reachable"] else 503)

    return router
