"""CHANGELOG.md moves with the version: its newest release is the package's version, and that release
names the record format and rules versions the code writes (a reader of the changelog learns whether
old records still replay)."""

from __future__ import annotations

import importlib.metadata
import re
from pathlib import Path

from koikoi import __version__
from koikoi.records import VERSION as RECORD_VERSION
from koikoi.rules import RULES_VERSION

CHANGELOG = Path(__file__).parent.parent / "CHANGELOG.md"


def releases() -> list[tuple[str, str]]:
    """(version, text) of each release section, newest first."""
    parts = re.split(r"^## \[([^\]]+)\][^\n]*\n", CHANGELOG.read_text(), flags=re.M)
    return [(parts[i], parts[i + 1]) for i in range(1, len(parts), 2) if parts[i] != "Unreleased"]


def test_the_newest_release_is_the_packages_version():
    assert releases()[0][0] == __version__
    # pyproject.toml reads the version from koikoi/_version.py: the installed metadata says the same
    assert importlib.metadata.version("koikoi") == __version__


def test_the_newest_release_names_the_record_and_rules_versions():
    text = releases()[0][1]
    assert f"format version {RECORD_VERSION}" in text and f"rules version {RULES_VERSION}" in text


def test_the_release_sections_are_in_keep_a_changelog_order():
    known = ["### Added", "### Changed", "### Deprecated", "### Removed", "### Fixed", "### Security"]
    for version, text in releases():
        heads = [line for line in text.splitlines() if line.startswith("### ")]
        assert all(h in known for h in heads), (version, heads)
        assert heads == sorted(heads, key=known.index), (version, heads)
