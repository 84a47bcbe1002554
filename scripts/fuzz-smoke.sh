#!/usr/bin/env bash
# Runs every fuzz target of every module for a short time each.
# Usage: scripts/fuzz-smoke.sh [duration]
set -euo pipefail
cd "$(dirname "$0")/.."
dur=${1:-5s}
for mod in $(find . -name go.mod -not -path './.git/*' -not -path '*/node_modules/*' -exec dirname {} \; | sort); do
(cd "$mod" && go list -f '{{.ImportPath}} {{.Dir}}' ./... | while read -r pkg dir; do
  for t in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
    echo "== fuzz $pkg $t ($dur)"
    go test -run '^$' -fuzz "^${t}\$" -fuzztime "$dur" "$pkg"
  done
done
)
done
