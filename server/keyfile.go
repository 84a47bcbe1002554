package server

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
)

// ReadKeyFile reads a key file for keyed filters (Config.Keys): one key a
// line, "id hex32", where id is 1 to 64 bytes of letters, digits, '.',
// '_' and '-', and hex32 the 16-byte SipHash key in 32 hex digits. Blank
// lines and lines starting with '#' are ignored; a malformed line or a
// repeated id is an error naming the line.
//
// Filters created with KEYID id record only the id in the log and the
// snapshot; the key stays in this file, which the operator keeps (and
// backs up) apart from the data directory.
func ReadKeyFile(path string) (map[string][16]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("server: key file: %w", err)
	}
	keys := make(map[string][16]byte)
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		f := bytes.Fields(line)
		bad := func(why string) error {
			return fmt.Errorf("server: key file %s, line %d: %s (want \"id hex32\")", path, n, why)
		}
		if len(f) != 2 {
			return nil, bad("not two fields")
		}
		id := string(f[0])
		if !ValidKeyID(id) {
			return nil, bad(fmt.Sprintf("bad id %q: 1-64 letters, digits, '.', '_' or '-'", id))
		}
		var k [16]byte
		if len(f[1]) != 32 {
			return nil, bad("the key must be 32 hex digits")
		}
		if _, err := hex.Decode(k[:], f[1]); err != nil {
			return nil, bad("the key must be 32 hex digits")
		}
		if _, dup := keys[id]; dup {
			return nil, bad(fmt.Sprintf("id %q repeated", id))
		}
		keys[id] = k
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("server: key file %s: %w", path, err)
	}
	return keys, nil
}

// ValidKeyID reports whether id may name a key in a key file.
func ValidKeyID(id string) bool {
	if len(id) == 0 || len(id) > 64 {
		return false
	}
	for _, c := range []byte(id) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
