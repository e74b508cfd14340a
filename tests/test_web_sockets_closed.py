"""A connection that closes while the server still tunes its socket: uvloop's socket of a closed
transport raises ValueError ("negative file descriptor"), which reached the ASGI app as a 500 under load
(1,000 games, seats split between two processes). Both helpers now take it as the race it is."""

from __future__ import annotations

import asyncio

import uvloop

from koikoi.web.sockets import bound_send_buffer, reset


def test_a_socket_closed_under_the_server_is_left_alone():
    async def main() -> list[str]:
        loop = asyncio.get_running_loop()
        server = await loop.create_server(asyncio.Protocol, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        done = []
        for step in (bound_send_buffer, reset):
            transport, _ = await loop.create_connection(asyncio.Protocol, "127.0.0.1", port)
            sock = transport.get_extra_info("socket")
            transport.abort()
            await asyncio.sleep(0.01)

            class Closed:  # the transport as the route still holds it: its socket object from before
                def __init__(self, held: object) -> None:
                    self.held = held

                def get_extra_info(self, name: str) -> object:
                    return self.held

                def abort(self) -> None:
                    done.append("aborted")

            if step is bound_send_buffer:
                bound_send_buffer(Closed(sock), 1 << 16)  # type: ignore[arg-type]
                done.append("bounded")
            else:
                reset(Closed(sock))  # type: ignore[arg-type]
        server.close()
        return done

    assert uvloop.run(main()) == ["bounded", "aborted"]
