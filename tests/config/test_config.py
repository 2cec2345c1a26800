"""engines.toml loading: defaults, and one clear error per mistake."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.config.load import check_files, load
from orchestrator.config.model import ConfigError
from orchestrator.event.state import seeded_players
from tests.support.paths import ROOT

MINIMAL = """
[[engine]]
name = "A"
command = "/bin/true"

[[engine]]
name = "B"
command = ["/bin/true", "--flag"]
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "engines.toml"
    path.write_text(text)
    return path


def test_bundled_config_loads_and_seeds_by_group() -> None:
    config = load(ROOT / "engines.toml")
    assert len(config.engines) >= 8
    by_seed = [p.name for p in seeded_players(config)]
    # two groups by rating: the strongest of each group take seeds 1 and 2
    assert by_seed[:3] == ["Stockfish", "Phalanx", "Ethereal"]


def test_defaults(tmp_path: Path) -> None:
    config = load(write(tmp_path, MINIMAL))
    t = config.tournament
    assert (t.system, t.format, t.schedule, t.seeding) == ("swiss", "double", "legs", "explicit")
    assert t.tiebreaks == ("sb", "wins", "direct")
    assert t.database == tmp_path / "tournament.sqlite"
    assert config.engines[1].command == ("/bin/true", "--flag")
    assert config.total_rounds() == 1
    assert config.adjudication.win is not None and config.adjudication.win.plies == 10
    check_files(config)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "[tournament]\nrounds = 'five'\n" + MINIMAL,
            "[tournament] rounds: expected a positive integer",
        ),
        ("[tournament]\nround = 5\n" + MINIMAL, "[tournament]: unknown key 'round'"),
        ("[tournament]\ntc = '1+x'\n" + MINIMAL, "[tournament] tc: bad time control"),
        ("[tournament]\nformat = 'triple'\n" + MINIMAL, "[tournament] format: expected one of"),
        (MINIMAL + '[[engine]]\nname = "A"\ncommand = "x"\n', '[[engine]] "A": duplicate engine'),
        (MINIMAL + '[[engine]]\ncommand = "x"\n', "[[engine]] #3 name: missing key 'name'"),
        (MINIMAL + '[[engine]]\nname = "C"\n', "[[engine]] \"C\" command: missing key 'command'"),
        (MINIMAL + '[[engine]]\nname = "C"\ncommand = "x"\nprotocol = "cecp"\n', "protocol"),
        ("[adjudication]\nwin = { plies = 0 }\n" + MINIMAL, "[adjudication] win plies"),
        ("[tournament\n", "not valid TOML"),
        ('[[engine]]\nname = "A"\ncommand = "/bin/true"\n', "at least two engines"),
    ],
)
def test_errors_name_the_key(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as err:
        load(path)
    assert str(err.value).startswith(str(path))
    assert message in str(err.value)


def test_missing_binary_is_named(tmp_path: Path) -> None:
    config = load(
        write(tmp_path, MINIMAL + '[[engine]]\nname = "Ghost"\ncommand = "no-such-engine"\n')
    )
    with pytest.raises(ConfigError) as err:
        check_files(config)
    assert "\"Ghost\" command: 'no-such-engine' is not an executable" in str(err.value)


def test_a_live_dir_that_links_nowhere_is_refused(tmp_path: Path) -> None:
    (tmp_path / "live").symlink_to(tmp_path / "gone")
    config = load(write(tmp_path, '[tournament]\nlive_dir = "live"\n' + MINIMAL))
    with pytest.raises(ConfigError, match=r"live_dir: '.*live' is a link to '.*gone', which"):
        check_files(config)


def test_live_dir_is_tried_and_left_as_it_was(tmp_path: Path) -> None:
    config = load(write(tmp_path, '[tournament]\nlive_dir = "a/b/live"\n' + MINIMAL))
    check_files(config)
    assert not (tmp_path / "a").exists()  # made to try it, then removed


def test_concurrency_above_the_cap_is_an_explicit_choice(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"concurrency: 100 games at once is more than"):
        load(write(tmp_path, "[tournament]\nconcurrency = 100\n" + MINIMAL))
    config = load(
        write(tmp_path, "[tournament]\nconcurrency = 100\nconcurrency_cap = 128\n" + MINIMAL)
    )
    assert config.tournament.concurrency == 100


def test_names_are_compared_as_they_look(tmp_path: Path) -> None:
    composed = MINIMAL.replace('name = "A"', 'name = "Caf\\u00e9"')
    decomposed = composed.replace('name = "B"', 'name = "Cafe\\u0301"')
    with pytest.raises(ConfigError, match='"Café": duplicate engine name'):
        load(write(tmp_path, decomposed))
    config = load(write(tmp_path, composed.replace('name = "B"', 'name = "Cafe\\u0301s"')))
    assert [e.name for e in config.engines] == ["Café", "Cafés"]  # stored composed (NFC)


@pytest.mark.parametrize(
    ("given", "resign", "win", "tablebases"),
    [
        ("resign = true", (3, 6.0), (10, 10.0), None),
        ("resign = { plies = 5, score = 4.0 }\nwin = false", (5, 4.0), None, None),
        ('win = true\ntablebases = "tb"', None, (10, 10.0), ("tb",)),
        ('tablebases = ["tb", "/abs/tb7"]', None, (10, 10.0), ("tb", "/abs/tb7")),
    ],
)
def test_adjudication_rules_are_turned_on_and_off_and_folders_listed(
    tmp_path: Path,
    given: str,
    resign: tuple[int, float] | None,
    win: tuple[int, float] | None,
    tablebases: tuple[str, ...] | None,
) -> None:
    adjudication = load(write(tmp_path, f"[adjudication]\n{given}\n{MINIMAL}")).adjudication
    rule = adjudication.resign
    assert (None if rule is None else (rule.plies, rule.score)) == resign
    assert (
        None if adjudication.win is None else (adjudication.win.plies, adjudication.win.score)
    ) == win
    folders = adjudication.tablebases
    expected = None if tablebases is None else tuple(tmp_path / t for t in tablebases)
    assert folders == expected  # relative folders are the config's; "/abs/tb7" stays
