"""`orchestrator pair` and `orchestrator simulate` give, byte for byte, the outputs recorded in
`tests/data/golden` (every pairing system, both formats, 20 seeds, and the TCEC states):
what a refactor of the pairing code must leave unchanged (`tests/support/golden.py`)."""

from __future__ import annotations

import json

from tests.support import golden


def test_pair_and_simulate_outputs_are_unchanged() -> None:
    stored = golden.stored()
    recorded = {(tuple(r["args"]), r["stdin"]): r for r in stored}
    assert len(stored) > 1000
    seen = 0
    for case in golden.cases():
        now = golden.record(case)
        old = recorded.get((tuple(now["args"]), now["stdin"]))
        assert old is not None, f"no recorded output for {now['args']}"
        if old != now:  # show the first difference of the parsed outputs
            assert json.loads(old["stdout"]) == json.loads(now["stdout"]), now["args"]
            assert old == now, now["args"]
        seen += 1
    assert seen == len(stored)
