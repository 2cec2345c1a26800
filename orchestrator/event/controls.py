"""Operator controls (docs/controls.md): what a tournament director may ask of an event, one
class per kind, each with its check, its plan and its description.

A control is stored in the database first (`request`), so it works the same whether a daemon
runs or not: a running daemon applies it within a second, a stopped one when it starts.
Applying it (`plan`) turns it into the changes of one committed transaction, together with
the control's outcome, which the audit log keeps.  The daemon, the command line and the audit
log tell the kinds apart by their class.
"""

from __future__ import annotations

import contextlib
import dataclasses
import getpass
import json
import shlex
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import ClassVar

import msgspec

from orchestrator.config.model import OptionValue
from orchestrator.core.codec import SchemaError, convert, to_builtins
from orchestrator.core.errors import OrchestratorError
from orchestrator.core.event.model import RESULTS, Result
from orchestrator.core.game.openings import START
from orchestrator.core.game.record import GameRecord, Termination
from orchestrator.core.pairing.registry import lookup
from orchestrator.core.pairing.teams import board_tags
from orchestrator.event.export import round_tag
from orchestrator.event.read import STRIKES, EventView, view_of
from orchestrator.game.pgn import amend, elo_tags, to_pgn
from orchestrator.store import changes
from orchestrator.store.database import (
    EVENT_FINISHED,
    Change,
    ControlRow,
    GameRow,
    RoundRow,
    Store,
)

__all__ = [
    "STRIKES",
    "Adjudicate",
    "AnyControl",
    "Control",
    "ControlRefused",
    "EngineUpdate",
    "PairManual",
    "Pause",
    "Plan",
    "Replay",
    "Resume",
    "Withdraw",
    "decode",
    "fixed_pairs",
    "plan",
    "request",
    "split_pair",
    "strike_request",
]


class ControlRefused(OrchestratorError):
    """A control that cannot be applied; the message says why, naming the game or engine."""


@dataclass(frozen=True)
class Plan:
    """What applying a control does: its changes, in one transaction, and its outcome."""

    changes: list[Change]
    outcome: str


class Control(msgspec.Struct, frozen=True, kw_only=True, tag_field="kind"):
    """A director's control, as asked for and as stored (its `kind` is its class's tag)."""

    reason: str | None = None

    #: whether the director must say why
    needs_reason: ClassVar[bool] = True
    #: whether applying it changes results, pairings or engines (the outputs are rewritten)
    changes_results: ClassVar[bool] = False

    @property
    def kind(self) -> str:
        """The control's name, as the command line and the audit log give it."""
        return str(type(self).__struct_config__.tag)

    def args(self) -> dict[str, object]:
        """Its arguments, as stored."""
        plain: dict[str, object] = to_builtins(self)
        plain.pop("kind")
        plain.pop("reason")
        return plain

    def check(self, view: EventView) -> None:
        """Refuse, in one line naming the game or engine, a control that cannot apply now."""
        if self.needs_reason and not (self.reason or "").strip():
            raise ControlRefused(f"{self.kind} needs --reason")
        if view.finished:
            raise ControlRefused(f"the event {view.name!r} is finished")
        self._check(view)

    def _check(self, view: EventView) -> None:
        """The checks of the kind."""

    async def plan(self, store: Store, view: EventView, site: str, control: int) -> Plan:
        """Its changes and its outcome against the event as it is now (checked already)."""
        raise NotImplementedError  # every kind has its own

    def ends(self, running: Mapping[int, tuple[str, str]]) -> list[int]:
        """The running games (id: players) it stops: their attempts are aborted first."""
        return []


class Pause(Control, frozen=True, kw_only=True, tag="pause"):
    """No new game starts; with `now`, the running games are aborted (replayed later)."""

    now: bool = False
    needs_reason: ClassVar[bool] = False

    async def plan(self, store: Store, view: EventView, site: str, control: int) -> Plan:
        now = " (running games aborted)" if self.now else ""
        return Plan(changes.paused(True), f"paused{now}")

    def ends(self, running: Mapping[int, tuple[str, str]]) -> list[int]:
        return list(running) if self.now else []


