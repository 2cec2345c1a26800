"""pytest's settings for the whole suite; the helpers are in `tests/support/`."""

import os

# Kibitzers at SCHED_IDLE get no CPU at all beside another busy process (CI's machines are
# shared): the suite runs them at normal priority, and tests/daemon/test_kibitzers.py checks
# the idle priority itself with this unset.
os.environ["ORCHESTRATOR_KIBITZ_PRIORITY"] = "normal"
