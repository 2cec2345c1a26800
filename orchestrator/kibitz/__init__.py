"""The kibitzers: one or two analysis engines that follow the featured game (the game TCEC's
live files show) and write TCEC's kibitzer files, `data.json` / `data1.json` and
`liveeval.json` / `liveeval1.json`, in `live_dir`.

They run in a process of their own (`orchestrator kibitz`, started by the daemon), at the
lowest CPU priority, which reads the event's database and never writes it: nothing they do
reaches a game, its engines or its clocks.  A kibitzer that crashes or stops answering is
restarted, and says so in the log.
"""

from orchestrator.kibitz.follow import Kibitzer, featured, follow

__all__ = ["Kibitzer", "featured", "follow"]
