"""One game between two engines (`game`) and its PGN (`pgn`)."""

__all__ = ["game", "pgn"]
