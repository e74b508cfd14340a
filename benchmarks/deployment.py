"""The documented deployment on loopback, for another benchmark to measure through: two ``koikoi serve``
processes on one PostgreSQL and Caddy in front of them (deploy/Caddyfile, its addresses changed for
loopback), then a command run against it with ``{url}`` (Caddy's address), ``{pids}`` (the two
processes' ids) and ``{caddy}`` (Caddy's id) filled in; everything is stopped when the command ends.
For example the load of benchmarks/web_load.py through the proxy:

    python3 benchmarks/deployment.py --database-url postgresql://postgres@127.0.0.1:54330/postgres \\
        --limit games_per_minute=100000 --limit open_games_per_browser=100000 \\
        --limit sockets_per_address=100000 -- \\
        python3 benchmarks/web_load.py --url {url} --server-pids {pids} \\
        --database-url postgresql://postgres@127.0.0.1:54330/postgres --games 1000 --seconds 60

Needs ``caddy`` on the PATH (Debian: ``apt install caddy``; run in the foreground, never as a service).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from caddy_failover import free_port, serve, start_caddy, stop_all, wait_up  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--database-url", required=True, help="PostgreSQL, shared by both processes")
    ap.add_argument(
        "--limit",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a koikoi serve limit for both processes (repeatable); web_load.py's clients all come from "
        "127.0.0.1 and share cookies, so raise what it raises (games_per_minute, open_games_per_browser, "
        "sockets_per_address)",
    )
    ap.add_argument("command", nargs=argparse.REMAINDER, help="-- and the command, with {url} and {pids}")
    args = ap.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        ap.error("give the command to run after --")
    tmp = Path(tempfile.mkdtemp(prefix="koikoi-deployment-"))
    ports = [free_port(), free_port()]
    extra = [w for limit in args.limit for w in ("--limit", limit)]
    servers = [serve(p, args.database_url, tmp / f"serve-{p}.log", extra) for p in ports]
    front_port = free_port()
    front = start_caddy(tmp, front_port, ports)
    try:
        url = f"http://127.0.0.1:{front_port}"
        wait_up(url, front, "caddy")
        pids = ",".join(str(s.pid) for s in servers)
        print(f"deployment: caddy on {url} in front of koikoi serve pids {pids}", flush=True)
        return subprocess.run([w.format(url=url, pids=pids, caddy=front.pid) for w in command]).returncode
    finally:
        stop_all([front, *servers], timeout=30)


if __name__ == "__main__":
    sys.exit(main())
