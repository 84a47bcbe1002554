package cli

import (
	"flag"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/bloomery/bloomery/internal/container"
)

var versionCmd = &command{
	name:    "version",
	summary: "print the version, container format and families of this build",
	usage:   "bloomery version",
	flags:   func(*flag.FlagSet) any { return nil },
	run:     runVersion,
}

func runVersion(e *env, _ any, args []string) error {
	if len(args) > 0 {
		return usagef("unexpected argument %q", args[0])
	}
	version, rev := "(devel)", ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		var modified bool
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if rev != "" && modified {
			rev += " (modified)"
		}
	}
	fmt.Fprintf(e.stdout, "bloomery %s\n", version)
	if rev != "" {
		fmt.Fprintf(e.stdout, "commit: %s\n", rev)
	}
	fmt.Fprintf(e.stdout, "go: %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(e.stdout, "container format: %d\n", container.Version)
	_, err := fmt.Fprintf(e.stdout, "families: %s\n", strings.Join(kindNames(), " "))
	return err
}
