"""`orchestrator match`: a match from the command line, in the spirit of fastchess's
`-quick`, written as the config it stands for (then run as any config is, so that it
writes the same database and PGN, and the same command line resumes it).

An engine is a command line (`"stockfish"`, `"./engine --uci"`), the name of an installed
engine (found in `PATH` or `/usr/games`), or fastchess's `-engine` keys: `"name=SF cmd=stockfish
tc=10+0.1 nodes=20000 option.Hash=64"`.
"""

from __future__ import annotations

import shlex
import shutil
from collections.abc import Sequence
from pathlib import Path

from orchestrator.config.model import ConfigError
from orchestrator.config.write import toml_value

__all__ = ["MARK", "engine_table", "match_toml"]

#: the first line of a config `orchestrator match` wrote (one it may write again)
MARK = "# written by `orchestrator match`"
#: fastchess's `-engine` keys that a match's engine may carry, and its config keys
KEYS = {
    "name": "name",
    "cmd": "command",
    "args": "args",
    "proto": "protocol",
    "tc": "tc",
    "timemargin": "timemargin",
    "nodes": "nodes",
    "depth": "depth",
}
GAMES = "/usr/games"


def _installed(word: str) -> str:
    """A command's program, made a path where it names an installed engine."""
    if "/" in word:
        return word
    return shutil.which(word) or shutil.which(word, path=GAMES) or word


def engine_table(text: str) -> dict[str, object]:
    """An `[[engine]]` table from one engine argument; a `ConfigError` quoting it when bad.

    >>> engine_table("name=SF cmd=/bin/sf tc=10+0.1 nodes=2000 option.Hash=64")
    {'options': {'Hash': 64}, 'name': 'SF', 'command': ['/bin/sf'], 'tc': '10+0.1', 'nodes': 2000}
    >>> engine_table("/bin/sf --uci")["command"], engine_table("/bin/sf --uci")["name"]
    (['/bin/sf', '--uci'], 'sf')
    """
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise ConfigError(f"engine {text!r}: {exc}") from None
    if not words:
        raise ConfigError("engine '': expected a command or fastchess's keys (cmd=...)")
    if not any(w.startswith("cmd=") for w in words):
        command = [_installed(words[0]), *words[1:]]
        return {"name": Path(words[0]).name, "command": command}
    table: dict[str, object] = {"options": {}}
    args: list[str] = []
    for word in words:
        key, eq, value = word.partition("=")
        if not eq:
            raise ConfigError(f"engine {text!r}: {word!r} is not key=value")
        if key.startswith("option."):
            options = table["options"]
            assert isinstance(options, dict)
            options[key.removeprefix("option.")] = _value(value)
        elif key not in KEYS:
            known = ", ".join([*KEYS, "option.NAME"])
            raise ConfigError(f"engine {text!r}: unknown key {key!r} (known: {known})")
        elif key == "cmd":
            table["command"] = [_installed(value)]
        elif key == "args":
            args += shlex.split(value)
        elif key in ("nodes", "depth", "timemargin"):
            table[KEYS[key]] = _value(value)
        else:
            table[KEYS[key]] = value
    given = table["command"]
    assert isinstance(given, list)
    table["command"] = [*given, *args]
    table.setdefault("name", Path(str(given[0])).name)
    return table


def _value(text: str) -> object:
    """An option's or a limit's value: a number where it reads as one, else the text."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            continue
    return {"true": True, "false": False}.get(text, text)


def match_toml(
    engines: Sequence[dict[str, object]],
    *,
    games: int,
    tc: str,
    concurrency: int,
    database: Path,
    openings: Path | None = None,
    sprt: tuple[float, float] | None = None,
) -> str:
    """The config of a match of `engines` (two `engine_table`s), `games` games (a tie is
    shared, as a tester's match is: no tiebreak prolongs it).

    >>> text = match_toml([{"name": "A", "command": ["/bin/a"]}, {"name": "A", "command":
    ...     ["/bin/b"]}], games=4, tc="10+0.1", concurrency=2, database=Path("m.sqlite"))
    >>> print(text[text.index("[tournament]"):text.index("[[engine]]")].strip())
    [tournament]
    name = "A-1 vs A-2"
    system = "match"
    system_options = { games = 4, shared = true }
    tc = "10+0.1"
    concurrency = 2
    database = "m.sqlite"
    pgn_dir = "m-pgn"
    """
    tables = [dict(e) for e in engines]
    if len(tables) != 2:
        raise ConfigError(f"a match is two engines, not {len(tables)}")
    if tables[0]["name"] == tables[1]["name"]:
        for n, table in enumerate(tables, 1):
            table["name"] = f"{table['name']}-{n}"
    options: dict[str, object] = {"games": games, "shared": True}
    if sprt is not None:
        options = {"games": games, "sprt": {"elo0": sprt[0], "elo1": sprt[1]}}
    lines = [
        MARK + ": its command line as a config; the same command resumes the match",
        "[tournament]",
        f"name = {toml_value(' vs '.join(str(t['name']) for t in tables))}",
        'system = "match"',
        f"system_options = {toml_value(options)}",
        f"tc = {toml_value(tc)}",
        f"concurrency = {concurrency}",
        f"database = {toml_value(database.name)}",
        f"pgn_dir = {toml_value(database.stem + '-pgn')}",
    ]
    if openings is not None:
        lines.append(f"openings = {toml_value(str(openings.resolve()))}")
    for table in tables:
        lines += ["", "[[engine]]"]
        lines += [f"{key} = {toml_value(value)}" for key, value in table.items() if value != {}]
    return "\n".join(lines) + "\n"
