"""The pure core: no I/O, typed data in and out.

`pairing/` the pairing systems (a registry of them), `game/` the rules of one game (clock,
adjudication, the game record, openings, TCEC's move fields), `event/` the event (its model,
standings, seeding, simulation, the state JSON), `codec` the one codec of declared schemas,
`errors` the base of every error a person can act on.
"""

__all__ = ["codec", "errors", "event", "game", "pairing"]
