package bloom

import (
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/bloomery/bloomery/internal/filtertest"
)

// TestContainsBatchNoOverRead places the hashes at the very end of a
// readable page followed by an inaccessible one, so that ContainsBatch
// (and the assembly loop's look-ahead, for every prefetch distance)
// faults if it reads one hash past the slice.
func TestContainsBatchNoOverRead(t *testing.T) {
	page := unix.Getpagesize()
	mem, err := unix.Mmap(-1, 0, 2*page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Skip("mmap:", err)
	}
	defer unix.Munmap(mem)
	if err := unix.Mprotect(mem[page:], unix.PROT_NONE); err != nil {
		t.Skip("mprotect:", err)
	}
	words := unsafe.Slice((*uint64)(unsafe.Pointer(&mem[0])), page/8)
	src := filtertest.Hashes(len(words), 11)
	copy(words, src)
	f, err := NewBlocked(Params{Capacity: 1000, BitsPerKey: 10, HashFuncs: 6})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range src[:500] {
		f.AddHash(h)
	}
	out := make([]bool, len(words))
	for _, l := range []int{1, 2, 31, 32, 33, 63, 64, 65, 100, len(words)} {
		hs := words[len(words)-l:]
		f.ContainsBatch(hs, out)
		for i, h := range hs {
			if out[i] != f.ContainsHash(h) {
				t.Fatalf("len %d: out[%d] differs from ContainsHash", l, i)
			}
		}
		for _, loop := range batchLoops() {
			for _, ahead := range []int{1, 32, 1000} {
				loop.fn(unsafe.Pointer(&f.words[0]), f.blocks, &hs[0], &out[0], l, f.k, ahead)
			}
		}
	}
}
