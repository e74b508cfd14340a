"""A server whose package files go away while it runs (issue 33, item 9): ``pip install -e`` in the
environment of a running ``koikoi serve`` removed the installed package, and every table page was a 500
(TemplateNotFound) until a restart. The server now reads what its pages need when it starts: the
templates, the static files, the translations, the common-password list.

The test runs a real server (a subprocess, a real socket) from a copy of the package, then moves that
copy to another folder of the server's Python path, as a reinstall does (pip removes the installed
files; the editable install is imported from the source tree: new processes, such as the computer's
workers, import it from there), and asks again for every kind of page and file."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from conftest import free_port

pytestmark = pytest.mark.server  # every test here starts server processes of its own

SRC = Path(__file__).resolve().parent.parent / "src" / "koikoi"


@pytest.fixture
def moved_server(tmp_path):
    """(the server's address, a function that moves its package away, the server's log): ``koikoi serve``
    from a copy of the package under ``tmp_path``, the first of two folders on the Python path."""
    site, reinstalled = tmp_path / "site", tmp_path / "reinstalled"
    reinstalled.mkdir()
    shutil.copytree(SRC, site / "koikoi", ignore=shutil.ignore_patterns("__pycache__"))
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(
        PYTHONPATH=os.pathsep.join([str(site), str(reinstalled)]),
        XDG_DATA_HOME=str(tmp_path / "data"),
        PYTHONDONTWRITEBYTECODE="1",
    )
    log = tmp_path / "server.log"
    cmd = [sys.executable, "-c", "import sys; from koikoi.cli import main; sys.exit(main())", "serve"]
    cmd += ["--port", str(port), "--database-url", str(tmp_path / "g.db"), "--ai-delay", "0"]
    with open(log, "ab") as out:
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT, cwd=tmp_path)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, log.read_text()
            assert time.monotonic() < deadline, "the server did not start:\n" + log.read_text()
            try:
                if httpx.get(url + "/api/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)

        def move_away() -> None:
            (site / "koikoi").rename(reinstalled / "koikoi")

        yield url, move_away, log
    finally:
        proc.kill()
        proc.wait(timeout=20)


def test_pages_still_answer_when_the_package_files_are_gone(moved_server):
    url, move_away, log = moved_server
    with httpx.Client(base_url=url, timeout=30) as c:
        game = c.post(
            "/api/games", json={"name": "Ann", "opponent": "easy", "rules": {"preset": "nintendo", "options": {}}}
        )
        assert game.status_code == 201, game.text
        pages = [game.json()["url"], "/", "/rules", "/replay", "/account", "/no-such-page"]
        files = ["/static/style.css", "/static/table.js", "/static/common.js"]
        before = {p: c.get(p) for p in pages + files}
        assert [before[p].status_code for p in pages + files] == [200] * 5 + [404] + [200] * 3
        move_away()
        assert SRC.is_dir()  # (the worktree's own package is not the one moved)
        for lang in ("en", "ja", "ru", "uk", "vi"):
            for p in pages:
                r = c.get(p, params={"lang": lang})
                assert r.status_code == before[p].status_code, (p, lang, r.status_code, log.read_text()[-3000:])
                assert f'<html lang="{lang}">' in r.text, (p, lang)
        for p in files:
            r = c.get(p)
            assert r.status_code == 200 and r.content == before[p].content, p
            assert r.headers["content-type"] == before[p].headers["content-type"], p
            assert r.headers.get("etag") == before[p].headers.get("etag"), p
            again = c.get(p, headers={"if-none-match": r.headers["etag"]})
            assert again.status_code == 304 and again.content == b"", p
        assert c.get("/static/nothing.js").status_code == 404
        assert c.get("/static/../app.py").status_code == 404
        # A new game, and its table, after the move.
        game = c.post(
            "/api/games", json={"name": "Bo", "opponent": "easy", "rules": {"preset": "cardavia", "options": {}}}
        )
        assert game.status_code == 201, game.text
        assert c.get(game.json()["url"]).status_code == 200
    # No request failed. (A computer's worker process still importing its code at the move may fail and
    # say so in the log: the code of a process is its own, and a new one imports the reinstalled code.)
    text = log.read_text()
    assert "TemplateNotFound" not in text and "Exception in ASGI application" not in text, text
