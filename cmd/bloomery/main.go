// Command bloomery plans, builds, queries, inspects and merges Bloomery
// filters. All logic lives in package cli; this file only wires the
// process's arguments, standard streams and exit code to it.
package main

import (
	"os"

	"github.com/bloomery/bloomery/cmd/bloomery/internal/cli"
)

func main() {
	os.Exit(cli.Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
