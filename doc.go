// Package bloomery is the root of the Bloomery filter toolkit: it defines
// the family kinds, the interfaces every family implements and the sentinel
// errors they wrap. It imports no family; the families live in their own
// packages (bloom, cuckoo, fuse, ribbon, ...), and package codec decodes any
// of them from the container format.
//
// # Guarantees
//
//   - Never a false negative: a key that was added (and, for deleting
//     families, not deleted) is always reported as possibly present, after
//     merges, resizes, marshalling and concurrent adds where a family offers
//     them.
//   - Every persisted filter records its hash algorithm, seed (or for keyed
//     hashing a fingerprint of the secret key, never the key), its index
//     derivation (layout) and the format version, under a CRC-32C checksum.
//     Loading or merging anything that does not match is refused with
//     [ErrIncompatible], [ErrCorrupt] or [ErrUnsupportedVersion].
//   - Dynamic filters know their design capacity and report an estimated
//     false-positive rate from their actual fill; [Stats.Overfilled] is set
//     once that estimate exceeds twice the design rate.
//
// # Hashing
//
// Every family hashes a key once to 64 bits (package hashing: seeded XXH3 by
// default, keyed SipHash-2-4 for keys an attacker may choose) and derives all
// of its indices from that hash. The *Hash variants of each method take that
// 64-bit hash directly, so a caller can hash once and probe many filters.
package bloomery
