"""What koikoi.web.server takes from uvicorn beyond its documented settings (the list is in the module's
docstring) still holds for the installed uvicorn, and pyproject.toml keeps uvicorn within the range this
was checked on.

A failure here names what changed in uvicorn: the server's connection guard (slowloris timeouts, header
bytes, connections per address), its WebSocket hand-over between workers and a table's view of a client
that stops reading all rest on it, and would otherwise stop working without a word. The last tests run
the guarded protocols under a real uvicorn on a real socket, in this process.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import socket
import threading
import time
import tomllib
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from packaging.requirements import Requirement
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.protocols.websockets.auto import AutoWebSocketsProtocol
from uvicorn.server import ServerState
from websockets.sync.client import connect

try:
    import uvloop
except ImportError:  # uvicorn without [standard]: asyncio's own loop
    uvloop = None  # type: ignore[assignment]

from koikoi.web.headers import SecurityHeaders
from koikoi.web.limits import Limits
from koikoi.web.server import _Server, guarded_protocol, guarded_websocket

UVICORN = version("uvicorn")
PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"

# uvicorn's methods the guard overrides or calls, with the parameters it passes (after self).
HTTP_METHODS = {
    "__init__": ("config", "server_state", "app_state"),
    "connection_made": ("transport",),
    "data_received": ("data",),
    "connection_lost": ("exc",),
    "on_message_begin": (),
    "on_url": ("url",),
    "on_header": ("name", "value"),
    "on_headers_complete": (),
    "on_body": ("body",),
    "on_message_complete": (),
    "handle_websocket_upgrade": (),
}
WEBSOCKET_METHODS = {
    "__init__": ("config", "server_state", "app_state"),
    "connection_made": ("transport",),
    "data_received": ("data",),
}
SERVER_METHODS = {"__init__": ("config",), "startup": ("sockets",), "shutdown": ("sockets",)}


def _changed(cls: type, methods: dict[str, tuple[str, ...]]) -> list[str]:
    """What of ``methods`` ``cls`` no longer has as the guard uses it."""
    out = []
    for name, params in methods.items():
        method = getattr(cls, name, None)
        if not callable(method):
            out.append(f"{cls.__name__}.{name} is gone")
            continue
        signature = inspect.signature(method)
        names = [p for p in signature.parameters if p != "self"][: len(params)]
        if tuple(names) != params:
            out.append(f"{cls.__name__}.{name} is now {name}{signature}; the guard passes ({', '.join(params)})")
    return out


def _fail_if(problems: list[str], what: str) -> None:
    if problems:
        pytest.fail(
            f"uvicorn {UVICORN} changed {what} that koikoi.web.server relies on (see its docstring):\n  "
            + "\n  ".join(problems),
            pytrace=False,
        )


def _config(app: Any = None, **kwargs: Any) -> uvicorn.Config:
    async def nothing(scope: Any, receive: Any, send: Any) -> None:
        pass

    return uvicorn.Config(app or nothing, log_config=None, **kwargs)


def _http_protocol() -> HttpToolsProtocol:
    """A protocol as uvicorn makes one, inside a running event loop (it takes the loop it runs in: made
    outside one, it would depend on whatever loop an earlier test left current)."""

    async def made() -> HttpToolsProtocol:
        return HttpToolsProtocol(config=_config(), server_state=ServerState(), app_state={})

    return asyncio.run(made())


def test_pyproject_keeps_uvicorn_in_the_range_checked_here():
    dependencies = tomllib.loads(PYPROJECT.read_text())["project"]["dependencies"]
    (uvicorn_dep,) = [Requirement(d) for d in dependencies if Requirement(d).name == "uvicorn"]
    assert any(s.operator == "<" for s in uvicorn_dep.specifier), (
        f"pyproject.toml's {uvicorn_dep} has no upper bound: a new uvicorn would go untested"
    )
    assert uvicorn_dep.specifier.contains(UVICORN), (
        f"uvicorn {UVICORN} is installed, outside pyproject.toml's {uvicorn_dep}: run this file against it, "
        "then move the bound"
    )


def test_the_http_protocol_still_has_what_the_guard_uses():
    problems = _changed(HttpToolsProtocol, HTTP_METHODS)
    protocol = _http_protocol()
    if not callable(getattr(getattr(protocol, "parser", None), "should_upgrade", None)):
        problems.append("HttpToolsProtocol no longer keeps its httptools parser in .parser")
    _fail_if(problems, "the HTTP protocol")


def test_the_websocket_protocol_still_has_what_the_guard_uses():
    if not inspect.isclass(AutoWebSocketsProtocol):
        _fail_if([f"AutoWebSocketsProtocol is {AutoWebSocketsProtocol!r}, not a class to derive from"], "")
    _fail_if(_changed(AutoWebSocketsProtocol, WEBSOCKET_METHODS), "the WebSocket protocol")


def test_the_server_still_has_what_the_hand_over_uses():
    problems = _changed(uvicorn.Server, SERVER_METHODS)
    server = uvicorn.Server(_config())
    if not isinstance(getattr(server, "server_state", None), ServerState):
        problems.append("uvicorn.Server no longer keeps its ServerState in .server_state")
    if getattr(server, "started", None) is not False:
        problems.append("uvicorn.Server no longer says whether it started in .started")
    _fail_if(problems, "uvicorn.Server")


def test_no_name_the_guard_adds_is_one_of_uvicorns():
    """A name of the guard's own that uvicorn came to use too would quietly replace uvicorn's."""
    protocol = _http_protocol()
    server = uvicorn.Server(_config())
    problems = []
    for ours, theirs, instance, overrides in (
        (guarded_protocol(Limits()), HttpToolsProtocol, protocol, HTTP_METHODS),
        (guarded_websocket(), AutoWebSocketsProtocol, None, WEBSOCKET_METHODS),
        (_Server, uvicorn.Server, server, SERVER_METHODS),
    ):
        assert inspect.isclass(theirs)
        added = {n for n in vars(ours) if not n.startswith("__")} - set(overrides)
        taken = set(dir(theirs)) | set(vars(instance) if instance is not None else ())
        problems += [f"{theirs.__name__}.{name} is also the guard's {ours.__name__}.{name}" for name in added & taken]
    _fail_if(sorted(problems), "the names")


# -- under a real uvicorn ---------------------------------------------------------------------------------


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """An ASGI app that tells a WebSocket client what it got of its connection."""
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
    elif scope["type"] == "http":
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
        await send({"type": "http.response.body", "body": b"ok"})
    else:
        await receive()  # websocket.connect
        await send({"type": "websocket.accept"})
        await receive()  # the client's question: it holds the socket open until answered
        transport = scope.get("koikoi.transport")
        peer = transport.get_extra_info("peername") if transport is not None else None
        said = {"transport": peer is not None, "peer_port": peer[1] if peer else None}
        await send({"type": "websocket.send", "text": json.dumps(said)})
        await receive()  # the client leaves


@contextlib.contextmanager
def serving(limits: Limits) -> Iterator[tuple[_Server, int, asyncio.AbstractEventLoop]]:
    """:func:`app` behind SecurityHeaders, served as ``koikoi serve`` serves (its protocols, its server
    class) from a thread of this process: (the server, its port, its event loop)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    http = guarded_protocol(limits)
    config = uvicorn.Config(
        SecurityHeaders(app), host="127.0.0.1", port=port, http=http, ws=guarded_websocket(), log_config=None
    )
    server = _Server(config, http=http, siblings=None, health=None)
    # The event loop uvicorn runs on by default: uvloop's, where it is installed (uvicorn[standard]).
    loop = uvloop.new_event_loop() if uvloop is not None else asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_until_complete, args=(server.serve(),), daemon=True)
    thread.start()
    for _ in range(500):
        if server.started:
            break
        time.sleep(0.02)
    assert server.started, "uvicorn did not start within 10 s"
    try:
        yield server, port, loop
    finally:
        server.should_exit = True
        thread.join(10)
        loop.close()


