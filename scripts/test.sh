#!/usr/bin/env bash
# Runs the whole test suite: the race detector on every package, the CTK
# vectors as subtests, fuzz seed corpora as ordinary tests.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
go test -race -count=1 "$@" ./...
