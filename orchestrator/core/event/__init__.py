"""The event as data: its model (players, games, rounds, teams, rules), standings and
tiebreaks, seeding, simulated events, and the tournament-state JSON."""

__all__ = ["model", "seeding", "simulation", "standings", "state_json"]