class Resume(Control, frozen=True, kw_only=True, tag="resume"):
    """Games start again."""

    needs_reason: ClassVar[bool] = False

    async def plan(self, store: Store, view: EventView, site: str, control: int) -> Plan:
        return Plan(changes.paused(False), "resumed")


class _GameControl(Control, frozen=True, kw_only=True):
    """A control of one game (`pairings --json`'s id)."""

    game: int
    changes_results: ClassVar[bool] = True

    def ends(self, running: Mapping[int, tuple[str, str]]) -> list[int]:
        return [self.game] if self.game in running else []

    def row(self, view: EventView) -> GameRow:
        game = view.game(self.game)
        if game is None:
            raise ControlRefused(f"no game {self.game} (the games of pairings --json)")
        return game

    def played(self, view: EventView, game: GameRow) -> bool:
        """Whether the game has been played (finished), or begun by an attempt that was
        not voided since."""
        return game.status != "pending" or any(
            a.game == game.id and a.voided_at is None for a in view.attempts
        )


class Adjudicate(_GameControl, frozen=True, kw_only=True, tag="adjudicate"):
    """A running game ends at once with `result`; a finished one has its result corrected.

    >>> from orchestrator.event.sample import sample_view
    >>> view = sample_view()
    >>> Adjudicate(game=1, result="1/2-1/2", reason="a wrong tablebase").check(view)
    >>> for game, result in ((99, "1-0"), (1, "1:0"), (2, "1-0")):
    ...     try:
    ...         Adjudicate(game=game, result=result, reason="why").check(view)
    ...     except ControlRefused as refused:
    ...         print(refused)
    no game 99 (the games of pairings --json)
    '1:0' is not a PGN result (1-0, 0-1 or 1/2-1/2)
    game 2 has not started: only a game being played, or played, is adjudicated (withdraw ...
    """

    result: str

    def _check(self, view: EventView) -> None:
        if self.result not in RESULTS:
            raise ControlRefused(f"{self.result!r} is not a PGN result (1-0, 0-1 or 1/2-1/2)")
        game = self.row(view)
        if not self.played(view, game):
            raise ControlRefused(
                f"game {game.id} has not started: only a game being played, or played, is "
                "adjudicated (withdraw an engine that will not play)"
            )
        _changeable(view, game)

    async def plan(self, store: Store, view: EventView, site: str, control: int) -> Plan:
        game = self.row(view)
        result: Result = next(r for r in RESULTS if r == self.result)
        reason = self.reason or ""
        plan = [c for n in _changeable(view, game) for c in changes.round_dropped(n)]
        details = DIRECTOR_WORDS
        text = f"{_winner(result)} by the tournament director's decision: {reason}"
        stored = await store.game_pgn(game.id) if game.status == "finished" else None
        final_fen = None
        if stored:
            pgn = amend(stored, result, "adjudication", details)
            plies, attempt, goal = game.plies or 0, None, game.rmobility
        else:
            record, attempt = await _record_so_far(store, view, game, result, text)
            pgn, plies = _pgn(view, game, record, site, details), record.plies
            goal, final_fen = record.rmobility_result(), record.last_fen()
        plan += changes.game_result(
            game.id,
            result,
            "adjudication",
            text,
            details=details,
            plies=plies,
            pgn=pgn,
            attempt=attempt,
            rmobility=goal,
            final_fen=final_fen,
        )
        return Plan(plan, f"game {game.id}: {result} by adjudication")


class Replay(_GameControl, frozen=True, kw_only=True, tag="replay"):
    """The game is voided and played again from its opening."""

    def _check(self, view: EventView) -> None:
        game = self.row(view)
        if not self.played(view, game):
            raise ControlRefused(
                f"game {game.id} has not been played since it was paired or voided: "
                "nothing to replay"
            )
        if game.forfeit:
            raise ControlRefused(f"game {game.id} is a forfeit: its engine withdrew")
        _changeable(view, game)

    async def plan(self, store: Store, view: EventView, site: str, control: int) -> Plan:
        game = self.row(view)
        plan = [c for n in _changeable(view, game) for c in changes.round_dropped(n)]
        plan += changes.game_voided(game.id, self.reason or "")
        if (r := _round_of(view, game)).finished_at is not None:
            plan += changes.round_reopened(r.number)
        return Plan(plan, f"game {game.id} voided, to be played again")


