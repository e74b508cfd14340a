"""The package version, at the bottom of the package so that any module may name it."""

__version__ = "0.2.0"
