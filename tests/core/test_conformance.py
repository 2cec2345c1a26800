"""Real TCEC events: `orchestrator pair` must reproduce every round exactly."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from orchestrator.cli import app
from orchestrator.core.event.seeding import group_seeding, interleave
from tests.support.paths import DATA, SHARED_TCEC, conformance

EVENTS = ["s20_swiss_test_2.json", "s20_swiss_test_4.json"]
SEEDINGS = ["seeding_swiss7.json", "seeding_swiss8.json", "seeding_swiss9.json"]


def _cases() -> list[tuple[str, int]]:
    return [(f, r) for f in EVENTS for r in range(len(conformance(f)["rounds"]))]


@pytest.mark.parametrize(("event", "played"), _cases())
def test_pair_reproduces_round(event: str, played: int) -> None:
    data = conformance(event)
    expected = data["rounds"][played]
    state = dict(data, rounds=data["rounds"][:played])
    result = CliRunner().invoke(app, ["pair", "-"], input=json.dumps(state))
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["round"] == played + 1
    assert out["bye"] == expected["bye"]
    assert out["dropped_rounds"] == 0
    want = [{"white": g["white"], "black": g["black"]} for g in expected["games"]]
    assert out["games"] == want


def test_events_exercise_every_colour_criterion() -> None:
    """The single-round event really reaches the WGD, score and 2112 colour rules."""
    from orchestrator.core.event.model import Tournament
    from orchestrator.core.event.state_json import decode
    from orchestrator.core.pairing.swiss import replay

    data = conformance("s20_swiss_test_2.json")
    used = {"wgd": 0, "score": 0, "pattern": 0}
    for played in range(1, len(data["rounds"])):
        t: Tournament = decode(dict(data, rounds=data["rounds"][:played]))
        state = replay(t)
        index = {n: i for i, n in enumerate(state.names)}
        for g in data["rounds"][played]["games"]:
            w, b = index[g["white"]], index[g["black"]]
            if state.wgd[w] != state.wgd[b]:
                used["wgd"] += 1
            elif state.score[w] != state.score[b]:
                used["score"] += 1
            else:
                used["pattern"] += 1
    assert all(used.values()), used


@pytest.mark.parametrize("name", SEEDINGS)
def test_group_seeding_lists(name: str) -> None:
    data = conformance(name)
    groups = list(data["groups"].values())
    strongest_first = [name for group in groups for name in group]
    by_seed = [p["name"] for p in sorted(data["players"], key=lambda p: p["seed"])]
    assert interleave(groups) == by_seed
    # the same list from the strength order alone: 44 players in 10 groups, 5 5 5 5 4 4 ...
    assert group_seeding(strongest_first, len(groups)) == by_seed


@pytest.mark.parametrize("name", EVENTS + SEEDINGS)
def test_vendored_copy_matches_shared(name: str) -> None:
    shared = SHARED_TCEC / name
    if not SHARED_TCEC.is_dir():
        pytest.skip("the shared folder is not beside this clone")
    assert (DATA / "tcec" / name).read_bytes() == shared.read_bytes()