class _EngineControl(Control, frozen=True, kw_only=True):
    """A control of one engine."""

    engine: str

    def _check(self, view: EventView) -> None:
        _engine(view, self.engine)


class Withdraw(_EngineControl, frozen=True, kw_only=True, tag="withdraw"):
    """The engine is left out of every later pairing and BYE; its unplayed games of the
    current round are forfeited (a win for the opponent) or cancelled, per
    `withdrawn_games`."""

    changes_results: ClassVar[bool] = True

    def _check(self, view: EventView) -> None:
        super()._check(view)
        if self.engine in view.withdrawals:
            raise ControlRefused(f"{self.engine!r} has already withdrawn")
        if self.engine in pending_withdrawals(view):
            raise ControlRefused(f"{self.engine!r}'s withdrawal is already asked for")
        after = view.rounds[-1].number if view.rounds else 0
        if after >= view.settings.rounds:
            return  # no round is left to pair: nothing can be wedged
        leaving = {self.engine, *pending_withdrawals(view)}
        t = view.tournament
        left = msgspec.structs.replace(
            t,
            players=tuple(
                msgspec.structs.replace(p, withdrawn_after=after) if p.name in leaving else p
                for p in t.players
            ),
        ).playing(after + 1)
        if left < 2:
            who = "team" if t.teams else "engine"
            also = " (with the withdrawals already asked for)" if len(leaving) > 1 else ""
            raise ControlRefused(
                f"withdrawing {self.engine!r} would leave {left} {who}{'s' if left != 1 else ''} "
                f"to play rounds {after + 1} to {view.settings.rounds}{also}: an event needs "
                "two (the event could not go on)"
            )

    def ends(self, running: Mapping[int, tuple[str, str]]) -> list[int]:
        return [game for game, players in running.items() if self.engine in players]

    async def plan(self, store: Store, view: EventView, site: str, control: int) -> Plan:
        engine, reason = self.engine, self.reason or ""
        after = view.rounds[-1].number if view.rounds else 0
        plan = changes.player_withdrawn(engine, after, reason)
        unplayed = [
            g
            for g in (view.rounds[-1].games if view.rounds else ())
            if engine in (g.white, g.black) and g.status != "finished"
        ]
        if view.settings.withdrawn_games == "cancel":
            plan += changes.games_dropped([g.id for g in unplayed])
            what = "cancelled"
        else:
            for g in unplayed:
                result: Result = "0-1" if g.white == engine else "1-0"
                text = f"{_winner(result)} by forfeit: {engine} withdrew ({reason})"
                record, _ = await _record_so_far(
                    store, view, g, result, text, moves=False, termination="abandoned"
                )
                words = f"{'White' if g.white == engine else 'Black'} forfeits"
                pgn = _pgn(view, g, record, site, words)
                plan += changes.game_result(
                    g.id, result, "abandoned", text, details=words, pgn=pgn, forfeit=True
                )
            what = "forfeited"
        games = ", ".join(str(g.id) for g in unplayed) or "none"
        outcome = f"{engine} withdrawn after round {after}; unplayed games {what}: {games}"
        fixed = fixed_by(view.controls, after + 1)
        dropped = [pair for pair in fixed[1] if engine in pair] if fixed else []
        if fixed and dropped:
            shown = ", ".join(f"{a}-{b}" for a, b in dropped)
            outcome += (
                f"; its fixed pair {shown} of round {after + 1} (control {fixed[0]}) is dropped"
            )
        return Plan(plan, outcome)


class EngineUpdate(_EngineControl, frozen=True, kw_only=True, tag="engine-update"):
    """A new command or new options for the engine, from its next game on."""

    command: tuple[str, ...] | None = None
    options: dict[str, OptionValue] = msgspec.field(default_factory=dict)

    async def plan(self, store: Store, view: EventView, site: str, control: int) -> Plan:
        update = changes.engine_updated(self.engine, self.command, self.options, control)
        return Plan(update, f"{self.engine}: new {self.what()} from its next game")

    def what(self) -> str:
        """What changes, in words.

        >>> EngineUpdate(engine="E", options={"Hash": 64}).what()
        'options Hash=64'
        """
        parts = []
        if self.command:
            parts.append(f"command {shlex.join(self.command)}")
        if self.options:
            parts.append("options " + ", ".join(f"{k}={v}" for k, v in self.options.items()))
        return " and ".join(parts)


