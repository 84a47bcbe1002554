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
    # Go's fuzzing engine can report "context deadline exceeded" as a
    # failure when -fuzztime runs out while a worker is still busy with a
    # new input (no crash, no failing input written). That case is run once
    # more; any real failure (a failing input is written) fails at once.
    if ! out=$(go test -run '^$' -fuzz "^${t}\$" -fuzztime "$dur" "$pkg" 2>&1); then
      echo "$out"
      if grep -q 'context deadline exceeded' <<<"$out" && ! grep -q 'Failing input written' <<<"$out"; then
        echo "== fuzz $pkg $t: engine deadline report without a failing input; running again"
        go test -run '^$' -fuzz "^${t}\$" -fuzztime "$dur" "$pkg"
      else
        exit 1
      fi
    else
      echo "$out"
    fi
  done
done
)
done
