// Package compat holds client-compatibility tests of `bloomery serve` that
// need a runtime other than Go: node_test.go runs node-redis (redis@6 with
// @redis/bloom, compat/node) against the server binary.
//
// It is a nested module with no dependencies, so the root module's go.mod is
// untouched; the server binary is built from the root module (or taken from
// $BLOOMERY_BIN).
package compat
