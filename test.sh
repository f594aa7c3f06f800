#!/usr/bin/env bash
# The one way to run MCTS Arena's tests, on a developer's machine and in CI
# (.ci/run calls it): install what is missing, then pytest, ruff and mypy.
#
#   ./test.sh                  # install what is missing; the whole suite, ruff, mypy
#   ./test.sh tests/arena -x   # the same set-up, then only pytest with these arguments
#   ./test.sh --check          # only say which system programs are missing
#
# What it installs when missing:
#   - Debian packages, with apt-get (as root, or through passwordless sudo):
#     mosquitto (the MQTT tests start their own brokers), chromium (the viewer
#     tests drive it headless), nodejs and npm (the JavaScript example bot),
#     openssl (TLS certificates for the security tests), g++ (the C++ example
#     engine, examples/cpp-engine), python3-venv,
#     docker-compose where the `docker compose` plugin is missing (it checks
#     docker-compose.yml offline; no Docker engine is needed);
#   - the virtual environment .venv with the project and its test extras (pip);
#   - the JavaScript example's ws package (npm ci in examples/js-bot).
# Without the right to install, it says what is missing and goes on: the tests
# that need a missing program skip, each with its reason. With CI=true a
# program that cannot be installed is an error instead, so CI never passes by
# skipping. It never reads standard input.
set -euo pipefail
cd "$(dirname "$0")"

say() { echo "test.sh: $*" >&2; }
ci() { [ "${CI:-}" = "true" ]; }

# Debian package -> a command it provides.
declare -A provides=(
    [mosquitto]=mosquitto [chromium]=chromium [nodejs]=node [npm]=npm [openssl]=openssl
    [g++]=g++
)
missing=()
for package in mosquitto chromium nodejs npm openssl g++; do
    command=${provides[$package]}
    command -v "$command" >/dev/null 2>&1 || [ -x "/usr/sbin/$command" ] || missing+=("$package")
done
python3 -c "import ensurepip" >/dev/null 2>&1 || missing+=(python3-venv)
docker compose version >/dev/null 2>&1 || command -v docker-compose >/dev/null 2>&1 ||
    missing+=(docker-compose)

apt=()
if [ "$(id -u)" -eq 0 ]; then
    apt=(apt-get)
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    apt=(sudo -n apt-get)
fi

if [ ${#missing[@]} -gt 0 ]; then
    if [ "${1:-}" = "--check" ]; then
        say "missing: ${missing[*]}"
        if [ ${#apt[@]} -gt 0 ]; then say "./test.sh would install them with apt-get"; fi
    elif [ ${#apt[@]} -gt 0 ]; then
        say "installing ${missing[*]} (apt-get)"
        export DEBIAN_FRONTEND=noninteractive
        "${apt[@]}" update -q </dev/null
        "${apt[@]}" install -y -q "${missing[@]}" </dev/null
        missing=()
    fi
    if [ ${#missing[@]} -gt 0 ] && [ ${#apt[@]} -eq 0 ]; then
        say "missing ${missing[*]}, and installing needs root (apt-get)"
        say "to install them: sudo apt-get install ${missing[*]}"
        if ci; then
            say "CI=true: refusing to pass by skipping the tests that need them"
            exit 1
        fi
        say "the tests that need them are skipped, each with its reason"
    fi
elif [ "${1:-}" = "--check" ]; then
    say "every system program the tests use is installed"
fi
if [ "${1:-}" = "--check" ]; then
    exit 0
fi

if [ ! -x .venv/bin/python ]; then
    say "creating the virtual environment .venv"
    python3 -m venv .venv
fi
.venv/bin/pip install -q -e ".[test]" </dev/null

if [ ! -d examples/js-bot/node_modules/ws ]; then
    if command -v npm >/dev/null 2>&1; then
        say "installing the JavaScript example's packages (npm ci)"
        if ! (cd examples/js-bot && npm ci --no-audit --no-fund --loglevel=error </dev/null); then
            say "npm ci failed: the JavaScript bot's test is skipped"
            if ci; then exit 1; fi
        fi
    fi
fi

if [ $# -gt 0 ]; then
    exec .venv/bin/pytest "$@"
fi
.venv/bin/pytest
.venv/bin/ruff check protocol bots arena tests bench
.venv/bin/mypy
