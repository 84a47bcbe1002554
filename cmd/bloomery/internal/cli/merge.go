package cli

import (
	"flag"
	"fmt"
	"strings"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/codec"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/container"
)

var mergeCmd = &command{
	name:    "merge",
	summary: "write the union of compatible filters",
	usage: `bloomery merge -o OUT A B...

Writes to OUT the union of the filters A, B, ...: a filter that answers
"maybe" for every key any input holds. The inputs must be of one mergeable
family with identical parameters and hashing (kind, layout, hash algorithm,
seed or key fingerprint, size, probes); otherwise the command names the
mismatch and writes nothing. Keyed inputs merge without their key unless
--key-file is given, in which case every input must match that key.`,
	flags: func(fs *flag.FlagSet) any {
		o := &mergeOpts{}
		fs.StringVar(&o.out, "o", "", "output filter `file` (required)")
		o.hash.register(fs, false)
		return o
	},
	run: runMerge,
}

type mergeOpts struct {
	out  string
	hash hashFlags
}

func runMerge(e *env, opts any, args []string) error {
	o := opts.(*mergeOpts)
	if o.out == "" {
		return usagef("-o OUT is required")
	}
	if len(args) < 2 {
		return usagef("at least two input filters are required, got %d", len(args))
	}
	want := hashing.Expect{Keyless: true}
	if o.hash.keyFile != "" {
		var err error
		if want, err = o.hash.expect(); err != nil {
			return err
		}
	}
	var (
		inputs = make([]bloomery.Filter, 0, len(args))
		first  container.Header
	)
	for i, path := range args {
		f, data, err := loadFilter(path, want)
		if err != nil {
			return err
		}
		h, err := container.Peek(data)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if i == 0 {
			first = h
		} else if err := sameEnvelope(args[0], first, path, h); err != nil {
			return err
		}
		inputs = append(inputs, f)
	}
	// The family checks its own parameters (size, probes); its error
	// numbers the inputs in command-line order.
	acc, err := codec.Merge(inputs...)
	if err != nil {
		return fmt.Errorf("cannot merge %s: %w", listNames(args), err)
	}
	data, err := acc.AppendBinary(nil)
	if err != nil {
		return fmt.Errorf("encode merged filter: %w", err)
	}
	if err := writeFileAtomic(o.out, data); err != nil {
		return err
	}
	st := acc.Stats()
	fmt.Fprintf(e.stderr, "merged %d %s filters into %s: %d bytes, fill %.2f%%, estimated FPR %s\n",
		len(args), acc.Kind(), o.out, len(data), 100*st.FillRatio, percent(st.EstimatedFPR))
	warnOverfilled(e, "merge", st)
	return nil
}

// sameEnvelope compares the header fields that two mergeable filters must
// share and names the first that differs; the family's Merge then checks
// its own parameters (size, probes...).
func sameEnvelope(pa string, a container.Header, pb string, b container.Header) error {
	mismatch := func(what string, va, vb any) error {
		return fmt.Errorf("cannot merge %s into %s: %s differs (%s has %v, %s has %v): %w",
			pb, pa, what, pa, va, pb, vb, bloomery.ErrIncompatible)
	}
	switch {
	case a.Kind != b.Kind:
		return mismatch("kind", a.Kind, b.Kind)
	case a.Layout != b.Layout:
		// The same key sets different bits in each layout, so no merge can
		// be right; the older file has to be rebuilt from its keys.
		return fmt.Errorf("%w; rebuild the file of the older layout from its keys with this version of bloomery build",
			mismatch("layout version", a.Layout, b.Layout))
	case a.Hash != b.Hash:
		return mismatch("hash algorithm", a.Hash, b.Hash)
	case a.Seed != b.Seed && a.Hash == hashing.AlgSipHash:
		return mismatch("key fingerprint", fmt.Sprintf("%016x", a.Seed), fmt.Sprintf("%016x", b.Seed))
	case a.Seed != b.Seed:
		return mismatch("seed", a.Seed, b.Seed)
	}
	return nil
}

// listNames joins names as "a, b and c".
func listNames(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
