"""``koikoi serve``'s own errors: each names the problem and starts nothing."""

from __future__ import annotations

import pytest

from koikoi.cli import main


def run(capsys, *args: str) -> tuple[int, str]:
    code = main(["serve", *args])
    return code, capsys.readouterr().err


def test_bad_card_art_folders(tmp_path, capsys):
    db = str(tmp_path / "g.db")
    code, err = run(capsys, "--database-url", db, "--card-art", str(tmp_path / "nowhere"))
    assert code == 2 and "no such folder" in err
    art = tmp_path / "art"
    art.mkdir()
    (art / "m1-0.svg").write_text("<svg xmlns='http://www.w3.org/2000/svg'/>")
    code, err = run(capsys, "--database-url", db, "--card-art", str(art))
    assert code == 2 and "missing m1-1.svg" in err and "and 41 more" in err
    for m in range(1, 13):
        for i in range(4):
            (art / f"m{m}-{i}.svg").write_text("<svg xmlns='http://www.w3.org/2000/svg'/>")
    (art / "m5-2.svg").write_text("just text")
    code, err = run(capsys, "--database-url", db, "--card-art", str(art))
    assert code == 2 and "m5-2.svg: not an SVG image" in err


def test_bad_database_urls(tmp_path, capsys):
    code, err = run(capsys, "--database-url", "postgresql://nobody@127.0.0.1:1/none")
    assert code == 2 and "cannot use the database postgresql+psycopg://nobody@127.0.0.1:1/none" in err
    code, err = run(capsys, "--database-url", "mysql+nodriver://x/y")
    assert code == 2 and "database" in err


def test_bad_ports(capsys):
    code, err = run(capsys, "--port", "70000")
    assert code == 2 and "a port is 1..65535, not 70000" in err
    code, err = run(capsys, "--port", "eighty")
    assert code == 2 and "expected a port number, not 'eighty'" in err


def test_bad_limits(tmp_path, capsys):
    db = str(tmp_path / "g.db")
    for arg, words in [
        ("games_per_minute", "NAME=VALUE"),
        ("nonsense=3", "no limit named 'nonsense'"),
        ("games_per_minute=many", "takes a whole number"),
        ("games_per_minute=0", "between 1 and"),
        ("header_timeout=-1", "between 0.5 and"),
    ]:
        code, err = run(capsys, "--database-url", db, "--limit", arg)
        assert code == 2 and words in err, (arg, err)


def test_every_limit_is_documented_with_its_default():
    """The limits table of docs/web.md is the code's: each name, default and description."""
    import re
    from pathlib import Path

    from koikoi.web.limits import Limits

    doc = (Path(__file__).parent.parent / "docs" / "web.md").read_text()
    rows = dict(re.findall(r"^\| `(\w+)` \| ([\d.]+) \| .* \|$", doc, re.M))
    for name, default, description in Limits.docs():
        assert name in rows, f"docs/web.md does not list the limit {name}"
        assert float(rows[name]) == default, (name, rows[name], default)
        assert description in doc, description
    assert set(rows) == {n for n, _d, _t in Limits.docs()}


def test_limits_apply():
    from koikoi.web.limits import Limits, RateLimiter

    limits = Limits().with_changes({"games_per_minute": "3", "idle-seconds": "2.5"})
    assert limits.games_per_minute == 3 and limits.idle_seconds == 2.5
    bucket = RateLimiter(1.0, 2)
    assert [bucket.allow("a", now=0.0) for _ in range(3)] == [True, True, False]
    assert bucket.allow("b", now=0.0)  # another key has its own bucket
    assert bucket.allow("a", now=1.0) and not bucket.allow("a", now=1.0)


@pytest.mark.server
def test_a_port_in_use_is_the_only_message(tmp_path):
    """A real ``koikoi serve`` on a port held open: one error line and a non-zero exit, no "open http://..."."""
    import os
    import shutil
    import socket
    import subprocess

    held = socket.socket()
    held.bind(("127.0.0.1", 0))
    held.listen()
    port = held.getsockname()[1]
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "data"))
    try:
        r = subprocess.run(
            [shutil.which("koikoi") or "koikoi", "serve", "--host", "127.0.0.1", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
        )
    finally:
        held.close()
    assert r.returncode != 0
    assert r.stdout == "" and "open http" not in r.stderr
    assert r.stderr.strip() == f"koikoi: error: cannot listen on 127.0.0.1:{port}: the port is in use"
    assert not (tmp_path / "data").exists()  # no database was made for a server that cannot start
