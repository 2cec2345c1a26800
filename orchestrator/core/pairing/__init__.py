"""The pairing systems: each a pure function from the event to the first leg of its next
round, registered by name (`registry.py`, where the built-in ones are listed);
`round.pair_next` pairs a round whatever its system."""

__all__ = ["registry", "round"]
