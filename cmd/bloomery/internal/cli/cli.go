// Package cli implements the bloomery command line: plan, build, query,
// inspect, merge, version and help. It reaches every filter family through
// the codec catalog (codec.Families, codec.Lookup, codec.Decode,
// codec.Merge), so a family that registers itself there appears in every
// command without an edit here.
//
// Run is the single entry point; it never calls os.Exit and touches the
// process only through the streams it is given and the files named on the
// command line, so tests run commands in-process.
//
// Exit codes: 0 success, 1 failure (bad input file, I/O error, incompatible
// filters...), 2 usage error (unknown command or flag, missing argument).
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// Exit codes returned by Run.
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitUsage   = 2
)

// env is what a command may touch: the standard streams and whether stderr
// is an interactive terminal (which enables progress bars).
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	tty            bool
}

// command is one subcommand. Its usage text starts with the synopsis line
// ("bloomery build --kind KIND ..."); flag descriptions are appended from
// the command's FlagSet.
type command struct {
	name    string
	summary string
	usage   string
	// flags declares the command's flags on fs (nil if it has none). It is
	// called once per run and again to print help.
	flags func(fs *flag.FlagSet) any
	// run executes the command with the values returned by flags and the
	// positional arguments left after flag parsing.
	run func(e *env, opts any, args []string) error
	// sub lists sub-subcommands ("plan lsm"), dispatched when the first
	// argument names one of them.
	sub []*command
}

// commands is the dispatch table, in the order `bloomery help` lists them.
// A new subcommand (bench, serve, ...) is one entry here plus its own file.
var commands = []*command{
	planCmd,
	buildCmd,
	queryCmd,
	inspectCmd,
	mergeCmd,
	benchCmd,
	versionCmd,
	serveCmd,
}

// Run executes the bloomery command line args (without the program name)
// and returns the process exit code. Errors and diagnostics go to stderr,
// results to stdout.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, tty: isTerminal(stderr)}
	if len(args) == 0 {
		writeTopUsage(stderr)
		return ExitUsage
	}
	name := args[0]
	switch name {
	case "help", "-h", "-help", "--help":
		return runHelp(e, args[1:])
	}
	c := findCommand(commands, name)
	if c == nil {
		fmt.Fprintf(stderr, "bloomery: unknown command %q\n\n", name)
		writeTopUsage(stderr)
		return ExitUsage
	}
	return runCommand(e, c, "bloomery "+c.name, args[1:])
}

func findCommand(list []*command, name string) *command {
	for _, c := range list {
		if c.name == name {
			return c
		}
	}
	return nil
}

// runCommand parses flags for c (or dispatches to a sub-subcommand) and
// maps the outcome to an exit code.
func runCommand(e *env, c *command, path string, args []string) int {
	if len(c.sub) > 0 && len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		if s := findCommand(c.sub, args[0]); s != nil {
			return runCommand(e, s, path+" "+s.name, args[1:])
		}
	}
	fs := flag.NewFlagSet(path, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var opts any
	if c.flags != nil {
		opts = c.flags(fs)
	}
	pos, err := parseInterleaved(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		writeCommandUsage(e.stdout, c)
		return ExitOK
	}
	if err == nil {
		err = c.run(e, opts, pos)
	}
	return report(e, c, path, err)
}

// report prints err and returns the exit code it calls for.
func report(e *env, c *command, path string, err error) int {
	if err == nil {
		return ExitOK
	}
	var ue *usageError
	if errors.As(err, &ue) || isFlagError(err) {
		fmt.Fprintf(e.stderr, "%s: %v\n", path, err)
		fmt.Fprintf(e.stderr, "usage: %s\nRun 'bloomery help %s' for details.\n", firstLine(c.usage), strings.TrimPrefix(path, "bloomery "))
		return ExitUsage
	}
	fmt.Fprintf(e.stderr, "%s: %v\n", path, err)
	return ExitFailure
}

// flagError marks errors returned by flag.FlagSet.Parse (unknown flag, bad
// value): they are usage errors.
type flagError struct{ err error }

func (f *flagError) Error() string { return f.err.Error() }
func (f *flagError) Unwrap() error { return f.err }

func isFlagError(err error) bool {
	var fe *flagError
	return errors.As(err, &fe)
}

// usageError reports a command line that does not make sense (missing
// argument, conflicting flags); Run exits with ExitUsage.
type usageError struct{ msg string }

func (u *usageError) Error() string { return u.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// parseInterleaved parses flags that may appear before, between or after
// positional arguments ("inspect f.blmy --json"), as the documented command
// shapes require. A "--" ends flag parsing: everything after it is
// positional (for keys that start with '-').
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, &flagError{err}
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		consumed := len(args) - len(rest)
		if consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func writeTopUsage(w io.Writer) {
	fmt.Fprintf(w, "bloomery: approximate-membership filters (Bloom, blocked Bloom and the other families in this build)\n\n")
	fmt.Fprintf(w, "usage: bloomery COMMAND [ARGS]\n\ncommands:\n")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "  %-9s %s\n", "help", "show help for a command")
	fmt.Fprintf(w, "\nRun 'bloomery help COMMAND' or 'bloomery COMMAND -h' for a command's flags.\n")
}

func writeCommandUsage(w io.Writer, c *command) {
	fmt.Fprintf(w, "usage: %s\n", strings.TrimRight(c.usage, "\n"))
	if c.flags != nil {
		fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
		c.flags(fs)
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n > 0 {
			fmt.Fprintf(w, "\nflags:\n")
			fs.SetOutput(w)
			fs.PrintDefaults()
		}
	}
	if len(c.sub) > 0 {
		fmt.Fprintf(w, "\nsubcommands:\n")
		for _, s := range c.sub {
			fmt.Fprintf(w, "  %-9s %s\n", s.name, s.summary)
		}
	}
}

// runHelp serves "bloomery help [COMMAND [SUB]]".
func runHelp(e *env, args []string) int {
	if len(args) == 0 {
		writeTopUsage(e.stdout)
		return ExitOK
	}
	list := commands
	var c *command
	for _, name := range args {
		c = findCommand(list, name)
		if c == nil {
			fmt.Fprintf(e.stderr, "bloomery help: unknown command %q\n\n", strings.Join(args, " "))
			writeTopUsage(e.stderr)
			return ExitUsage
		}
		list = c.sub
	}
	writeCommandUsage(e.stdout, c)
	return ExitOK
}

// hintStdin tells an interactive user where keys are expected, so a
// command waiting on a terminal does not look hung.
func hintStdin(e *env) {
	if isTerminal(e.stdin) {
		fmt.Fprintln(e.stderr, "reading keys from standard input, one per line (end with Ctrl-D)")
	}
}

// isTerminal reports whether s (a stream) is a character device (an
// interactive terminal), without any dependency: os.File.Stat's
// ModeCharDevice.
func isTerminal(s any) bool {
	f, ok := s.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
