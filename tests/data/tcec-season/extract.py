"""Extract TCEC Season 20's leagues from a checkout of TCEC-Chess/tcecgames into
season20.json: each league's games (round, White, Black, result, and the r-mobility result
`orchestrator/core/game/rmobility.py` finds from the game's moves; TCEC's PGNs of that season
carry no RMobilityResult tag).

    cd tests/data/tcec-season && python extract.py PATH/TO/tcecgames > season20.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import chess.pgn

from orchestrator.core.game.rmobility import g_score

LEAGUES = ("Qualification League", "League 4", "League 3", "League 2")


def games(path: Path) -> list[list[str]]:
    out = []
    with path.open(encoding="utf-8") as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            h = game.headers
            goal = g_score(game.board(), game.mainline_moves())
            out.append([h["Round"], h["White"], h["Black"], h["Result"], str(goal)])
    return out


def main() -> None:
    folder = Path(sys.argv[1]) / "master-archive"
    leagues = []
    for name in LEAGUES:
        file = f"TCEC_Season_20_-_{name.replace(' ', '_')}.pgn"
        leagues.append({"name": name, "file": file, "games": games(folder / file)})
    lines = ['{"leagues": [']
    for n, league in enumerate(leagues):
        lines.append(
            f' {{"name": {json.dumps(league["name"])}, "file": {json.dumps(league["file"])},'
        )
        lines.append('  "games": [')
        rows = [f"   {json.dumps(g)}" for g in league["games"]]
        lines.append(",\n".join(rows))
        lines.append("  ]}" + ("," if n < len(leagues) - 1 else ""))
    lines.append("]}")
    sys.stdout.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
