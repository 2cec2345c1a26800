"""A season: events in order, each event's field explicit engines or drawn from the final
places of earlier events (promotion within the season), and the memberships of the next
season after promotion and relegation.

Pure functions over typed data: the file is read by `config/season.py`, played by
`daemon/season.py`, stored by `store/season.py`.

- `check_season`: the file's own consistency (no cycle, no event fed by a later one, no
  unknown engine, no count larger than a field, no more moving than there are places).
- `resolve_field`: an event's field, from the final places of the events that feed it.  A
  cut that falls inside a shared place (a tie no criterion broke) is never guessed: it is
  `Undecided` until a director orders the tied engines (`decisions`).  An engine a draw
  would bring that is already in the field is passed over: the next place takes its seat.
- `renamed`: an engine renamed between events (a new version) keeps its places.
- `next_memberships`: each league's engines next season.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Annotated, Any

import msgspec
import networkx as nx

__all__ = [
    "Draw",
    "Places",
    "SeasonEvent",
    "Undecided",
    "check_season",
    "field_size",
    "movers",
    "next_memberships",
    "renamed",
    "resolve_field",
]

#: an event's final places, best first: (place as the standings write it, "4-5" for a tie;
#: engine name)
Places = Sequence[tuple[str, str]]
Count = Annotated[int, msgspec.Meta(ge=1)]


class Draw(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Engines drawn from an earlier event's final places: its `top` N or its `bottom` N."""

    of: str
    top: Count | None = None
    bottom: Count | None = None

    def __post_init__(self) -> None:
        if (self.top is None) == (self.bottom is None):
            raise ValueError(f"a draw from {self.of!r} takes either top = N or bottom = N")

    @property
    def count(self) -> int:
        return self.top or self.bottom or 0

    def __str__(self) -> str:
        return f"{'top' if self.top else 'bottom'} {self.count} of {self.of}"


