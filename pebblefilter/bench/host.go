package main

import (
	"fmt"
	"os"
	"runtime"
	"strings"
)

func runtimeVersion() string { return runtime.Version() }

// hostDescription names the CPU and core count (from /proc/cpuinfo when
// available).
func hostDescription() string {
	model := runtime.GOARCH
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "model name") {
				if _, v, ok := strings.Cut(line, ":"); ok {
					model = strings.TrimSpace(v)
				}
				break
			}
		}
	}
	return fmt.Sprintf("%s, %d CPUs", model, runtime.NumCPU())
}