class PairManual(Control, frozen=True, kw_only=True, tag="pair-manual"):
    """Some or all pairs of `round` fixed by hand (white first); the system pairs the rest.

    >>> from orchestrator.event.sample import sample_view
    >>> PairManual(round=1, pairs=(("A", "B"),), reason="why").check(sample_view())
    Traceback (most recent call last):
    ...
    orchestrator.event.controls.ControlRefused: round 1 has started: its pairing can no longer ...
    """

    round: int
    pairs: tuple[tuple[str, str], ...]
    changes_results: ClassVar[bool] = True

    def _check(self, view: EventView) -> None:
        self._replaces(view)

    def _replaces(self, view: EventView) -> int:
        """The number of the paired round it replaces (0: the round is not paired yet)."""
        number = self.round
        last = view.rounds[-1] if view.rounds else None
        next_number = (last.number if last else 0) + 1
        for system in view.settings.systems():
            if lookup(system).unfixable:
                raise ControlRefused(lookup(system).unfixable)
        if number > view.settings.rounds:
            raise ControlRefused(f"the event has {view.settings.rounds} rounds, not {number}")
        replaces = 0
        if last is not None and number == last.number:
            if any(_started(view, g) for g in last.games):
                raise ControlRefused(
                    f"round {number} has started: its pairing can no longer change"
                )
            replaces = number
        elif number != next_number:
            raise ControlRefused(
                f"round {number} cannot be paired by hand now: the next round to pair is "
                f"{next_number}"
            )
        if not self.pairs:
            raise ControlRefused("pair-manual needs at least one pair WHITE-BLACK")
        seen: set[str] = set()
        leaving = pending_withdrawals(view)
        for pair in self.pairs:
            for name in pair:
                engine = _engine(view, name)
                if engine in view.withdrawals or engine in leaving:
                    raise ControlRefused(f"{engine!r} has withdrawn")
                if engine in seen:
                    raise ControlRefused(f"{engine!r} is in two pairs")
                seen.add(engine)
        return replaces

    async def plan(self, store: Store, view: EventView, site: str, control: int) -> Plan:
        replaced = self._replaces(view)
        shown = ", ".join(f"{a}-{b}" for a, b in self.pairs)
        again = " (its pairing made again)" if replaced else ""
        before = fixed_by(view.controls, self.round)
        instead = ""
        if before is not None:
            earlier = ", ".join(f"{a}-{b}" for a, b in before[1])
            instead = f" in place of {earlier} (control {before[0]})"
        return Plan(
            changes.round_dropped(replaced) if replaced else [],
            f"round {self.round}{again}: {shown} fixed{instead}; the system pairs the rest",
        )


#: every kind of control, told apart by `kind`
AnyControl = Pause | Resume | Adjudicate | Replay | Withdraw | EngineUpdate | PairManual


def decode(row: ControlRow) -> AnyControl:
    """A stored control as its class; `ControlRefused` when it cannot be read.

    >>> from orchestrator.store.database import ControlRow
    >>> row = ControlRow(1, "", "td", "", "replay", '{"game": 3}', "crash", None, None)
    >>> decode(row)
    Replay(reason='crash', game=3)
    """
    try:
        data = {"kind": row.kind, **json.loads(row.args), "reason": row.reason}
        return convert(data, AnyControl)  # type: ignore[arg-type]
    except (SchemaError, ValueError, TypeError) as exc:
        raise ControlRefused(f"control {row.id} ({row.kind}) cannot be read: {exc}") from None


