"""One file a revision of the database's schema, in order: ``0001_baseline.py`` first."""
