"""The example deployment (compose.yaml, Dockerfile, deploy/Caddyfile; docs/web.md, "Scaling out") fits
the app as it is: every app container runs a ``koikoi serve`` that this koikoi's own command line
accepts, on the compose file's PostgreSQL, behind a load balancer that knows every app container.

Docker is not needed: the files are read and checked against the code, not started.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest
import yaml
from sqlalchemy.engine import make_url

from koikoi.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent
# What one koikoi serve process may hold open on PostgreSQL: the store's pool (pool_size=10,
# max_overflow=20 in koikoi.web.store) and the one LISTEN connection of koikoi.web.fanout.
CONNECTIONS_PER_PROCESS = 10 + 20 + 1


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load((ROOT / "compose.yaml").read_text())


def apps(compose: dict) -> dict[str, dict]:
    return {name: s for name, s in compose["services"].items() if s.get("build") is not None}


def serve_args(command: list[str]):
    """``koikoi serve ...`` parsed by koikoi's own command line, as the container would run it."""
    assert command[:2] == ["koikoi", "serve"], command
    args = build_parser().parse_args(command[1:])
    assert args.command == "serve" and args.func.__name__ == "cmd_serve"
    return args


def dockerfile() -> list[tuple[str, str]]:
    """(instruction, arguments) of each instruction of the Dockerfile, continued lines joined."""
    text = re.sub(r"\\\n", " ", (ROOT / "Dockerfile").read_text())
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def caddy_upstreams() -> list[str]:
    text = (ROOT / "deploy" / "Caddyfile").read_text()
    lines = [line.split("#", 1)[0].split() for line in text.splitlines()]
    proxies = [words[1:] for words in lines if words and words[0] == "reverse_proxy"]
    assert len(proxies) == 1, proxies
    return [w for w in proxies[0] if w != "{"]


def test_compose_has_a_database_two_apps_and_a_load_balancer(compose):
    services = compose["services"]
    assert services["db"]["image"].startswith("postgres:")
    assert len(apps(compose)) >= 2
    lb = services["lb"]
    assert lb["image"].startswith("caddy:") and lb["ports"]
    assert set(lb["depends_on"]) == set(apps(compose))
    # Only the load balancer is reachable from outside: the apps trust its X-Forwarded-For.
    assert all("ports" not in s for s in apps(compose).values())
    mounts = [v.split(":") for v in lb["volumes"]]
    assert ["./deploy/Caddyfile", "/etc/caddy/Caddyfile", "ro"] in mounts
    assert (ROOT / "deploy" / "Caddyfile").is_file()


def test_every_app_serves_the_compose_database_with_a_command_koikoi_accepts(compose):
    db = compose["services"]["db"]
    env = db["environment"]
    for name, app in apps(compose).items():
        args = serve_args(app["command"])
        url = make_url(args.database_url)
        assert url.get_backend_name() == "postgresql", name
        assert (url.host, url.port or 5432) == ("db", 5432), name
        assert (url.username, url.password, url.database) == (
            env["POSTGRES_USER"],
            env["POSTGRES_PASSWORD"],
            env["POSTGRES_DB"],
        ), name
        assert args.host == "0.0.0.0" and args.forwarded_allow_ips, name
        assert app["depends_on"]["db"]["condition"] == "service_healthy", name
        assert app["build"] == "." and (ROOT / app["build"] / "Dockerfile").is_file(), name


def test_the_database_takes_every_connection_the_apps_may_open(compose):
    command = compose["services"]["db"]["command"]
    settings = dict(command[i + 1].split("=", 1) for i, word in enumerate(command) if word == "-c")
    # PostgreSQL keeps 3 connections for superusers, and an operator needs a few for psql.
    assert int(settings["max_connections"]) >= CONNECTIONS_PER_PROCESS * len(apps(compose)) + 3 + 5


def test_the_load_balancer_sends_to_every_app_on_its_port(compose):
    upstreams = caddy_upstreams()
    expected = {f"{name}:{serve_args(app['command']).port}" for name, app in apps(compose).items()}
    assert sorted(upstreams) == sorted(expected), (upstreams, expected)


def test_the_dockerfile_installs_koikoi_for_postgresql_and_serves_it():
    steps = dockerfile()
    assert steps[0] == ("FROM", "python:3.11-slim")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert any("psycopg" in d for d in project["optional-dependencies"]["postgres"])
    copied = {src for word, rest in steps if word == "COPY" for src in rest.split()[:-1]}
    # What pip needs to build the package: its metadata, its readme and its source.
    assert {"pyproject.toml", project["readme"], "src"} <= copied, copied
    installs = [rest for word, rest in steps if word == "RUN" and "pip install" in rest]
    assert len(installs) == 1 and "'.[postgres]'" in installs[0], installs
    (cmd,) = [rest for word, rest in steps if word == "CMD"]
    args = serve_args(json.loads(cmd))  # the exec form: a JSON list
    assert args.host == "0.0.0.0" and make_url(args.database_url).get_backend_name() == "postgresql"
    exposed = [rest for word, rest in steps if word == "EXPOSE"]
    assert exposed == [str(args.port)]
