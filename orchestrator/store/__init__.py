"""The SQLite store: its schema and migrations, rows in and rows out, the changes of
controls, and the daemon's lock on the database."""

__all__ = ["changes", "database", "lock", "schema"]
