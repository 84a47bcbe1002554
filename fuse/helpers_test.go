package fuse

import (
	"testing"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/container"
)

// split returns the header, params and payload of an encoded filter.
func split(t *testing.T, data []byte) (container.Header, []byte, []byte) {
	t.Helper()
	h, params, payload, err := container.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return h, params, payload
}

// appendEnvelope frames params and payload as an unkeyed XXH3-0 filter.
func appendEnvelope(kind bloomery.Kind, layout byte, params, payload []byte) []byte {
	return container.Append(nil, kind, layout, hashing.Hasher{}, params, payload)
}

// positionsOf returns the cells of hash x under g, for either arity.
func positionsOf(g geometry, arity int, x uint64) []uint64 {
	if arity == 3 {
		q := g.positions3(x)
		return q[:]
	}
	q := g.positions4(x)
	return q[:]
}
