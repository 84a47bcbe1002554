package cli

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/codec"
	"github.com/bloomery/bloomery/hashing"
)

var buildCmd = &command{
	name:    "build",
	summary: "build a filter from keys, one per line",
	usage: `bloomery build --kind KIND [-n N] [-p P] -o OUT [FILE]

Reads keys, one per line, from FILE or from standard input (FILE absent or
"-"). Lines are split on '\n', a trailing '\r' is dropped and empty lines are
skipped. Each distinct key goes into the filter once: static families are
built from the keys' hashes; dynamic families are created for N keys and
the keys are added (a full filter is an error, never a dropped key).
-n defaults to the number of distinct keys in the input. Keys are hashed
into memory first (8 bytes per line). The filter is written atomically to
OUT (temporary file, fsync, rename). A summary goes to standard error, with
a progress bar when standard error is a terminal.

--load sets the fraction of a cuckoo filter's slots that N keys fill
(default and most: 0.94, where inserts still reliably succeed). A lower
load takes more slots per key and makes inserts faster, since fewer inserts
find both of a key's buckets full: at 0.85 the table has about 11% more
slots than at 0.94. Fingerprints are sized so that the false-positive rate
at N keys stays at or below P.`,
	flags: func(fs *flag.FlagSet) any {
		o := &buildOpts{p: fprFlag(0.01), load: loadFlag()}
		fs.StringVar(&o.kind, "kind", "", "filter family `KIND` (required): "+strings.Join(kindNames(), ", "))
		fs.Var(&o.n, "n", "design number of keys `N` for dynamic families (default: the number of distinct keys)")
		fs.Var(&o.p, "p", "target false-positive rate `P`, as 0.01 or 1%")
		fs.StringVar(&o.out, "o", "", "output filter `file` (required)")
		fs.Var(&o.load, "load", "fraction `L` of the table's slots that N keys fill, as 0.85 or 85% (cuckoo only; default 0.94)")
		o.hash.register(fs, true)
		return o
	},
	run: runBuild,
}

type buildOpts struct {
	kind string
	n    countValue
	p    fractionValue
	load fractionValue
	out  string
	hash hashFlags
}

// kindNames lists the kinds registered in this build.
func kindNames() []string { return kindsWhere(func(codec.Family) bool { return true }) }

// loadKinds lists the kinds whose table load --load sets.
func loadKinds() []string {
	return kindsWhere(func(f codec.Family) bool { return f.NewAtLoad != nil })
}

// kindsWhere lists the registered kinds whose family keep accepts.
func kindsWhere(keep func(codec.Family) bool) []string {
	var names []string
	for _, f := range codec.Families() {
		if keep(f) {
			names = append(names, f.Kind.String())
		}
	}
	return names
}

// lookupKind resolves a kind name given on the command line to a
// registered family; an unknown or unregistered name is a usage error.
func lookupKind(name string) (codec.Family, error) {
	if name == "" {
		return codec.Family{}, usagef("--kind is required (one of: %s)", strings.Join(kindNames(), ", "))
	}
	k, err := bloomery.ParseKind(name)
	if err == nil {
		var fam codec.Family
		if fam, err = codec.Lookup(k); err == nil {
			return fam, nil
		}
	}
	return codec.Family{}, usagef("unknown kind %q (this build has: %s)", name, strings.Join(kindNames(), ", "))
}

