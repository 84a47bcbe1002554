package main

import (
	"maps"
	"testing"
)

func TestParseKinds(t *testing.T) {
	for _, c := range []struct {
		in   string
		want map[string]bool
	}{
		{"uint64,string", map[string]bool{"uint64": true, "string": true}},
		{"string", map[string]bool{"string": true}},
		{" uint64 ", map[string]bool{"uint64": true}},
		{"uint64,,string,uint64", map[string]bool{"uint64": true, "string": true}},
	} {
		got, err := parseKinds(c.in)
		if err != nil || !maps.Equal(got, c.want) {
			t.Errorf("parseKinds(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"", ",", "strings", "uint64,bytes"} {
		if got, err := parseKinds(in); err == nil {
			t.Errorf("parseKinds(%q) = %v, want an error", in, got)
		}
	}
}
