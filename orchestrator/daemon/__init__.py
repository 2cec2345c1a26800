"""The daemon: its loop (`loop`), starting an event (`run`), the files it writes
(`outputs`), and its ties to the operating system (`system`)."""

__all__ = ["loop", "outputs", "run", "system"]
