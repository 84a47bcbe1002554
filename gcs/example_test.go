package gcs_test

import (
	"encoding/hex"
	"fmt"

	"github.com/bloomery/bloomery/gcs"
)

// A BIP-158 basic filter: build it from a block's scripts, serve the raw
// bytes, and chain its BIP-157 header.
func ExampleBuildBIP158() {
	var blockHash [32]byte // internal byte order
	blockHash[0] = 0x42
	scripts := [][]byte{
		{0x00, 0x14, 0x01, 0x02}, // output scripts and spent scripts
		{0x76, 0xa9, 0x14, 0x03},
		{0x76, 0xa9, 0x14, 0x03}, // duplicate: counted once
		{0x6a, 0x01, 0x02},       // OP_RETURN: left out
		{},                       // empty: left out
	}
	f, err := gcs.BuildBIP158(blockHash, scripts)
	if err != nil {
		panic(err)
	}
	raw := f.Bytes()
	fmt.Println("N:", f.Len(), "bytes:", len(raw))

	// A light client parses the served bytes and matches its scripts.
	g, err := gcs.ParseBIP158(blockHash, raw)
	if err != nil {
		panic(err)
	}
	fmt.Println("match:", g.MatchAny([][]byte{{0xde, 0xad}, {0x76, 0xa9, 0x14, 0x03}}))
	fmt.Println("OP_RETURN script:", g.Contains([]byte{0x6a, 0x01, 0x02}))

	var prev [32]byte // the genesis block's previous header is all zeros
	h := gcs.FilterHeader(raw, prev)
	fmt.Println("header:", hex.EncodeToString(h[:4])+"...")
	// Output:
	// N: 2 bytes: 7
	// match: true
	// OP_RETURN script: false
	// header: cac663f4...
}

// A general Golomb-coded set at about 1/1000 false positives.
func ExampleBuildKeys() {
	keys := [][]byte{[]byte("alpha"), []byte("beta"), []byte("gamma")}
	f, err := gcs.BuildKeys(keys, gcs.Params{FPR: 0.001})
	if err != nil {
		panic(err)
	}
	fmt.Println(f.P(), f.M(), f.Contains([]byte("beta")))
	// Output: 9 1000 true
}
