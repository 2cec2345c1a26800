"""Operator controls: what a tournament director may ask of an event, checked when asked and
applied by the daemon.

A control is stored in the database first (`request`), so it works the same whether a daemon
runs or not: a running daemon applies it within a second, a stopped one when it starts.
Applying it (`plan`) turns it into the changes of one committed transaction, together with
the control's outcome, which the audit log keeps.
"""

from __future__ import annotations

import getpass
import json
import shlex
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, cast

from orchestrator.core.errors import OrchestratorError
from orchestrator.core.event.model import RESULTS, Result
from orchestrator.core.game.record import Cp, GameRecord, Mate, MoveRecord, Termination
from orchestrator.core.pairing.teams import board_tags
from orchestrator.event.read import STRIKES, EventView, view_of
from orchestrator.game.pgn import amend, to_pgn
from orchestrator.store import changes
from orchestrator.store.database import Change, ControlRow, GameRow, RoundRow, Store

KINDS = ("pause", "resume", "adjudicate", "replay", "withdraw", "engine-update", "pair-manual")
#: controls whose changes touch results, pairings or engines: the outputs are rewritten
CHANGES_RESULTS = frozenset({"adjudicate", "replay", "withdraw", "pair-manual"})


class ControlRefused(OrchestratorError):
    """A control that cannot be applied; the message says why, naming the game or engine."""


@dataclass(frozen=True)
class Request:
    """A control as asked for: its kind, its arguments and the director's reason."""

    kind: str
    args: dict[str, Any] = field(default_factory=dict)
    reason: str | None = None


@dataclass(frozen=True)
class Plan:
    """What applying a control does: its changes, in one transaction, and its outcome."""

    changes: list[Change]
    outcome: str


def check(request: Request, view: EventView) -> None:
    """Refuse, in one line naming the game or engine, a control that cannot apply now.

    >>> from orchestrator.event.sample import sample_view
    >>> view = sample_view()
    >>> check(Request("adjudicate", {"game": 2, "result": "1-0"}, "crash"), view)
    >>> for args in ({"game": 99, "result": "1-0"}, {"game": 2, "result": "1:0"}):
    ...     try:
    ...         check(Request("adjudicate", args, "why"), view)
    ...     except ControlRefused as refused:
    ...         print(refused)
    no game 99 (the games of pairings --json)
    '1:0' is not a PGN result (1-0, 0-1 or 1/2-1/2)
    """
    if request.kind not in KINDS:
        raise ControlRefused(f"unknown control {request.kind!r}")
    if request.kind not in ("pause", "resume") and not (request.reason or "").strip():
        raise ControlRefused(f"{request.kind} needs --reason")
    if view.finished and request.kind != "resume":
        raise ControlRefused(f"the event {view.name!r} is finished")
    if request.kind == "adjudicate":
        result = request.args.get("result")
        if result not in RESULTS:
            raise ControlRefused(f"{result!r} is not a PGN result (1-0, 0-1 or 1/2-1/2)")
        _changeable(view, _game(view, request.args.get("game")))
    elif request.kind == "replay":
        game = _game(view, request.args.get("game"))
        if game.status == "pending" and not any(a.game == game.id for a in view.attempts):
            raise ControlRefused(f"game {game.id} has not been played yet: nothing to replay")
        if game.forfeit:
            raise ControlRefused(f"game {game.id} is a forfeit: its engine withdrew")
        _changeable(view, game)
    elif request.kind == "pair-manual":
        _manual_round(view, request.args)
    elif request.kind in ("withdraw", "engine-update"):
        engine = _engine(view, request.args.get("engine"))
        if request.kind == "withdraw" and engine in view.withdrawals:
            raise ControlRefused(f"{engine!r} has already withdrawn")


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


def _manual_round(view: EventView, args: dict[str, Any]) -> int:
    """Check a `pair-manual` control; the number of the paired round it replaces (0: the
    round is not paired yet)."""
    number, pairs = args.get("round"), args.get("pairs")
    last = view.rounds[-1] if view.rounds else None
    next_number = (last.number if last else 0) + 1
    if not isinstance(number, int) or isinstance(number, bool):
        raise ControlRefused(f"{number!r} is not a round number")
    if view.settings.system == "round-robin":
        raise ControlRefused("a round robin's pairings are its table: none can be fixed")
    if view.settings.system == "team-swiss":
        raise ControlRefused("a team Swiss pairs whole teams: its games cannot be fixed one by one")
    if number > view.settings.rounds:
        raise ControlRefused(f"the event has {view.settings.rounds} rounds, not {number}")
    replaces = 0
    if last is not None and number == last.number:
        if any(_started(view, g) for g in last.games):
            raise ControlRefused(f"round {number} has started: its pairing can no longer change")
        replaces = number
    elif number != next_number:
        raise ControlRefused(
            f"round {number} cannot be paired by hand now: the next round to pair is {next_number}"
        )
    if not isinstance(pairs, list) or not pairs:
        raise ControlRefused("pair-manual needs at least one pair WHITE-BLACK")
    seen: set[str] = set()
    for pair in pairs:
        if not (isinstance(pair, list | tuple) and len(pair) == 2):
            raise ControlRefused(f"{pair!r} is not a pair of engines")
        for name in pair:
            engine = _engine(view, name)
            if engine in view.withdrawals:
                raise ControlRefused(f"{engine!r} has withdrawn")
            if engine in seen:
                raise ControlRefused(f"{engine!r} is in two pairs")
            seen.add(engine)
    return replaces