def split_pair(text: str, names: list[str]) -> tuple[str, str]:
    """ "A-B" as (A, B), where A and B are engine names that may hold hyphens themselves.

    >>> split_pair("Fairy-Stockfish-Toga", ["Toga", "Fairy-Stockfish"])
    ('Fairy-Stockfish', 'Toga')
    >>> split_pair("A+B", ["A", "B"])
    Traceback (most recent call last):
    ...
    orchestrator.event.controls.ControlRefused: 'A+B' is not WHITE-BLACK, two engine names
    """
    known = set(names)
    splits = [
        (text[:i], text[i + 1 :])
        for i, char in enumerate(text)
        if char == "-" and text[:i] in known and text[i + 1 :] in known
    ]
    if len(splits) != 1:
        raise ControlRefused(f"{text!r} is not WHITE-BLACK, two engine names")
    return splits[0]


def fixed_by(
    stored: list[ControlRow], number: int
) -> tuple[int, tuple[tuple[str, str], ...]] | None:
    """The last applied `pair-manual` of round `number` (its id and pairs), if any: a later
    one replaces an earlier one."""
    found = None
    for row in stored:
        if row.kind != "pair-manual" or row.applied_at is None:
            continue
        if (row.outcome or "").startswith("refused"):
            continue
        control = decode(row)
        if isinstance(control, PairManual) and control.round == number:
            found = (row.id, control.pairs)
    return found


def fixed_pairs(
    stored: list[ControlRow], number: int, playing: set[str]
) -> tuple[tuple[str, str], ...]:
    """The pairs a director fixed for round `number` that can be played: a pair whose engine
    has withdrawn since is dropped (the withdrawal's outcome says so)."""
    fixed = fixed_by(stored, number)
    return tuple(pair for pair in fixed[1] if set(pair) <= playing) if fixed else ()


def pending_withdrawals(view: EventView) -> set[str]:
    """The engines whose withdrawal is asked for and not applied yet."""
    out = set()
    for row in view.controls:
        if row.kind == "withdraw" and row.applied_at is None:
            with contextlib.suppress(ControlRefused):
                control = decode(row)
                if isinstance(control, Withdraw):
                    out.add(control.engine)
    return out


def _engine(view: EventView, name: object) -> str:
    names = [p.name for p in view.tournament.by_seed()]
    if name not in names:
        raise ControlRefused(f"no engine named {name!r} (engines: {', '.join(names)})")
    return str(name)


def _started(view: EventView, game: GameRow) -> bool:
    return game.status != "pending" or any(a.game == game.id for a in view.attempts)


def _changeable(view: EventView, game: GameRow) -> list[int]:
    """The later rounds whose pairing must be made again if `game` changes (paired, but
    none of their games started); refused once a later round has started."""
    later = [r for r in view.rounds if r.number > game.round]
    for r in later:
        if any(_started(view, g) for g in r.games):
            raise ControlRefused(
                f"game {game.id} is of round {game.round}, and round {r.number} has started: "
                "it can no longer be changed"
            )
    return [r.number for r in later]


async def request(
    store: Store, asked: Control, command: list[str] | None = None, user: str | None = None
) -> int:
    """Check `asked` against the stored event and store it for the daemon; its id.  The
    audit entry names `user` (the OS user by default) and `command` (the command line).

    >>> import asyncio
    >>> from orchestrator.event.sample import sample_database
    >>> async def ask(db):
    ...     store = await Store.open(db)
    ...     try:
    ...         number = await request(store, Pause(), ["orchestrator", "pause"], "td")
    ...         return number, [(c.kind, c.user, c.applied_at) for c in await store.controls()]
    ...     finally:
    ...         await store.close()
    >>> asyncio.run(ask(sample_database()))
    (1, [('pause', 'td', None)])
    """
    asked.check(await view_of(store))
    line = shlex.join(command if command is not None else ["orchestrator", *sys.argv[1:]])
    args = json.dumps(asked.args(), sort_keys=True)
    stored = await store.add_control(
        user or getpass.getuser(), line, asked.kind, args, asked.reason
    )
    if stored is None:  # it finished after the check
        raise ControlRefused(EVENT_FINISHED)
    return stored


