package cli

import (
	"bufio"
	"flag"
	"fmt"
)

var queryCmd = &command{
	name:    "query",
	summary: "test keys against a filter",
	usage: `bloomery query [--count] [--key-file FILE] FILTER [KEY...]

Tests each KEY (or, with no KEY arguments, each line of standard input) and
prints "maybe<TAB>KEY" or "no<TAB>KEY". "no" is certain; "maybe" means the
key was added or is a false positive. With --count, prints one line
"maybe=M no=N" instead. Use "--" before keys that start with '-'.`,
	flags: func(fs *flag.FlagSet) any {
		o := &queryOpts{}
		fs.BoolVar(&o.count, "count", false, `print only "maybe=M no=N"`)
		o.hash.register(fs, false)
		return o
	},
	run: runQuery,
}

type queryOpts struct {
	count bool
	hash  hashFlags
}

func runQuery(e *env, opts any, args []string) error {
	o := opts.(*queryOpts)
	if len(args) == 0 {
		return usagef("FILTER is required")
	}
	want, err := o.hash.expect()
	if err != nil {
		return err
	}
	f, _, err := loadFilter(args[0], want)
	if err != nil {
		return err
	}
	out := bufio.NewWriterSize(e.stdout, 64<<10)
	var maybe, no int
	test := func(key []byte) {
		hit := f.Contains(key)
		if hit {
			maybe++
		} else {
			no++
		}
		if o.count {
			return
		}
		if hit {
			out.WriteString("maybe\t")
		} else {
			out.WriteString("no\t")
		}
		out.Write(key)
		out.WriteByte('\n')
	}
	if len(args) > 1 {
		for _, k := range args[1:] {
			test([]byte(k))
		}
	} else {
		hintStdin(e)
		if err := forEachKey(e.stdin, test); err != nil {
			out.Flush()
			return fmt.Errorf("read standard input: %w", err)
		}
	}
	if o.count {
		fmt.Fprintf(out, "maybe=%d no=%d\n", maybe, no)
	}
	return out.Flush()
}
