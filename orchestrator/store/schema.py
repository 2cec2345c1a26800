"""The database schema, as numbered migrations; PRAGMA user_version holds the version."""

from __future__ import annotations

#: MIGRATIONS[i] takes the schema from version i to i + 1; never edit a released one
MIGRATIONS: list[str] = [
    """
    CREATE TABLE event (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        name TEXT NOT NULL,
        config TEXT NOT NULL,          -- the event's settings as JSON, for resume checks
        created_at TEXT NOT NULL,
        finished_at TEXT
    );
    CREATE TABLE players (
        name TEXT PRIMARY KEY,
        seed INTEGER NOT NULL UNIQUE
    );
    CREATE TABLE rounds (
        number INTEGER PRIMARY KEY,
        bye TEXT REFERENCES players (name),
        dropped_rounds INTEGER NOT NULL DEFAULT 0,
        paired_at TEXT NOT NULL,
        finished_at TEXT
    );
    CREATE TABLE games (
        id INTEGER PRIMARY KEY,
        round INTEGER NOT NULL REFERENCES rounds (number),
        number INTEGER NOT NULL,       -- place in the round's playing order, from 1
        pair INTEGER NOT NULL,         -- the event-wide pair index (chooses the opening)
        white TEXT NOT NULL REFERENCES players (name),
        black TEXT NOT NULL REFERENCES players (name),
        opening TEXT,                  -- JSON: name, fen, moves
        status TEXT NOT NULL DEFAULT 'pending'
            CHECK (status IN ('pending', 'running', 'finished')),
        result TEXT CHECK (result IN ('1-0', '0-1', '1/2-1/2')),
        termination TEXT,
        reason TEXT,
        plies INTEGER,
        started_at TEXT,
        ended_at TEXT,
        fault TEXT,                    -- JSON: engine, kind, detail, last_output
        pgn TEXT,
        UNIQUE (round, number)
    );
    CREATE TABLE attempts (
        id INTEGER PRIMARY KEY,
        game INTEGER NOT NULL REFERENCES games (id),
        status TEXT NOT NULL CHECK (status IN ('running', 'finished', 'aborted')),
        started_at TEXT NOT NULL,
        ended_at TEXT
    );
    CREATE TABLE moves (
        attempt INTEGER NOT NULL REFERENCES attempts (id),
        ply INTEGER NOT NULL,
        uci TEXT NOT NULL,
        san TEXT NOT NULL,
        book INTEGER NOT NULL,
        score_cp INTEGER,
        score_mate INTEGER,
        depth INTEGER,
        seldepth INTEGER,
        nodes INTEGER,
        time_ms INTEGER NOT NULL,
        clock_ms INTEGER,
        PRIMARY KEY (attempt, ply)
    );
    CREATE INDEX games_status ON games (status);
    CREATE INDEX attempts_game ON attempts (game);
    """,
    # 2: the search time the engine itself reported for each move (UCI "info time"), beside
    # the time measured at the pipe, so that a dispute can be settled from the database
    """
    ALTER TABLE moves ADD COLUMN reported_ms INTEGER;
    """,
    # 3: operator controls, liveness, withdrawals, forfeits, voided attempts, engine updates
    """
    ALTER TABLE event ADD COLUMN paused INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE players ADD COLUMN withdrawn_after INTEGER;
    ALTER TABLE players ADD COLUMN withdrawn_reason TEXT;
    ALTER TABLE games ADD COLUMN forfeit INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE games ADD COLUMN details TEXT;      -- PGN TerminationDetails
    ALTER TABLE attempts ADD COLUMN voided_at TEXT;
    ALTER TABLE attempts ADD COLUMN void_reason TEXT;
    CREATE TABLE controls (
        id INTEGER PRIMARY KEY,
        requested_at TEXT NOT NULL,
        user TEXT NOT NULL,            -- the OS user who gave it
        command TEXT NOT NULL,         -- the command line, as typed
        kind TEXT NOT NULL,            -- pause, resume, adjudicate, replay, withdraw, ...
        args TEXT NOT NULL,            -- JSON
        reason TEXT,
        applied_at TEXT,               -- NULL while pending
        outcome TEXT                   -- what applying it did, or why it was refused
    );
    CREATE TABLE engine_updates (
        id INTEGER PRIMARY KEY,
        engine TEXT NOT NULL REFERENCES players (name),
        command TEXT,                  -- JSON list; NULL: unchanged
        options TEXT NOT NULL,         -- JSON object of the options changed
        control INTEGER REFERENCES controls (id),
        applied_at TEXT NOT NULL,
        first_game INTEGER REFERENCES games (id)  -- the first game played with it
    );
    CREATE TABLE daemon (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        pid INTEGER NOT NULL,
        host TEXT NOT NULL,
        started_at TEXT NOT NULL,
        last_seen TEXT NOT NULL
    );
    """,
    # 4: what engines say about each move, for the live view and TCEC's PGN and live files
    """
    ALTER TABLE moves ADD COLUMN pv TEXT;          -- UCI moves, space-separated
    ALTER TABLE moves ADD COLUMN nps INTEGER;
    ALTER TABLE moves ADD COLUMN tbhits INTEGER;
    ALTER TABLE moves ADD COLUMN hashfull INTEGER; -- permille
    """,
    # 5: games on several machines: the game host (Dask worker) of each attempt and game
    """
    ALTER TABLE attempts ADD COLUMN host TEXT;
    ALTER TABLE games ADD COLUMN host TEXT;
    """,
    # 6: a team Swiss's BYE goes to a team, which is no player (rounds.bye names a player)
    """
    ALTER TABLE rounds ADD COLUMN bye_team TEXT;
    """,
    # 7: a knockout's game: its stage, its match's place in the stage (slot), its number in
    # the match; and the time control of a game that is not played at the event's (a
    # tiebreak pair's)
    """
    ALTER TABLE games ADD COLUMN stage INTEGER;
    ALTER TABLE games ADD COLUMN slot INTEGER;
    ALTER TABLE games ADD COLUMN match_game INTEGER;
    ALTER TABLE games ADD COLUMN tc TEXT;
    """,
    # 8: the reply an engine expects after its move (its ponder move, TCEC's pd); a game's
    # r-mobility result (its G-score, TCEC's RMobilityResult) and each engine's last score
    # (White's view, as TCEC's wv: its schedule's WhiteEv and BlackEv)
    """
    ALTER TABLE moves ADD COLUMN ponder TEXT;
    ALTER TABLE games ADD COLUMN rmobility TEXT;
    ALTER TABLE games ADD COLUMN white_ev TEXT;
    ALTER TABLE games ADD COLUMN black_ev TEXT;
    """,
    # 9: a finished game's last position (TCEC's schedule FinalFen), stored once so that no
    # reader parses every game's PGN for it (the games finished before are filled from their
    # PGN when a daemon first opens the database: `Store.fill_final_fens`)
    """
    ALTER TABLE games ADD COLUMN final_fen TEXT;
    """,
    # 10: what only the running daemon knows of its health (its loop's lag, the last move,
    # the scheduler and the game hosts, a full disk), as JSON (`event/health.py`), for the
    # web process's /metrics and /healthz
    """
    ALTER TABLE daemon ADD COLUMN health TEXT;
    """,
    # 11: the games by pair index: the next round's first pair (`Store.pairs_so_far`, at
    # every pairing) is the index's last entry, not a scan of every game of the event
    """
    CREATE INDEX games_pair ON games (pair);
    """,
]

VERSION = len(MIGRATIONS)
