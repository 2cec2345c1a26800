"""The one base of every error a person can act on.

Each message names what is wrong (the file, key, game or engine); the command line prints it
as one line and exits with `exit_code`.
"""

from __future__ import annotations


class OrchestratorError(Exception):
    """An error a person can act on: a bad config, state, input or database.

    >>> str(OrchestratorError("engines.toml: [tournament] tc: bad time control 'x'"))
    "engines.toml: [tournament] tc: bad time control 'x'"
    """

    exit_code = 2


class DaemonFault(Exception):
    """The daemon itself could not go on with a game (no descriptors, memory or disk): the
    attempt is aborted and played again later; no engine is blamed.

    >>> str(DaemonFault("cannot start Stockfish: Too many open files"))
    'cannot start Stockfish: Too many open files'
    """
