"""`python -m orchestrator`: the command line."""

import signal
import sys


def _stopped_early(signum: int, _frame: object) -> None:
    """A stop signal before any command has started: nothing to undo."""
    sys.exit(0)


# from the very start: a daemon told to stop while it is still importing exits 0 (143 would
# be a failure to systemd); `run` takes these signals over once its event loop runs
for _sig in (signal.SIGTERM, signal.SIGHUP):
    signal.signal(_sig, _stopped_early)

from orchestrator.cli import main  # noqa: E402

main()