class SeasonEvent(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One `[[event]]` of a season: its name, its field, its rules as `engines.toml` writes
    them (`tournament`, `adjudication`), and how many of it go up (`promote`: its top) and
    down (`relegate`: its bottom) between seasons."""

    name: Annotated[str, msgspec.Meta(min_length=1)]
    field: tuple[str | Draw, ...]
    tournament: dict[str, Any] = msgspec.field(default_factory=dict)
    adjudication: dict[str, Any] = msgspec.field(default_factory=dict)
    promote: Annotated[int, msgspec.Meta(ge=0)] = 0
    relegate: Annotated[int, msgspec.Meta(ge=0)] = 0

    def draws(self) -> list[Draw]:
        return [f for f in self.field if isinstance(f, Draw)]

    def names(self) -> list[str]:
        return [f for f in self.field if isinstance(f, str)]


def field_size(event: SeasonEvent) -> int:
    """How many engines play `event`: its named engines and the counts it draws.

    >>> field_size(SeasonEvent("L1", ("A", "B", Draw("L2", top=2))))
    4
    """
    return len(event.names()) + sum(d.count for d in event.draws())


def check_season(
    events: Sequence[SeasonEvent], engines: Sequence[str], aliases: Mapping[str, str] = {}
) -> None:
    """The season's consistency; a ValueError naming the event and what is wrong.  A field
    may name an engine by a name it had earlier in the season (`aliases`: old name to its
    engine's name now).

    >>> l2 = SeasonEvent("L2", ("A", "B", "C", "D"), promote=2)
    >>> l1 = SeasonEvent("L1", ("E", "F", Draw("L2", top=2)))
    >>> check_season([l2, l1], "ABCDEF")
    >>> check_season([l1, l2], "ABCDEF")
    Traceback (most recent call last):
    ...
    ValueError: [[event]] "L1": top 2 of L2 comes from an event played after it
    >>> check_season([l2, SeasonEvent("L1", (Draw("L2", top=5), "E"))], "ABCDEF")
    Traceback (most recent call last):
    ...
    ValueError: [[event]] "L1": top 5 of L2 is more than its field of 4
    """
    names = [e.name for e in events]
    for name in names:
        if names.count(name) > 1:
            raise ValueError(f'[[event]] "{name}": duplicate event name')
    graph: nx.DiGraph[str] = nx.DiGraph()
    graph.add_nodes_from(names)
    for event in events:
        for draw in event.draws():
            if draw.of not in names:
                raise ValueError(f'[[event]] "{event.name}": {draw}: no event is named {draw.of!r}')
            graph.add_edge(draw.of, event.name)
    try:
        cycle = nx.find_cycle(graph)
    except nx.NetworkXNoCycle:
        cycle = []
    if cycle:
        path = " -> ".join([*(a for a, _ in cycle), cycle[0][0]])
        raise ValueError(f'[[event]] "{cycle[0][1]}": a cycle between events: {path}')
    place = {name: i for i, name in enumerate(names)}
    known = set(engines) | set(aliases)
    for event in events:
        for draw in event.draws():
            if place[draw.of] > place[event.name]:
                raise ValueError(
                    f'[[event]] "{event.name}": {draw} comes from an event played after it'
                )
            size = field_size(next(e for e in events if e.name == draw.of))
            if draw.count > size:
                raise ValueError(
                    f'[[event]] "{event.name}": {draw} is more than its field of {size}'
                )
        for name in event.names():
            if name not in known:
                raise ValueError(f'[[event]] "{event.name}" field: no [[engine]] is named "{name}"')
            current = [aliases.get(n, n) for n in event.names()]
            if current.count(aliases.get(name, name)) > 1:
                raise ValueError(f'[[event]] "{event.name}" field: "{name}" is listed twice')
        size = field_size(event)
        if size < 2:
            raise ValueError(f'[[event]] "{event.name}" field: an event needs two engines')
        if event.promote + event.relegate > size:
            raise ValueError(
                f'[[event]] "{event.name}": promote {event.promote} and relegate '
                f"{event.relegate} move more engines than its field of {size}"
            )


class Undecided(Exception):
    """A cut that falls inside a tie no criterion broke: a director must order the tied
    engines (`season decide`); the season never guesses."""

    def __init__(self, event: str, draw: Draw, place: str, tied: Sequence[str]) -> None:
        super().__init__(
            f'[[event]] "{event}": {draw} cuts through place {place}, shared by '
            f"{', '.join(tied)}: a director decides their order (season decide)"
        )
        self.event = event
        self.draw = draw
        self.place = place
        self.tied = tuple(tied)


def _ordered(of: str, places: Places, decisions: Mapping[str, Sequence[str]]) -> list[str]:
    """The engines of `places` in order, a tie ordered by the director's decision for the
    event `of` where there is one (tied engines it does not name keep their order)."""
    order = {name: i for i, name in enumerate(decisions.get(of, ()))}
    groups: dict[str, list[str]] = {}
    for place, name in places:
        groups.setdefault(place, []).append(name)
    out: list[str] = []
    for names in groups.values():
        out += sorted(names, key=lambda n: order.get(n, len(order)))
    return out


def _split(
    event: str,
    draw: Draw,
    places: Places,
    decisions: Mapping[str, Sequence[str]],
    taken: Collection[str] = (),
) -> list[str]:
    """The engines `draw` takes of `places` (for `event`), passing over those `taken`
    (already in its field: the next place takes theirs); `Undecided` where its cut falls
    inside a shared place whose engines no director ordered."""
    left = [(place, name) for place, name in places if name not in taken]
    ordered = _ordered(draw.of, left, decisions)
    n = draw.count
    if n > len(ordered):
        raise ValueError(
            f'[[event]] "{event}": {draw}: {draw.of} has only {len(ordered)} engines that are '
            "not already in its field"
        )
    first_out = n if draw.top else len(ordered) - n  # the cut is before this index
    chosen = ordered[:n] if draw.top else ordered[first_out:]
    if 0 < first_out < len(ordered):
        place_of = {name: place for place, name in left}
        place = place_of[ordered[first_out - 1]]
        if place == place_of[ordered[first_out]]:
            tied = [name for p, name in left if p == place]
            if not all(name in decisions.get(draw.of, ()) for name in tied):
                raise Undecided(event, draw, place, tied)
    return chosen


def renamed(
    aliases: Mapping[str, str],
    places: Mapping[str, Places],
    decisions: Mapping[str, Sequence[str]] = {},
) -> tuple[dict[str, list[tuple[str, str]]], dict[str, list[str]]]:
    """`places` and `decisions` with each engine under its name now (`aliases`: a name it
    had earlier in the season, to its name now): an engine renamed for a new version keeps
    its places.

    >>> renamed({"D": "Dee"}, {"L2": [("1", "D"), ("2", "C")]}, {"L2": ["D", "C"]})
    ({'L2': [('1', 'Dee'), ('2', 'C')]}, {'L2': ['Dee', 'C']})
    """
    return (
        {e: [(p, aliases.get(n, n)) for p, n in rows] for e, rows in places.items()},
        {e: [aliases.get(n, n) for n in names] for e, names in decisions.items()},
    )


def resolve_field(
    event: SeasonEvent,
    places: Mapping[str, Places],
    decisions: Mapping[str, Sequence[str]] = {},
    aliases: Mapping[str, str] = {},
) -> tuple[str, ...]:
    """`event`'s field: its named engines, then each draw's engines in their order of
    finish.  An engine already in the field (named, or brought by an earlier draw) is
    passed over: the next place takes its seat.  `Undecided` where a draw's cut falls inside
    a tie no director ordered.  Engines are named as they are now (`aliases`, `renamed`).

    >>> l2 = [("1", "A"), ("2-3", "B"), ("2-3", "C"), ("4", "D")]
    >>> resolve_field(SeasonEvent("L1", ("E", Draw("L2", top=1))), {"L2": l2})
    ('E', 'A')
    >>> resolve_field(SeasonEvent("L1", ("E", Draw("L2", top=2))), {"L2": l2})
    Traceback (most recent call last):
    ...
    orchestrator.core.season.Undecided: [[event]] "L1": top 2 of L2 cuts through place 2-3, \
shared by B, C: a director decides their order (season decide)
    >>> resolve_field(SeasonEvent("L1", ("E", Draw("L2", top=2))), {"L2": l2}, {"L2": ["C", "B"]})
    ('E', 'A', 'C')
    >>> resolve_field(SeasonEvent("L1", ("A", Draw("L2", top=1))), {"L2": l2}, {"L2": ["C", "B"]})
    ('A', 'C')
    """
    places, decisions = renamed(aliases, places, decisions)
    field = [aliases.get(n, n) for n in event.names()]
    for draw in event.draws():
        field += _split(event.name, draw, places[draw.of], decisions, field)
    return tuple(field)


def movers(
    event: SeasonEvent, places: Places, decisions: Mapping[str, Sequence[str]] = {}
) -> tuple[list[str], list[str]]:
    """Who leaves `event` between seasons: its top `promote` and its bottom `relegate`, in
    their order of finish, a tie at either cut ordered by a director (`Undecided` until
    then).

    >>> league = SeasonEvent("L2", ("A", "B", "C", "D"), promote=1, relegate=1)
    >>> movers(league, [("1", "A"), ("2", "B"), ("3-4", "C"), ("3-4", "D")], {"L2": ["D", "C"]})
    (['A'], ['C'])
    """
    up = _split(event.name, Draw(event.name, top=event.promote), places, decisions) if (
        event.promote
    ) else []  # fmt: skip
    down = _split(event.name, Draw(event.name, bottom=event.relegate), places, decisions) if (
        event.relegate
    ) else []  # fmt: skip
    return up, down


def next_memberships(
    events: Sequence[SeasonEvent],
    fields: Mapping[str, Sequence[str]],
    places: Mapping[str, Places],
    decisions: Mapping[str, Sequence[str]] = {},
    aliases: Mapping[str, str] = {},
) -> dict[str, list[str]]:
    """The named engines of each league next season: those that played it (`fields`) less
    its top `promote` and bottom `relegate`, with the bottom `relegate` of the league above
    (the event its top are drawn into).  Events that neither promote nor relegate are left
    out (their fields stay as written).  Engines are named as they are now (`aliases`).

    >>> l2 = SeasonEvent("L2", ("A", "B", "C", "D"), promote=1, relegate=1)
    >>> l1 = SeasonEvent("L1", ("E", "F", "G", Draw("L2", top=1)), relegate=1)
    >>> fields = {"L2": ["A", "B", "C", "D"], "L1": ["E", "F", "G", "A"]}
    >>> places = {"L2": [("1", "A"), ("2", "B"), ("3", "C"), ("4", "D")],
    ...           "L1": [("1", "A"), ("2", "E"), ("3", "F"), ("4", "G")]}
    >>> next_memberships([l2, l1], fields, places)
    {'L2': ['B', 'C', 'G'], 'L1': ['E', 'F', 'A']}
    """
    places, decisions = renamed(aliases, places, decisions)
    moved = {
        event.name: movers(event, places[event.name], decisions)
        for event in events
        if event.promote or event.relegate
    }
    above = {
        draw.of: event.name for event in events for draw in event.draws() if draw.top is not None
    }
    out: dict[str, list[str]] = {}
    for event in events:
        if event.name not in moved:
            continue
        up, down = moved[event.name]
        played = [aliases.get(n, n) for n in fields[event.name]]
        stayed = [n for n in played if n not in up and n not in down]
        league_above = above.get(event.name)
        coming_down = moved.get(league_above, ([], []))[1] if league_above else []
        out[event.name] = stayed + [n for n in coming_down if n not in stayed]
    return out
