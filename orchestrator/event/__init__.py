"""The event as the rest of the program sees it: its settings, its state, creating or
resuming it, what the read commands and the web view show (and their JSON's shapes), the
director's controls and the audit log, and the files people read (PGN, standings, TCEC's
live files)."""

__all__ = [
    "api",
    "audit",
    "controls",
    "export",
    "feed",
    "read",
    "resume",
    "sample",
    "settings",
    "state",
    "tcec_files",
]
