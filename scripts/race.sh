#!/usr/bin/env bash
# Runs the race detector over every package of the current module that is
# concurrent: one whose non-test code imports sync, sync/atomic or net, or
# starts goroutines. The full-size tests of every package run without the
# race detector in `make unit`; here -short keeps the statistical parts
# small (the race detector slows them 5-10x and finds nothing in them).
set -euo pipefail
pkgs=$(go list -f '{{.ImportPath}} {{.Dir}} {{join .Imports " "}}' ./... | while read -r pkg dir imports; do
  if [[ " $imports " =~ \ (sync|sync/atomic|net)\  ]] || grep -qs '^[^/]*\bgo func\|^\s*go [a-zA-Z_.]*(' "$dir"/*.go; then
    echo "$pkg"
  fi
done)
if [ -z "$pkgs" ]; then
  echo "no concurrent packages"
  exit 0
fi
echo "$pkgs" | sed 's/^/  race: /'
go test -race -short -count=1 -timeout 20m $pkgs
