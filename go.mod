module github.com/bloomery/bloomery

go 1.26

require (
	github.com/cespare/xxhash/v2 v2.3.0
	github.com/zeebo/xxh3 v1.1.0
	golang.org/x/sys v0.30.0
)

require github.com/klauspost/cpuid/v2 v2.2.10 // indirect
