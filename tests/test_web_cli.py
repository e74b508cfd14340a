"""``koikoi serve``'s own errors: each names the problem and starts nothing."""

from __future__ import annotations

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
