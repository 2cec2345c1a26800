#!/usr/bin/env bash
# The project's two commands, each self-contained on a fresh Debian machine (as root):
#   ./tasks.sh demo   run the bundled championship (engines.toml) to the end
#   ./tasks.sh test   lint, type-check, build the documentation site and run the whole suite
# Both create .venv, install the package with its test and documentation tools, and install
# the Debian chess engines the demo and the integration tests play with (and Chromium for the
# browser test).
set -euo pipefail
cd "$(dirname "$0")"

# the chess engines of the demo and the integration tests, Chromium for the browser test, and
# systemd for `systemd-analyze verify` of the unit, and venv for Debian's own python3 (below)
DEBIAN_PACKAGES=(stockfish ethereal-chess toga2 glaurung fairy-stockfish phalanx sjeng fairymax
    hoichess chromium systemd python3-venv)

log() { printf '==> %s\n' "$*" >&2; }

# The interpreter of .venv: $PYTHON if set, else Debian's own python3 when it is 3.11 or later
# and can make a venv, else the python3 on the PATH.  Debian builds its interpreter with
# profile-guided optimisation and LTO; a plain source build (pyenv's default) costs the daemon
# about 7 % more CPU per move (docs/measurements.md, "The interpreter").
pick_python() {
    if [ -n "${PYTHON:-}" ]; then
        echo "$PYTHON"
    elif /usr/bin/python3 -c 'import sys, ensurepip, venv; sys.exit(sys.version_info < (3, 11))' \
        2>/dev/null; then
        echo /usr/bin/python3
    else
        echo python3
    fi
}

setup_debian() {
    local missing=()
    for pkg in "${DEBIAN_PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" || missing+=("$pkg")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    log "installing Debian packages: ${missing[*]}"
    local sudo=()
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    "${sudo[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends \
        "${missing[@]}" >/dev/null
}

setup_python() {
    local stamp=.venv/.setup-stamp want py base
    py=$(pick_python)
    base=$("$py" -c 'import sys; print(sys.base_prefix, sys.version)')
    want="$(sha256sum pyproject.toml | cut -d' ' -f1) $base"
    if [ -x .venv/bin/python ] && [ "$(.venv/bin/python -c 'import sys; print(sys.base_prefix, sys.version)')" != "$base" ]; then
        log "making .venv again with $py"
        rm -rf .venv
    fi
    if [ ! -x .venv/bin/python ]; then
        log "creating .venv with $py"
        "$py" -m venv .venv
    fi
    if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
        log "installing orchestrator and its test and documentation tools into .venv"
        .venv/bin/python -m pip install -q --upgrade pip
        .venv/bin/python -m pip install -q -e '.[test,docs]'
        echo "$want" >"$stamp"
    fi
}

case "${1:-}" in
demo)
    setup_debian
    setup_python
    shift
    .venv/bin/orchestrator run engines.toml "$@"
    exec .venv/bin/orchestrator standings --config engines.toml
    ;;
test)
    setup_debian
    setup_python
    shift
    log "ruff format --check"
    .venv/bin/ruff format --check orchestrator tests bench
    log "ruff check"
    .venv/bin/ruff check orchestrator tests bench
    log "mypy"
    .venv/bin/mypy
    log "mkdocs build --strict"
    NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --quiet
    log "pytest"
    exec .venv/bin/python -m pytest "$@"
    ;;
*)
    echo "usage: ./tasks.sh demo | test [pytest args]" >&2
    exit 2
    ;;
esac
