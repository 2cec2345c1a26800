"""The audit log of an event: every control, engine fault, strike, withdrawal and engine
update, in the order they happened."""

from __future__ import annotations

from pathlib import Path

from orchestrator.event.api import AuditEntry
from orchestrator.event.controls import ControlRefused, Withdraw, decode
from orchestrator.event.read import STRIKES, reading

__all__ = ["audit_log"]


async def audit_log(db: Path) -> list[AuditEntry]:
    """The entries of `db`'s audit log, oldest first; each has `at`, `what` and `text`.

    >>> import asyncio
    >>> from orchestrator.event.sample import sample_database
    >>> asyncio.run(audit_log(sample_database()))
    []
    """
    entries: list[AuditEntry] = []
    withdrawn_at: dict[str, str] = {}  # engine: when its last withdrawal was applied
    async with reading(db) as (view, store):
        for c in await store.controls():
            try:
                control = decode(c)
            except ControlRefused:
                control = None
            args = control.args() if control is not None else {}
            if isinstance(control, Withdraw) and c.applied_at:
                withdrawn_at[control.engine] = c.applied_at
            state = f"applied {c.applied_at}: {c.outcome}" if c.applied_at else "pending"
            entries.append(
                {
                    "at": c.requested_at,
                    "what": "control",
                    "id": c.id,
                    "kind": c.kind,
                    "args": args,
                    "user": c.user,
                    "command": c.command,
                    "reason": c.reason,
                    "applied_at": c.applied_at,
                    "outcome": c.outcome,
                    "text": f"{c.kind} by {c.user} ({c.reason or 'no reason given'}); {state}",
                }
            )
        for r in view.rounds:
            for g in r.games:
                if g.fault is None:
                    continue
                strike = g.fault.kind in STRIKES
                entries.append(
                    {
                        "at": g.ended_at or "",
                        "what": "strike" if strike else "fault",
                        "engine": g.fault.engine,
                        "kind": g.fault.kind,
                        "detail": g.fault.detail,
                        "game": g.id,
                        "round": r.number,
                        "text": f"{g.fault.engine}: {g.fault.kind} in game {g.id} "
                        f"(round {r.number}): {g.fault.detail}",
                    }
                )
        for name, (after, reason) in view.withdrawals.items():
            entries.append(
                {
                    "at": withdrawn_at.get(name, ""),
                    "what": "withdrawal",
                    "engine": name,
                    "after_round": after,
                    "reason": reason,
                    "text": f"{name} withdrawn after round {after}: {reason}",
                }
            )
        for u in await store.engine_updates():
            first = f"from game {u.first_game}" if u.first_game else "from its next game"
            entries.append(
                {
                    "at": u.applied_at,
                    "what": "engine_update",
                    "engine": u.engine,
                    "command": list(u.command) if u.command else None,
                    "options": u.options,
                    "first_game": u.first_game,
                    "text": f"{u.engine}: command {u.command or 'unchanged'}, "
                    f"options {u.options or 'unchanged'}, {first}",
                }
            )
    return sorted(entries, key=lambda e: e["at"])
