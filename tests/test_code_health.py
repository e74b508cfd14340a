"""Code health is part of the test command: ruff (lint and format) over the project, mypy --strict over
the whole package. Their settings are in pyproject.toml; a finding fails the run and is printed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parent.parent
PATHS = ["src", "tests", "benchmarks", "examples", "scripts"]


def run(*cmd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *cmd], cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_finds_nothing():
    r = run("ruff", "check", "--no-cache", *PATHS)
    assert r.returncode == 0, r.stdout + r.stderr


def test_the_code_is_formatted():
    r = run("ruff", "format", "--check", "--no-cache", *PATHS)
    assert r.returncode == 0, "run 'ruff format' on:\n" + r.stdout + r.stderr


def test_mypy_strict_on_the_whole_package():
    # Incremental, as the pre-commit hook runs it (cache in .mypy_cache, which mypy keeps out of git): a
    # clean clone checks every module (14.5 s alone here), a later run only what changed (0.3 s).
    r = run("mypy")
    assert r.returncode == 0 and "Success" in r.stdout, r.stdout + r.stderr


def test_the_pre_commit_hooks_run_the_same_checks():
    # .pre-commit-config.yaml runs, before a commit, what the three tests above run after: the same
    # tools, installed by pip (no hook repository to download), mypy on pyproject.toml's own file list.
    import yaml

    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())
    hooks = {h["id"]: h for repo in config["repos"] for h in repo["hooks"]}
    assert [repo["repo"] for repo in config["repos"]] == ["local"]
    assert hooks["ruff"]["entry"].split()[:4] == ["python3", "-m", "ruff", "check"]
    assert hooks["ruff-format"]["entry"].split() == ["python3", "-m", "ruff", "format"]
    assert hooks["mypy"]["entry"].split() == ["python3", "-m", "mypy"]
    assert hooks["mypy"]["pass_filenames"] is False
    for hook in hooks.values():
        assert hook["language"] == "system"
        tool = hook["entry"].split()[2]
        assert subprocess.run([sys.executable, "-m", tool, "--version"], capture_output=True).returncode == 0
