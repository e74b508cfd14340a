"""The package version, at the bottom of the package so that any module may name it."""

__version__ = "0.1.0"
