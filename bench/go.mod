module github.com/bloomery/bloomery/bench

go 1.26

replace github.com/bloomery/bloomery => ../

// blobloom is not served by the module proxy; Debian's
// golang-github-greatroar-blobloom-dev installs its source here.
replace github.com/greatroar/blobloom => /usr/share/gocode/src/github.com/greatroar/blobloom

require (
	github.com/FastFilter/xorfilter v0.4.2-0.20260120015552-4e5a4d9df65a
	github.com/bits-and-blooms/bloom/v3 v3.7.1
	github.com/bloomery/bloomery v0.0.0-00010101000000-000000000000
	github.com/greatroar/blobloom v0.0.0-00010101000000-000000000000
	github.com/seiflotfy/cuckoofilter v0.0.0-20240715131351-a2f2c23f1771
	github.com/tylertreat/BoomFilters v0.0.0-20251001182300-5b3723cc64ae
	github.com/zeebo/xxh3 v1.1.0
	golang.org/x/sys v0.30.0
)

require (
	github.com/bits-and-blooms/bitset v1.24.2 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/d4l3k/messagediff v1.2.1 // indirect
	github.com/dgryski/go-metro v0.0.0-20200812162917-85c65e2d0165 // indirect
	github.com/klauspost/cpuid/v2 v2.2.10 // indirect
)
