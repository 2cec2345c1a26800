"""The pure rules of one game: time controls and the clock, adjudication, the game record,
openings, and TCEC's per-move fields."""

__all__ = ["adjudication", "clock", "fields", "openings", "record"]
