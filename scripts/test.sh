#!/usr/bin/env bash
# Runs the whole test suite: the race detector on every package, the CTK
# vectors as subtests, fuzz seed corpora as ordinary tests.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
go test -race -count=1 "$@" ./...
# The allocation tests skip under the race detector (it changes the
# counts): run them again without it, so they guard something in CI too.
go test -count=1 -run 'Alloc' "$@" ./enforcement/ ./internal/jsonvalue/