func runBuild(e *env, opts any, args []string) error {
	o := opts.(*buildOpts)
	if len(args) > 1 {
		return usagef("at most one input FILE, got %d arguments", len(args))
	}
	if o.out == "" {
		return usagef("-o OUT is required")
	}
	fam, err := lookupKind(o.kind)
	if err != nil {
		return err
	}
	if o.load.set && fam.NewAtLoad == nil {
		return usagef("--load applies to %s filters, not %s", strings.Join(loadKinds(), ", "), fam.Kind)
	}
	h, err := o.hash.hasher()
	if err != nil {
		return err
	}
	if fam.Kind == bloomery.KindSBBF && !o.hash.seedSet && o.hash.keyFile == "" {
		// The Parquet split-block filter's format mandates XXH64 with
		// seed 0: without flags, build what Parquet readers understand.
		h = hashing.XXH64(0)
	}

	in, name, size := e.stdin, "standard input", int64(0)
	if len(args) == 1 && args[0] != "-" {
		file, err := os.Open(args[0])
		if err != nil {
			return err
		}
		defer file.Close()
		st, err := file.Stat()
		if err != nil {
			return err
		}
		if st.Mode().IsRegular() {
			size = st.Size()
		}
		if ost, err := os.Stat(o.out); err == nil && os.SameFile(st, ost) {
			return usagef("-o %s would replace the input key file", o.out)
		}
		in, name = file, args[0]
	}
	if len(args) == 0 || args[0] == "-" {
		hintStdin(e)
	}
	cr := &countingReader{r: in}
	bar := newProgress(e, "reading", size)

	// Every key is hashed once into memory (8 bytes per line): a static
	// family needs all hashes anyway, and sorting them gives the distinct
	// count that sizes a dynamic family and lets each distinct key be
	// added exactly once, so multiset families (cuckoo, counting) hold
	// one copy per key however often it repeats in the input.
	hashes, err := readHashes(cr, h, bar)
	bar.done()
	if err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	lines := len(hashes)
	slices.Sort(hashes)
	hashes = slices.Compact(hashes)
	distinct := len(hashes)

	var f bloomery.Filter
	if fam.Build != nil {
		if o.n.set && o.n.n != distinct {
			fmt.Fprintf(e.stderr, "bloomery build: note: %s is static; it is built from the %d distinct keys, -n %d is not used\n", fam.Kind, distinct, o.n.n)
		}
		f, err = fam.Build(hashes, o.p.f, h)
		if err != nil {
			return fmt.Errorf("build %s filter from %d keys: %w", fam.Kind, distinct, err)
		}
	} else {
		n := distinct
		if o.n.set {
			n = o.n.n
		}
		if n == 0 {
			return fmt.Errorf("%s holds no keys; give -n to create an empty %s filter", name, fam.Kind)
		}
		var a bloomery.Adder
		if o.load.set {
			a, err = fam.NewAtLoad(n, o.p.f, o.load.f, h)
		} else {
			a, err = fam.New(n, o.p.f, h)
		}
		if err != nil {
			return fmt.Errorf("create %s filter for %d keys: %w", fam.Kind, n, err)
		}
		if err := addAll(a, hashes); err != nil {
			return err
		}
		f = a
	}

	data, err := f.AppendBinary(nil)
	if err != nil {
		return fmt.Errorf("encode %s filter: %w", fam.Kind, err)
	}
	if err := writeFileAtomic(o.out, data); err != nil {
		return err
	}
	st := f.Stats()
	fmt.Fprintf(e.stderr, "built %s filter %s: %d distinct keys (%d lines), %d bytes (%s), %.2f bits/key, estimated FPR %s\n",
		fam.Kind, o.out, distinct, lines, len(data), humanBytes(int64(len(data))), st.BitsPerKey, percent(st.EstimatedFPR))
	warnOverfilled(e, "build", st)
	return nil
}

// warnOverfilled tells the user when a filter just written already
// reports itself overfilled: it works, but answers "maybe" far more often
// than it was designed to.
func warnOverfilled(e *env, cmd string, st bloomery.Stats) {
	if st.Overfilled {
		fmt.Fprintf(e.stderr, "bloomery %s: warning: the %s filter is overfilled: estimated FPR %s against a design FPR of %s; give a larger -n or see 'bloomery inspect'\n",
			cmd, st.Kind, percent(st.EstimatedFPR), percent(st.DesignFPR))
	}
}

// addAll adds every hash to a. An Add that reports false means either
// "already present" (a Bloom filter's false positive) or "not stored"
// (a full cuckoo or quotient filter); a follow-up ContainsHash tells them
// apart, so a build never silently drops a key.
func addAll(a bloomery.Adder, hashes []uint64) error {
	for i, x := range hashes {
		if !a.AddHash(x) && !a.ContainsHash(x) {
			return fmt.Errorf("the %s filter is full after %d of %d distinct keys; give a larger -n: %w",
				a.Kind(), i, len(hashes), bloomery.ErrFull)
		}
	}
	return nil
}

// readHashes hashes every key of r with h.
func readHashes(cr *countingReader, h hashing.Hasher, bar *progress) ([]uint64, error) {
	var hashes []uint64
	err := forEachKey(cr, func(key []byte) {
		hashes = append(hashes, h.Sum64(key))
		if len(hashes)&0xfff == 0 {
			bar.update(cr.n, len(hashes))
		}
	})
	return hashes, err
}