def fixed_pairs(stored: list[ControlRow], number: int) -> tuple[tuple[str, str], ...]:
    """The pairs a director fixed for round `number`: the last applied `pair-manual`."""
    found: tuple[tuple[str, str], ...] = ()
    for control in stored:
        if control.kind != "pair-manual" or control.applied_at is None:
            continue
        if (control.outcome or "").startswith("refused"):
            continue
        args = json.loads(control.args)
        if args.get("round") == number:
            found = tuple((str(a), str(b)) for a, b in args["pairs"])
    return found


def _game(view: EventView, game_id: object) -> GameRow:
    game = view.game(game_id) if isinstance(game_id, int) else None
    if game is None:
        raise ControlRefused(f"no game {game_id} (the games of pairings --json)")
    return game


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
    store: Store, asked: Request, command: list[str] | None = None, user: str | None = None
) -> int:
    """Check `asked` against the stored event and store it for the daemon; its id.  The
    audit entry names `user` (the OS user by default) and `command` (the command line).

    >>> import asyncio
    >>> from orchestrator.event.sample import sample_database
    >>> async def ask(db):
    ...     store = await Store.open(db)
    ...     try:
    ...         number = await request(store, Request("pause"), ["orchestrator", "pause"], "td")
    ...         return number, [(c.kind, c.user, c.applied_at) for c in await store.controls()]
    ...     finally:
    ...         await store.close()
    >>> asyncio.run(ask(sample_database()))
    (1, [('pause', 'td', None)])
    """
    check(asked, await view_of(store))
    line = shlex.join(command if command is not None else ["orchestrator", *sys.argv[1:]])
    args = json.dumps(asked.args, sort_keys=True)
    return await store.add_control(user or getpass.getuser(), line, asked.kind, args, asked.reason)


# applying --------------------------------------------------------------------------------------


async def plan(store: Store, control: ControlRow, site: str = "?") -> Plan:
    """The changes and outcome of a stored control against the event as it is now; a
    control that can no longer apply (the round moved on) is refused, with the reason as
    its outcome.  The daemon has already stopped any game the control ends.

    >>> import asyncio
    >>> from orchestrator.event.sample import sample_database
    >>> async def adjudicate(db):
    ...     store = await Store.open(db)
    ...     try:
    ...         asked = Request("adjudicate", {"game": 2, "result": "0-1"}, "crash")
    ...         await request(store, asked, ["orchestrator"], "td")
    ...         (control,) = await store.controls(pending=True)
    ...         return (await plan(store, control)).outcome
    ...     finally:
    ...         await store.close()
    >>> asyncio.run(adjudicate(sample_database()))
    'game 2: 0-1 by adjudication'
    """
    view = await view_of(store)
    asked = Request(control.kind, json.loads(control.args), control.reason)
    try:
        check(asked, view)
        return await _plan(store, view, asked, site, control.id)
    except ControlRefused as refused:
        return Plan([], f"refused: {refused}")