def test_a_websocket_app_gets_its_connections_transport():
    with serving(Limits()) as (_server, port, _loop), connect(f"ws://127.0.0.1:{port}/ws") as ws:
        mine = ws.socket.getsockname()[1]
        ws.send("what did you get of this connection?")
        said = json.loads(ws.recv(timeout=10))
    assert said == {"transport": True, "peer_port": mine}, (
        f"under uvicorn {UVICORN} a WebSocket's app did not get its connection's transport ({said}): uvicorn "
        "no longer starts the app's task from within the protocol's connection_made or data_received "
        "(koikoi.web.server's GuardedWebSocket), and a table would not see a client that stops reading"
    )


def test_the_guard_counts_headers_as_the_parser_hands_them_over():
    with serving(Limits(header_bytes=1024)) as (_server, port, _loop), httpx.Client(timeout=10) as client:
        url = f"http://127.0.0.1:{port}/x"
        # The request line's target and each header (name, value, ": " and line end) count, 1,024 in
        # all: httpx's own headers and this one are about 880 bytes, and the target makes it 1,080.
        assert client.get(url, headers={"X-Pad": "a" * 700}).status_code == 200
        r = client.get(url + "y" * 200, headers={"X-Pad": "a" * 700})
        assert r.status_code == 431 and "at most 1024 bytes" in r.text, (r.status_code, r.text)
        assert r.headers["x-frame-options"] == "DENY"


def test_a_connection_handed_over_is_served_as_one_accepted_here():
    """What :mod:`koikoi.web.siblings` does with a connection another worker read the start of."""
    with serving(Limits()) as (server, _port, loop):
        ours, theirs = socket.socketpair()
        with ours, theirs:
            head = b"GET /handed HTTP/1.1\r\nHost: x\r\n"
            loop.call_soon_threadsafe(server._adopt, theirs, head)
            ours.sendall(b"Connection: close\r\n\r\n")
            ours.settimeout(10)
            reply = b""
            while chunk := ours.recv(65536):
                reply += chunk
    assert reply.startswith(b"HTTP/1.1 200") and reply.endswith(b"ok"), reply