async def plan(store: Store, row: ControlRow, site: str = "?") -> tuple[AnyControl | None, Plan]:
    """A stored control and its changes and outcome against the event as it is now; a
    control that can no longer apply (the round moved on) is refused, with the reason as
    its outcome.  The daemon has already stopped any game the control ends.

    >>> import asyncio
    >>> from orchestrator.event.sample import sample_database
    >>> async def adjudicate(db):
    ...     store = await Store.open(db)
    ...     try:
    ...         asked = Adjudicate(game=1, result="0-1", reason="the clock was wrong")
    ...         await request(store, asked, ["orchestrator"], "td")
    ...         (row,) = await store.controls(pending=True)
    ...         return (await plan(store, row))[1].outcome
    ...     finally:
    ...         await store.close()
    >>> asyncio.run(adjudicate(sample_database()))
    'game 1: 0-1 by adjudication'
    """
    control: AnyControl | None = None
    try:
        control = decode(row)
        view = await view_of(store)
        # the event as it is when this control applies: the ones given after it come later
        applied = [c for c in view.controls if c.applied_at is not None]
        view = dataclasses.replace(view, controls=applied)
        control.check(view)
        return control, await control.plan(store, view, site, row.id)
    except ControlRefused as refused:
        return control, Plan([], f"refused: {refused}")


#: a result the director decided, in the words of TCEC's PGNs (TerminationDetails)
DIRECTOR_WORDS = "Manual adjudication"


def _round_of(view: EventView, game: GameRow) -> RoundRow:
    return next(r for r in view.rounds if r.number == game.round)


def _pgn(view: EventView, game: GameRow, record: GameRecord, site: str, details: str) -> str:
    """The PGN of a game the director decided, as the daemon writes a played one."""
    return to_pgn(
        record,
        event=view.name,
        site=site,
        round_tag=round_tag(game.round, game),
        details=details,
        comments=view.settings.pgn_comments,
        rules=view.settings.adjudication,
        tags=board_tags(view.tournament.teams, game.white, game.black)
        | elo_tags(view.settings.ratings.get(game.white), view.settings.ratings.get(game.black)),
    )


def _winner(result: Result) -> str:
    return {"1-0": "White wins", "0-1": "Black wins", "1/2-1/2": "Draw"}[result]


async def _record_so_far(
    store: Store,
    view: EventView,
    game: GameRow,
    result: Result,
    reason: str,
    *,
    moves: bool = True,
    termination: Termination = "adjudication",
) -> tuple[GameRecord, int | None]:
    """The game as far as its last attempt got (its book moves, then the engines' moves),
    ended with `result` by the director; and that attempt."""
    attempts = [a for a in await store.attempts(game.id) if a.voided_at is None]
    attempt = attempts[-1].id if attempts and moves else None
    rows = await store.moves(attempt) if attempt is not None else []
    opening = game.opening or START
    played = (*opening.book(), *(r.move for r in rows if not r.move.book))
    started = next((a.started_at for a in attempts if a.id == attempt), None)
    when = datetime.fromisoformat(started) if started else datetime.now(UTC)
    record = GameRecord(
        white=game.white,
        black=game.black,
        result=result,
        termination=termination,
        reason=reason,
        moves=played,
        started_at=when,
        ended_at=datetime.now(UTC),
        time_control=str(view.settings.tc),
        start_fen=opening.fen,
        chess960=opening.chess960,
        rules=opening.rules,
        opening=opening.name if opening.name != START.name else None,
        eco=opening.eco,
        variation=opening.variation,
        host=next((a.host for a in attempts if a.id == attempt), None),
    )
    return record, attempt


def strike_request(view: EventView, engine: str) -> Withdraw | None:
    """The withdrawal that `strikes` in [tournament] calls for, once `engine`'s strikes
    (crash, stall, illegal-move and startup faults) reach it; None before that.

    >>> from orchestrator.event.sample import sample_view
    >>> strike_request(sample_view(), "A") is None  # strikes are off, and A has none
    True
    """
    limit = view.settings.strikes
    games = view.strikes().get(engine, [])
    if not limit or len(games) < limit or engine in view.withdrawals:
        return None
    listed = "; ".join(
        f"game {g.id} {g.fault.kind}: {g.fault.detail}" for g in games if g.fault is not None
    )
    return Withdraw(engine=engine, reason=f"{len(games)} strikes: {listed}")