async def _plan(store: Store, view: EventView, asked: Request, site: str, control: int) -> Plan:
    args, reason = asked.args, asked.reason or ""
    if asked.kind in ("pause", "resume"):
        now = " (running games aborted)" if args.get("now") else ""
        return Plan(changes.paused(asked.kind == "pause"), f"{asked.kind}d{now}")
    if asked.kind == "engine-update":
        command = args.get("command")
        update = changes.engine_updated(args["engine"], command, args.get("options", {}), control)
        return Plan(update, f"{args['engine']}: new {_what(args)} from its next game")
    if asked.kind == "withdraw":
        return await _withdraw(store, view, args["engine"], reason, site)
    if asked.kind == "pair-manual":
        replaced = _manual_round(view, args)
        shown = ", ".join(f"{a}-{b}" for a, b in args["pairs"])
        again = " (its pairing made again)" if replaced else ""
        return Plan(
            changes.round_dropped(replaced) if replaced else [],
            f"round {args['round']}{again}: {shown} fixed; the system pairs the rest",
        )
    game = _game(view, args["game"])
    plan = [c for n in _changeable(view, game) for c in changes.round_dropped(n)]
    if asked.kind == "replay":
        plan += changes.game_voided(game.id, reason)
        if (r := _round_of(view, game)).finished_at is not None:
            plan += changes.round_reopened(r.number)
        return Plan(plan, f"game {game.id} voided, to be played again")
    result = cast(Result, args["result"])
    details = f"Adjudicated by the tournament director: {reason}"
    text = f"{_winner(result)} by the tournament director's decision: {reason}"
    if game.status == "finished" and game.pgn:
        pgn = amend(game.pgn, result, "adjudication", details)
        plan += changes.game_result(
            game.id, result, "adjudication", text, details=details, plies=game.plies or 0, pgn=pgn
        )
    else:
        record, attempt = await _record_so_far(store, view, game, result, text)
        pgn = _pgn(view, game, record, site, details)
        plan += changes.game_result(
            game.id,
            result,
            "adjudication",
            text,
            details=details,
            plies=record.plies,
            pgn=pgn,
            attempt=attempt,
        )
    return Plan(plan, f"game {game.id}: {result} by adjudication")


async def _withdraw(store: Store, view: EventView, engine: str, reason: str, site: str) -> Plan:
    """Withdrawn after the current round; its unplayed games of that round are forfeited
    (a win for the opponent) or cancelled, per `withdrawn_games`."""
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
            pgn = _pgn(view, g, record, site, text)
            plan += changes.game_result(
                g.id, result, "abandoned", text, details=text, pgn=pgn, forfeit=True
            )
        what = "forfeited"
    games = ", ".join(str(g.id) for g in unplayed) or "none"
    return Plan(plan, f"{engine} withdrawn after round {after}; unplayed games {what}: {games}")


def _round_of(view: EventView, game: GameRow) -> RoundRow:
    return next(r for r in view.rounds if r.number == game.round)


def _pgn(view: EventView, game: GameRow, record: GameRecord, site: str, details: str) -> str:
    """The PGN of a game the director decided, as the daemon writes a played one."""
    return to_pgn(
        record,
        event=view.name,
        site=site,
        round_tag=f"{game.round}.{game.number}",
        details=details,
        comments=view.settings.pgn_comments,
        rules=view.settings.adjudication,
        tags=board_tags(view.tournament.teams, game.white, game.black),
    )


def _winner(result: Result) -> str:
    return {"1-0": "White wins", "0-1": "Black wins", "1/2-1/2": "Draw"}[result]


def _what(args: dict[str, Any]) -> str:
    parts = []
    if args.get("command"):
        parts.append(f"command {shlex.join(args['command'])}")
    if args.get("options"):
        parts.append("options " + ", ".join(f"{k}={v}" for k, v in args["options"].items()))
    return " and ".join(parts)


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
    """The game as far as its last attempt got (none: just the opening), ended with
    `result` by the director; and that attempt."""
    attempts = [a for a in view.attempts if a.game == game.id and a.voided_at is None]
    attempt = attempts[-1].id if attempts and moves else None
    rows = await store.moves(attempt) if attempt is not None else []
    played = tuple(
        MoveRecord(
            uci=m["uci"],
            san=m["san"],
            book=bool(m["book"]),
            score=Mate(m["score_mate"])
            if m["score_mate"] is not None
            else (Cp(m["score_cp"]) if m["score_cp"] is not None else None),
            depth=m["depth"],
            seldepth=m["seldepth"],
            nodes=m["nodes"],
            time_ms=m["time_ms"],
            clock_ms=m["clock_ms"],
            reported_ms=m["reported_ms"],
            pv=tuple((m["pv"] or "").split()),
            nps=m["nps"],
            tbhits=m["tbhits"],
            hashfull=m["hashfull"],
        )
        for m in rows
    )
    if not played and game.opening is not None:  # the book moves, as a game would have them
        board = game.opening.board()
        book = []
        for uci in game.opening.moves:
            move = board.parse_uci(uci)
            book.append(MoveRecord(uci, board.san(move), book=True))
            board.push(move)
        played = tuple(book)
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
        start_fen=game.opening.fen if game.opening else None,
        opening=game.opening.name if game.opening else None,
        eco=game.opening.eco if game.opening else None,
        variation=game.opening.variation if game.opening else None,
        host=next((a.host for a in attempts if a.id == attempt), None),
    )
    return record, attempt


def strike_request(view: EventView, engine: str) -> Request | None:
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
    return Request("withdraw", {"engine": engine}, f"{len(games)} strikes: {listed}")


__all__ = [
    "KINDS",
    "STRIKES",
    "ControlRefused",
    "Plan",
    "Request",
    "check",
    "fixed_pairs",
    "plan",
    "request",
    "split_pair",
]
