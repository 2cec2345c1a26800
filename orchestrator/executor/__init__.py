"""Where games run (`executor` in [tournament]): in the daemon, or on Dask workers.

- `local`: in the daemon's own process (`LocalExecutor`);
- `processes`: a Dask cluster of this machine that the daemon starts (`LocalProcesses`);
- `dask://HOST:PORT`, `tls://HOST:PORT`: the workers of an existing scheduler
  (`DaskExecutor`), the game hosts.

The daemon stays the only writer of the database, the pairing authority and the round
barrier whatever runs its games.
"""

from __future__ import annotations

from orchestrator.config.model import Config, dask_address
from orchestrator.engines.affinity import cpu_plan, pin_threads
from orchestrator.executor.base import HELPER_PIDS, Executor, HostFault, OnStart
from orchestrator.executor.local import LocalExecutor


def make_executor(config: Config) -> Executor:
    """The executor `config` asks for (not started yet).  Dask (`distributed`) is imported
    here, for the executors that use it, and not for the local one: it is a third of a
    second of CPU at every start.

    >>> from pathlib import Path
    >>> from orchestrator.event.sample import sample_config
    >>> make_executor(sample_config(Path("/tmp"))).label
    'local'
    """
    section = config.tournament
    address = dask_address(section.executor)
    if address is not None:
        from orchestrator.executor.cluster import DaskExecutor, security

        return DaskExecutor(address, section.executor, security(section), pin_threads(config))
    plan = cpu_plan(config)
    if section.executor == "processes":
        from orchestrator.executor.processes import LocalProcesses

        beside = section.database.with_name
        return LocalProcesses(
            section.concurrency,
            beside(section.database.name + ".dask.log"),
            beside(section.database.name + ".dask"),
            plan,
            pin_threads(config),
        )
    return LocalExecutor(plan.slots if plan is not None else ())


__all__ = [
    "HELPER_PIDS",
    "Executor",
    "HostFault",
    "LocalExecutor",
    "OnStart",
    "make_executor",
]
