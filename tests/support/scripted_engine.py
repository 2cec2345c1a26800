#!/usr/bin/env python3
"""A small scripted chess engine (UCI or XBoard) whose behaviour the tests dictate.

Moves: `--moves "e2e4 g1f3"` are played first when legal; otherwise a deterministic choice
among the legal moves (seeded by `--seed` and the position).  "N" below is the engine's own
move number in the game (1 = its first move).

    --protocol uci|xboard      --name NAME           --score CP | --mate N (own view)
    --scores "10,20,..."       per own move           --depth D
    --crash-at N               exit(3) instead of answering
    --stall-at N               never answer
    --illegal-at N             answer an illegal move
    --garbage-at N             answer an unparseable move
    --flood-at N --flood-mb M  at move N, print M megabytes without a newline, then wait
    --spam-at N --spam-mb M    at move N, print M megabytes of `info string` lines, then move
    --stderr-at N              at move N, print "warning N from NAME" on stderr, then move
    --slow-start S             wait S seconds before the handshake
    --delay MS                 think MS milliseconds per move
    --jitter MS                and 0 to MS more, by the position (the same on replay)
    --overstep-at N --overstep-ms MS
                               at move N, think for the whole clock the engine was told plus
                               MS milliseconds (UCI wtime/btime; XBoard time)
    --newgame-delay S          take S seconds over ucinewgame / new (a hash clear)
    --option NAME              declare a spin option (repeatable)
    --ignore-quit              keep running after "quit" (the runner must kill it)
    --spawn-child              start a sleeping child in its process group
    --spawn-escapee            start a sleeping child that leaves the process group (setsid)
    --log FILE                 append every command received
    --resign-at N              (xboard) resign instead of moving
    --score-below MS:CP        report CP (own view) while its own clock, as told, is below MS
                               (a side that plays fast games well: a tiebreak's winner)
    --by-opponent              results fixed by the two names (UCI_Opponent): a hash of the pair
                               picks a win for either (both report +-15 pawns) or a draw (0)
    --chess960                 declare Chess960 (UCI_Chess960; XBoard variants fischerandom)
    --variants "atomic,3check" declare python-chess's variants (UCI_Variant's values by their
                               UCI names; XBoard's variants feature by their XBoard names) and
                               play by the rules of the one it is told
    --castle                   castle whenever it can (the king's side first)
    --ponder                   (uci) name a ponder move: the reply an engine with this --seed
                               would choose; ponder on `go ponder` until `ponderhit` (then
                               think --delay) or `stop` (then answer at once)
    --ponder-miss              (uci) name a legal reply other than that one
    --pieces N                 write its output N bytes at a time (an engine that does not
                               buffer its lines: a word may be split between two writes)
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import time
from pathlib import Path

import chess
import chess.variant


def xboard_names(args: argparse.Namespace) -> list[str]:
    """The XBoard names of the variants `--variants` names by their UCI names."""
    return [
        str(chess.variant.find_variant(name).xboard_variant)
        for name in args.variants.split(",")
        if name
    ]


def options() -> argparse.Namespace:
    p = argparse.ArgumentParser()
    p.add_argument("--protocol", default="uci", choices=["uci", "xboard"])
    p.add_argument("--name", default="Scripted")
    p.add_argument("--moves", default="")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--score", type=int, default=0)
    p.add_argument("--mate", type=int, default=None)
    p.add_argument("--scores", default="")
    p.add_argument("--depth", type=int, default=5)
    p.add_argument("--crash-at", type=int, default=0)
    p.add_argument("--stall-at", type=int, default=0)
    p.add_argument("--illegal-at", type=int, default=0)
    p.add_argument("--garbage-at", type=int, default=0)
    p.add_argument("--flood-at", type=int, default=0)
    p.add_argument("--flood-mb", type=int, default=20)
    p.add_argument("--spam-at", type=int, default=0)
    p.add_argument("--spam-mb", type=int, default=20)
    p.add_argument("--stderr-at", type=int, default=0)
    p.add_argument("--resign-at", type=int, default=0)
    p.add_argument("--slow-start", type=float, default=0.0)
    p.add_argument("--delay", type=int, default=0)
    p.add_argument("--jitter", type=int, default=0)
    p.add_argument("--overstep-at", type=int, default=0)
    p.add_argument("--overstep-ms", type=int, default=0)
    p.add_argument("--newgame-delay", type=float, default=0.0)
    p.add_argument("--option", action="append", default=[])
    p.add_argument("--ignore-quit", action="store_true")
    p.add_argument("--spawn-child", action="store_true")
    p.add_argument("--spawn-escapee", action="store_true")
    p.add_argument("--by-opponent", action="store_true")
    p.add_argument("--score-below", default="")
    p.add_argument("--chess960", action="store_true")
    p.add_argument("--variants", default="")
    p.add_argument("--castle", action="store_true")
    p.add_argument("--ponder", action="store_true")
    p.add_argument("--ponder-miss", action="store_true")
    p.add_argument("--log", default="")
    p.add_argument("--pieces", type=int, default=0)
    p.add_argument("--tag", default="", help="ignored: lets a test find its processes")
    return p.parse_args()


class Brain:
    def pv(self, move: str, length: int = 3) -> str:
        """`move` and the first legal replies after it: a PV of real moves, in UCI."""
        board, line = self.board.copy(), [move]
        try:
            board.push_uci(move)
        except ValueError:
            return move
        while len(line) < length and (replies := sorted(m.uci() for m in board.legal_moves)):
            line.append(replies[0])
            board.push_uci(replies[0])
        return " ".join(line)

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.board = chess.Board()
        self.script = args.moves.split()
        self.scores = [int(x) for x in args.scores.split(",") if x]
        self.opponent = ""
        self.clock_ms = 0  # the engine's own clock, as last told
        self.position = ""  # the last UCI position line, not set up yet
        self.chess960 = False  # told by UCI_Chess960 or XBoard's "variant fischerandom"
        self.rules: type[chess.Board] = chess.Board  # told by UCI_Variant or XBoard's variant

    def set_up(self) -> None:
        """The board of the last UCI `position` line (only its new moves played, when it
        goes on from the board's own)."""
        parts = self.position.split(" moves ")
        head = parts[0].split()
        fen = chess.STARTING_FEN if head[1] == "startpos" else " ".join(head[2:])
        moves = parts[1].split() if len(parts) > 1 else []
        played = [m.uci() for m in self.board.move_stack]
        start = self.rules(fen, chess960=self.chess960)
        same_start = type(self.board) is self.rules and self.board.root().fen() == start.fen()
        if not (same_start and moves[: len(played)] == played):
            self.board = start
            played = []
        for m in moves[len(played) :]:
            self.board.push_uci(m)
        self.position = ""

    @property
    def own_moves(self) -> int:
        """Moves this side has made in the game so far (from the position's history)."""
        stack = len(self.board.move_stack)
        return (stack if self.board.turn == self.board.root().turn else stack - 1) // 2

    def score(self) -> tuple[str, int]:
        a = self.args
        if a.by_opponent and self.opponent:
            pair = sorted([a.name, self.opponent])
            outcome = int(hashlib.sha256("|".join(pair).encode()).hexdigest(), 16) % 3
            if outcome == 1:
                return "cp", 0  # a draw between these two
            winner = pair[0] if outcome == 0 else pair[1]
            return "cp", 1500 if a.name == winner else -1500
        if a.score_below:
            limit, _, cp = a.score_below.partition(":")
            if 0 < self.clock_ms < int(limit):
                return "cp", int(cp)
        if a.mate is not None:
            return "mate", a.mate
        if self.scores:
            return "cp", self.scores[min(self.own_moves, len(self.scores) - 1)]
        return "cp", a.score

    def choose(self) -> str:
        """The next move, or a scripted misbehaviour."""
        n, a = self.own_moves + 1, self.args
        if a.crash_at == n:
            sys.exit(3)
        if a.stall_at == n:
            while True:
                time.sleep(60)
        if a.delay or a.jitter:
            spread = int.from_bytes(hashlib.sha256(self.board.fen().encode()).digest()[:4], "big")
            time.sleep((a.delay + (spread % (a.jitter + 1) if a.jitter else 0)) / 1000)
        if a.overstep_at == n:
            time.sleep((self.clock_ms + a.overstep_ms) / 1000)
        legal = sorted(self.board.legal_moves, key=lambda m: m.uci())
        if a.illegal_at == n:
            return next(
                chess.Move(f, t).uci()
                for f in chess.SQUARES
                for t in chess.SQUARES
                if f != t and chess.Move(f, t) not in legal
            )
        if a.garbage_at == n:
            return "zz99"
        if a.flood_at == n:
            chunk = "x" * (1 << 20)
            for _ in range(a.flood_mb):
                sys.stdout.write(chunk)
            sys.stdout.flush()
            while True:
                time.sleep(60)
        if a.stderr_at == n:
            print(f"warning {n} from {a.name}", file=sys.stderr, flush=True)
        if a.spam_at == n:
            line = "info string " + "y" * 188 + "\n"  # 200 bytes
            for _ in range(a.spam_mb):
                sys.stdout.write(line * ((1 << 20) // len(line)))
            sys.stdout.flush()
        for uci in self.script:
            move = chess.Move.from_uci(uci)
            if move in legal:
                self.script.remove(uci)
                return uci
        castles = sorted(
            (m for m in legal if self.board.is_castling(m)),
            key=lambda m: not self.board.is_kingside_castling(m),
        )
        if a.castle and castles:
            return castles[0].uci()
        if not legal:
            return "0000"
        return self.pick(self.board)

    def pick(self, board: chess.Board) -> str:
        """The deterministic choice among `board`'s legal moves (by --seed and position)."""
        legal = sorted(board.legal_moves, key=lambda m: m.uci())
        if not legal:
            return "0000"
        digest = hashlib.sha256(f"{self.args.seed}:{board.fen()}".encode()).digest()
        return legal[int.from_bytes(digest[:4], "big") % len(legal)].uci()

    def ponder_move(self, move: str) -> str | None:
        """The reply expected after `move` (--ponder), or another one (--ponder-miss)."""
        board = self.board.copy()
        try:
            board.push_uci(move)
        except ValueError:
            return None
        if not any(board.legal_moves):
            return None
        expected = self.pick(board)
        if self.args.ponder_miss:
            others = sorted(m.uci() for m in board.legal_moves if m.uci() != expected)
            return others[0] if others else None
        return expected


def log(args: argparse.Namespace, line: str) -> None:
    if args.log:
        with Path(args.log).open("a", encoding="utf-8") as f:
            f.write(line + "\n")


#: write the output this many bytes at a time (`--pieces`; 0: a line at a time)
PIECES = [0]


def say(line: str) -> None:
    text, size = line + "\n", PIECES[0] or len(line) + 1
    for start in range(0, len(text), size):
        sys.stdout.write(text[start : start + size])
        sys.stdout.flush()


def answer(args: argparse.Namespace, brain: Brain, words: list[str], started: float) -> None:
    """Think (``go`` or ``ponderhit``, read at `started`) and answer with the time it took
    in ``info time``: measured just before the one write of the info line and the move."""
    mine = "wtime" if brain.board.turn == chess.WHITE else "btime"
    if mine in words:
        brain.clock_ms = int(words[words.index(mine) + 1])
    move = brain.choose()
    kind, value = brain.score()
    nodes = 1000 * (brain.own_moves + 1)
    pv = brain.pv(move)
    expected = brain.ponder_move(move) if args.ponder or args.ponder_miss else None
    spent = time.monotonic() - started
    say(
        f"info depth {args.depth} seldepth {args.depth + 2} score {kind} {value} "
        f"nodes {nodes} nps {round(nodes / max(spent, 0.001))} tbhits 0 hashfull 1 "
        f"time {round(spent * 1000)} pv {pv}\n"
        f"bestmove {move}" + (f" ponder {expected}" if expected else "")
    )


def uci(args: argparse.Namespace, brain: Brain) -> None:
    pondering = False
    for raw in sys.stdin:
        received = time.monotonic()
        line = raw.strip()
        log(args, line)
        if brain.position and line.split(" ")[0] in ("go", "ponderhit", "stop"):
            brain.set_up()
        if line == "uci":
            time.sleep(args.slow_start)
            say(f"id name {args.name}")
            say("id author orchestrator tests")
            for name in args.option:
                say(f"option name {name} type spin default 1 min 0 max 100000")
            if args.chess960:
                say("option name UCI_Chess960 type check default false")
            if args.variants:
                values = " ".join(f"var {v}" for v in ["chess", *args.variants.split(",")])
                say(f"option name UCI_Variant type combo default chess {values}")
            if args.ponder or args.ponder_miss:
                say("option name Ponder type check default false")
            say("option name UCI_Opponent type string default")
            say("uciok")
        elif line == "isready":
            say("readyok")
        elif line.startswith("setoption name UCI_Chess960 value"):
            brain.chess960 = line.split()[-1] == "true"
        elif line.startswith("setoption name UCI_Variant value"):
            brain.rules = chess.variant.find_variant(line.split()[-1])
        elif line.startswith("setoption name UCI_Opponent value"):
            brain.opponent = line.split(" ", 7)[-1] if len(line.split()) >= 8 else ""
        elif line == "ucinewgame":
            time.sleep(args.newgame_delay)  # nothing to reset: "go" follows the whole position
        elif line.startswith("position"):
            # set up when it is searched: the time it takes is the move's (`info time`),
            # as an engine's own is, not the runner's
            brain.position = line
        elif line.startswith("go ponder"):
            pondering = True  # until ponderhit or stop; the opponent's time
        elif line == "ponderhit" and pondering:
            pondering = False
            answer(args, brain, line.split(), received)
        elif line == "stop" and pondering:
            pondering = False
            say(f"bestmove {brain.pick(brain.board)}")
        elif line.startswith("go"):
            answer(args, brain, line.split(), received)
        elif line == "quit":
            if args.ignore_quit:
                continue
            return


def xboard(args: argparse.Namespace, brain: Brain) -> None:
    post = False
    for raw in sys.stdin:
        line = raw.strip()
        log(args, line)
        cmd, _, rest = line.partition(" ")
        if cmd == "protover":
            time.sleep(args.slow_start)
            names = ["normal", *(["fischerandom"] if args.chess960 else []), *xboard_names(args)]
            variants = f' variants="{",".join(names)}"' if len(names) > 1 else ""
            say(
                f'feature ping=1 setboard=1 usermove=1 sigint=0 myname="{args.name}"{variants} '
                "done=1"
            )
        elif cmd == "new":
            time.sleep(args.newgame_delay)
            brain.board, brain.chess960, brain.rules = chess.Board(), False, chess.Board
        elif cmd == "variant":
            brain.chess960 = rest == "fischerandom"
            brain.rules = next(
                (b for b in chess.variant.VARIANTS if b.xboard_variant == rest), chess.Board
            )
            brain.board = brain.rules(chess960=brain.chess960)
        elif cmd == "setboard":
            brain.board = brain.rules(rest, chess960=brain.chess960)
        elif cmd == "usermove":
            brain.board.push_xboard(rest)
        elif cmd == "ping":
            say(f"pong {rest}")
        elif cmd == "post":
            post = True
        elif cmd == "time":
            brain.clock_ms = int(rest) * 10
        elif cmd == "name":
            brain.opponent = rest
        elif cmd == "go":
            if args.resign_at and args.resign_at == brain.own_moves + 1:
                say("resign")
                continue
            move = brain.choose()
            kind, value = brain.score()
            if post:
                centi = (
                    value if kind == "cp" else (100000 + value if value > 0 else -100000 + value)
                )
                nodes = 1000 * (brain.own_moves + 1)
                say(f"{args.depth} {centi} 1 {nodes} {brain.pv(move)}")
            if move in {m.uci() for m in brain.board.legal_moves}:
                played = chess.Move.from_uci(move)
                move = brain.board.xboard(played)  # castling as O-O in Chess960
                brain.board.push(played)
            say(f"move {move}")
        elif cmd == "quit":
            if args.ignore_quit:
                continue
            return


def main() -> None:
    args = options()
    PIECES[0] = args.pieces
    if args.spawn_escapee:  # a new session: a kill of the engine's process group misses it
        subprocess.Popen(["setsid", "sleep", "300"])
    if args.spawn_child:
        subprocess.Popen(["sleep", "300"])  # stays in this process group
    brain = Brain(args)
    (uci if args.protocol == "uci" else xboard)(args, brain)
    if args.ignore_quit:
        time.sleep(300)


if __name__ == "__main__":
    main()
