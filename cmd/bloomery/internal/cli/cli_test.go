package cli

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/codec"
	"github.com/bloomery/bloomery/cuckoo"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/filtertest"
)

// result is one in-process run of the command line.
type result struct {
	code           int
	stdout, stderr string
}

func run(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(args, strings.NewReader(stdin), &out, &errb)
	return result{code, out.String(), errb.String()}
}

// mustRun runs args and fails the test unless the exit code is 0.
func mustRun(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	r := run(t, stdin, args...)
	if r.code != ExitOK {
		t.Fatalf("bloomery %s: exit %d\nstderr: %s", strings.Join(args, " "), r.code, r.stderr)
	}
	return r
}

// writeKeys writes keys one per line to dir/name and returns the path.
func writeKeys(t *testing.T, dir, name string, keys [][]byte) string {
	t.Helper()
	var b bytes.Buffer
	for _, k := range keys {
		b.Write(k)
		b.WriteByte('\n')
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func joinKeys(keys [][]byte) string {
	var b strings.Builder
	for _, k := range keys {
		b.Write(k)
		b.WriteByte('\n')
	}
	return b.String()
}

// requireKinds fails the test if a kind the test relies on is not in the
// catalog (package bloom registers bloom and blocked).
func requireKinds(t *testing.T, kinds ...bloomery.Kind) {
	t.Helper()
	for _, k := range kinds {
		if _, err := codec.Lookup(k); err != nil {
			t.Fatalf("kind %v is not registered: %v", k, err)
		}
	}
}

// listDir returns the names in dir.
func listDir(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// checkLen accepts the Len of a dynamic filter built from n distinct keys:
// Len counts the adds that reported a new key, so keys that were false
// positives when added are not counted; at a design FPR of 1% that is well
// under 1% of the keys.
func checkLen(t *testing.T, got, n int) {
	t.Helper()
	if got > n || float64(got) < 0.99*float64(n) {
		t.Errorf("Len = %d, want within 1%% below %d distinct keys", got, n)
	}
}

func parseCountLine(t *testing.T, s string) (maybe, no int) {
	t.Helper()
	if _, err := fmt.Sscanf(s, "maybe=%d no=%d\n", &maybe, &no); err != nil {
		t.Fatalf("--count output %q: %v", s, err)
	}
	if want := fmt.Sprintf("maybe=%d no=%d\n", maybe, no); s != want {
		t.Fatalf("--count output %q, want exactly one line %q", s, want)
	}
	return maybe, no
}

// TestBuildQueryEveryFamily builds a filter of every registered family from
// a key file and checks, through the query command, that every key answers
// maybe and that absent keys are mostly rejected.
func TestBuildQueryEveryFamily(t *testing.T) {
	requireKinds(t, bloomery.KindBloom, bloomery.KindBlocked)
	const n = 20000
	dir := t.TempDir()
	keys := filtertest.Keys(n, 1)
	absent := filtertest.Keys(n, 2)
	keyFile := writeKeys(t, dir, "keys.txt", keys)
	for _, fam := range codec.Families() {
		kind := fam.Kind.String()
		t.Run(kind, func(t *testing.T) {
			out := filepath.Join(dir, kind+".blmy")
			r := mustRun(t, "", "build", "--kind", kind, "-p", "0.01", "-o", out, keyFile)
			if !strings.Contains(r.stderr, "built "+kind+" filter") {
				t.Errorf("summary line missing: %q", r.stderr)
			}
			buildStderr := r.stderr
			r = mustRun(t, joinKeys(keys), "query", "--count", out)
			maybe, no := parseCountLine(t, r.stdout)
			if maybe != n || no != 0 {
				t.Fatalf("present keys: maybe=%d no=%d, want maybe=%d no=0 (false negatives)", maybe, no, n)
			}
			f, _, err := loadFilter(out, hashing.Expect{})
			if err != nil {
				t.Fatal(err)
			}
			st := f.Stats()
			r = mustRun(t, joinKeys(absent), "query", out, "--count")
			maybe, _ = parseCountLine(t, r.stdout)
			fpr := float64(maybe) / n
			if !st.Overfilled {
				// A filter that does not report itself overfilled must
				// be near its 1% design: 5% leaves room for families
				// with a fixed, coarser FPR without letting a saturated
				// filter pass.
				if fpr > 0.05 {
					t.Errorf("absent keys: %d of %d answered maybe, yet the filter does not report itself overfilled (estimated FPR %v)", maybe, n, st.EstimatedFPR)
				}
				return
			}
			// A catalog entry whose design n does not mean "n keys in
			// one bulk load" (rotating: n keys per window spread over
			// its generations) may be overfilled by a build; then it
			// must say so honestly, and build must warn.
			t.Logf("%s reports itself overfilled after a bulk build of n keys: estimated FPR %.3g, measured %.3g", kind, st.EstimatedFPR, fpr)
			if !strings.Contains(buildStderr, "warning: the "+kind+" filter is overfilled") {
				t.Errorf("build did not warn about the overfilled filter: %q", buildStderr)
			}
			if math.Abs(fpr-st.EstimatedFPR) > 0.15*st.EstimatedFPR+0.005 {
				t.Errorf("overfilled filter: measured FPR %.4f, its estimate %.4f", fpr, st.EstimatedFPR)
			}
		})
	}
}

// TestBuildQueryFullSize is the 10^6-key run: no false negatives through
// build (file, -n derived) and query (stdin), for both Bloom layouts, and
// a measured FPR near the design target.
func TestBuildQueryFullSize(t *testing.T) {
	requireKinds(t, bloomery.KindBloom, bloomery.KindBlocked)
	n := 1_000_000
	if testing.Short() {
		n = 50_000
	}
	dir := t.TempDir()
	keys := filtertest.Keys(n, 3)
	keyFile := writeKeys(t, dir, "keys.txt", keys)
	absentFile := writeKeys(t, dir, "absent.txt", filtertest.Keys(n, 4))
	for _, kind := range []string{"bloom", "blocked"} {
		t.Run(kind, func(t *testing.T) {
			out := filepath.Join(dir, kind+".blmy")
			mustRun(t, "", "build", "--kind", kind, "-p", "0.01", "-o", out, keyFile)
			f, _, err := loadFilter(out, hashing.Expect{})
			if err != nil {
				t.Fatal(err)
			}
			checkLen(t, f.Len(), n)
			data, _ := os.ReadFile(keyFile)
			maybe, no := parseCountLine(t, mustRun(t, string(data), "query", "--count", out).stdout)
			if maybe != n || no != 0 {
				t.Fatalf("maybe=%d no=%d: false negatives", maybe, no)
			}
			data, _ = os.ReadFile(absentFile)
			maybe, _ = parseCountLine(t, mustRun(t, string(data), "query", "--count", out).stdout)
			fpr := float64(maybe) / float64(n)
			// Design target 1%; the families size to meet it, so the
			// measurement must not exceed it by more than sampling noise
			// (n=10^6: sigma about 0.01%) plus the 15% model tolerance.
			if fpr > 0.0115 {
				t.Errorf("measured FPR %.4f%% above 1%% target", fpr*100)
			}
		})
	}
}

func TestBuildFromStdinWithN(t *testing.T) {
	requireKinds(t, bloomery.KindBloom)
	dir := t.TempDir()
	keys := filtertest.Keys(5000, 5)
	out := filepath.Join(dir, "f.blmy")
	// Keys from stdin with -n given; duplicate
	// lines, CRLF endings and blank lines are tolerated.
	in := joinKeys(keys) + "\n\r\n" + string(keys[0]) + "\r\n"
	mustRun(t, in, "build", "--kind", "bloom", "-n", "10_000", "-p", "1%", "-o", out)
	f, _, err := loadFilter(out, hashing.Expect{})
	if err != nil {
		t.Fatal(err)
	}
	st := f.Stats()
	if st.Cap != 10000 {
		t.Errorf("cap=%d, want 10000", st.Cap)
	}
	checkLen(t, st.Len, len(keys))
	// stdin with no -n: n is the distinct count (duplicates collapse).
	mustRun(t, in, "build", "--kind", "bloom", "-o", out, "-")
	f, _, err = loadFilter(out, hashing.Expect{})
	if err != nil {
		t.Fatal(err)
	}
	if st := f.Stats(); st.Cap != len(keys) {
		t.Errorf("cap=%d, want the distinct key count %d", st.Cap, len(keys))
	}
}

func TestQueryLines(t *testing.T) {
	requireKinds(t, bloomery.KindBloom)
	dir := t.TempDir()
	out := filepath.Join(dir, "f.blmy")
	mustRun(t, "apple\nbanana\n-dash\n", "build", "--kind", "bloom", "-n", "1000", "-o", out)
	r := mustRun(t, "", "query", out, "apple", "banana", "zzz-not-there-0", "--", "-dash")
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("got %d lines, want 4: %q", len(lines), r.stdout)
	}
	for i, want := range []string{"maybe\tapple", "maybe\tbanana", "", "maybe\t-dash"} {
		if want != "" && lines[i] != want {
			t.Errorf("line %d = %q, want %q", i, lines[i], want)
		}
	}
	if l := lines[2]; l != "no\tzzz-not-there-0" && l != "maybe\tzzz-not-there-0" {
		t.Errorf("line 2 = %q, want no/maybe<TAB>key", l)
	}
	// Stdin form, same shape.
	r = mustRun(t, "banana\n", "query", out)
	if r.stdout != "maybe\tbanana\n" {
		t.Errorf("stdin query = %q", r.stdout)
	}
	// With 1000 slots and 3 keys, absent keys are nearly all "no".
	var absent strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&absent, "absent-%d\n", i)
	}
	r = mustRun(t, absent.String(), "query", out)
	if c := strings.Count(r.stdout, "no\t"); c < 990 {
		t.Errorf("only %d of 1000 absent keys answered no", c)
	}
}

func TestSeedAndKeyedHashing(t *testing.T) {
	requireKinds(t, bloomery.KindBloom)
	dir := t.TempDir()
	keys := filtertest.Keys(2000, 6)
	keyFile := writeKeys(t, dir, "keys.txt", keys)

	seeded := filepath.Join(dir, "seeded.blmy")
	mustRun(t, "", "build", "--kind", "bloom", "--seed", "42", "-o", seeded, keyFile)
	var rep inspectReport
	if err := json.Unmarshal([]byte(mustRun(t, "", "inspect", "--json", seeded).stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Header.Seed == nil || *rep.Header.Seed != 42 || rep.Header.Hash != "xxh3-64" {
		t.Errorf("header = %+v, want xxh3-64 seed 42", rep.Header)
	}
	maybe, _ := parseCountLine(t, mustRun(t, joinKeys(keys), "query", "--count", seeded).stdout)
	if maybe != len(keys) {
		t.Errorf("seeded filter: maybe=%d of %d", maybe, len(keys))
	}

	secret := filepath.Join(dir, "secret.key")
	os.WriteFile(secret, []byte("000102030405060708090a0b0c0d0e0f\n"), 0o600)
	raw := filepath.Join(dir, "raw.key")
	os.WriteFile(raw, []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, 0o600)
	other := filepath.Join(dir, "other.key")
	os.WriteFile(other, []byte("ffeeddccbbaa99887766554433221100"), 0o600)

	keyed := filepath.Join(dir, "keyed.blmy")
	mustRun(t, "", "build", "--kind", "bloom", "--key-file", secret, "-o", keyed, keyFile)
	data, _ := os.ReadFile(keyed)
	if bytes.Contains(data, []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}) {
		t.Fatal("the secret key is written into the filter")
	}
	// Without the key: clear failure.
	r := run(t, joinKeys(keys[:1]), "query", keyed)
	if r.code != ExitFailure || !strings.Contains(r.stderr, "--key-file") {
		t.Errorf("query without key: exit %d, stderr %q", r.code, r.stderr)
	}
	// Hex and raw forms of the same key both work.
	for _, kf := range []string{secret, raw} {
		maybe, no := parseCountLine(t, mustRun(t, joinKeys(keys), "query", "--count", "--key-file", kf, keyed).stdout)
		if maybe != len(keys) || no != 0 {
			t.Errorf("key file %s: maybe=%d no=%d", kf, maybe, no)
		}
	}
	// A wrong key is refused by fingerprint, not silently used.
	r = run(t, "x\n", "query", "--key-file", other, keyed)
	if r.code != ExitFailure || !strings.Contains(r.stderr, "fingerprint") {
		t.Errorf("query with wrong key: exit %d, stderr %q", r.code, r.stderr)
	}
	// Inspect needs no key and shows only the fingerprint.
	r = mustRun(t, "", "inspect", keyed, "--json")
	rep = inspectReport{}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%016x", hashing.SipHash([16]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}).Fingerprint())
	if rep.Header.Hash != "siphash-2-4" || rep.Header.Seed != nil || rep.Header.KeyFingerprint != want {
		t.Errorf("keyed header = %+v, want siphash-2-4 fingerprint %s", rep.Header, want)
	}
	checkLen(t, rep.Stats.Len, len(keys))
	// Bad key files.
	bad := filepath.Join(dir, "bad.key")
	os.WriteFile(bad, []byte("0011"), 0o600)
	if r := run(t, "", "query", "--key-file", bad, keyed, "x"); r.code != ExitFailure || !strings.Contains(r.stderr, "32 hex digits") {
		t.Errorf("short key file: exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestInspect(t *testing.T) {
	requireKinds(t, bloomery.KindBloom)
	dir := t.TempDir()
	keys := filtertest.Keys(10000, 7)
	keyFile := writeKeys(t, dir, "keys.txt", keys)
	out := filepath.Join(dir, "f.blmy")
	mustRun(t, "", "build", "--kind", "bloom", "-p", "0.01", "-o", out, keyFile)
	data, _ := os.ReadFile(out)
	h, err := codec.ReadHeader(data)
	if err != nil {
		t.Fatal(err)
	}

	r := mustRun(t, "", "inspect", out)
	if strings.Contains(r.stdout, " \n") {
		t.Errorf("inspect text has trailing blanks")
	}
	for _, want := range []string{
		"magic", "BLMY", "kind", "bloom (1)", "xxh3-64 (1), seed 0", "layout", "params", "payload",
		fmt.Sprintf("%08x (verified)", h.Checksum), "len", "10000", "bits/key", "hash funcs (k)",
		"fill", "design FPR", "1.00%", "estimated FPR", "overfill", "ok:",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("inspect output lacks %q:\n%s", want, r.stdout)
		}
	}

	r = mustRun(t, "", "inspect", "--json", out)
	var rep inspectReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("inspect --json: %v\n%s", err, r.stdout)
	}
	hd := rep.Header
	if hd.Magic != "BLMY" || hd.Version != 1 || hd.Kind != "bloom" || hd.KindID != 1 || hd.HashID != 1 ||
		hd.PayloadLen != h.PayloadLen || hd.ParamsLen != h.ParamsLen || hd.CRC32C != fmt.Sprintf("%08x", h.Checksum) {
		t.Errorf("header = %+v, container says %+v", hd, h)
	}
	st := rep.Stats
	checkLen(t, st.Len, 10000)
	if st.Cap != 10000 || st.HashFuncs != 7 || st.Overfilled {
		t.Errorf("stats = %+v", st)
	}
	if d := float64(st.DesignFPR); d > 0.01 || d < 0.0095 {
		t.Errorf("design FPR = %v, want just under 0.01", d)
	}
	if e := float64(st.EstimatedFPR); e <= 0 || e > 0.0115 {
		t.Errorf("estimated FPR = %v at design load", e)
	}
	if rep.Bytes != len(data) {
		t.Errorf("bytes = %d, file is %d", rep.Bytes, len(data))
	}

	// Overfilled: 3x the design n.
	over := filepath.Join(dir, "over.blmy")
	r = mustRun(t, "", "build", "--kind", "bloom", "-n", "3333", "-o", over, keyFile)
	if !strings.Contains(r.stderr, "warning: the bloom filter is overfilled") {
		t.Errorf("build at 3x load did not warn: %q", r.stderr)
	}
	r = mustRun(t, "", "inspect", over)
	if !strings.Contains(r.stdout, "OVERFILLED") {
		t.Errorf("overfilled filter not reported:\n%s", r.stdout)
	}
	r = mustRun(t, "", "inspect", over, "--json")
	rep = inspectReport{}
	json.Unmarshal([]byte(r.stdout), &rep)
	if !rep.Stats.Overfilled {
		t.Errorf("json overfilled = false at 3x load")
	}
}

func TestMerge(t *testing.T) {
	requireKinds(t, bloomery.KindBloom, bloomery.KindBlocked)
	dir := t.TempDir()
	a, b := filtertest.Keys(5000, 8), filtertest.Keys(5000, 9)
	fa, fb := filepath.Join(dir, "a.blmy"), filepath.Join(dir, "b.blmy")
	mustRun(t, joinKeys(a), "build", "--kind", "bloom", "-n", "10000", "-o", fa)
	mustRun(t, joinKeys(b), "build", "--kind", "bloom", "-n", "10000", "-o", fb)
	out := filepath.Join(dir, "ab.blmy")
	r := mustRun(t, "", "merge", "-o", out, fa, fb)
	if !strings.Contains(r.stderr, "merged 2 bloom filters") {
		t.Errorf("summary = %q", r.stderr)
	}
	all := append(append([][]byte{}, a...), b...)
	maybe, no := parseCountLine(t, mustRun(t, joinKeys(all), "query", "--count", out).stdout)
	if maybe != len(all) || no != 0 {
		t.Fatalf("merged: maybe=%d no=%d, want all %d", maybe, no, len(all))
	}

	// Incompatible inputs: a clear message and nothing written, not even
	// over an existing file.
	fsize := filepath.Join(dir, "size.blmy")
	mustRun(t, joinKeys(b), "build", "--kind", "bloom", "-n", "20000", "-o", fsize)
	fseed := filepath.Join(dir, "seed.blmy")
	mustRun(t, joinKeys(b), "build", "--kind", "bloom", "-n", "10000", "--seed", "7", "-o", fseed)
	fkind := filepath.Join(dir, "kind.blmy")
	mustRun(t, joinKeys(b), "build", "--kind", "blocked", "-n", "10000", "-o", fkind)
	existing := filepath.Join(dir, "existing.blmy")
	os.WriteFile(existing, []byte("keep me"), 0o644)
	for _, tc := range []struct {
		name, other, want string
	}{
		{"size", fsize, "incompatible"},
		{"seed", fseed, "seed differs"},
		{"kind", fkind, "kind differs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := listDir(t, dir)
			for _, o := range []string{filepath.Join(dir, "never.blmy"), existing} {
				r := run(t, "", "merge", "-o", o, fa, tc.other)
				if r.code != ExitFailure {
					t.Fatalf("exit %d, want %d; stderr %q", r.code, ExitFailure, r.stderr)
				}
				if !strings.Contains(r.stderr, tc.want) || !strings.Contains(r.stderr, filepath.Base(tc.other)) {
					t.Errorf("message %q lacks %q or the file name", r.stderr, tc.want)
				}
			}
			if got := listDir(t, dir); strings.Join(got, ",") != strings.Join(before, ",") {
				t.Errorf("directory changed: %v -> %v", before, got)
			}
			if d, _ := os.ReadFile(existing); string(d) != "keep me" {
				t.Errorf("existing output overwritten: %q", d)
			}
		})
	}
}

// A standard filter written before layout 2 (bloom's golden layout 1
// file) and one built now from the same keys and parameters set different
// bits: merge refuses, names the layouts and says what to do, and writes
// nothing.
func TestMergeLayouts(t *testing.T) {
	requireKinds(t, bloomery.KindBloom)
	dir := t.TempDir()
	old, err := os.ReadFile("../../../../bloom/testdata/golden/v1/bloom.blmy")
	if err != nil {
		t.Fatal(err)
	}
	f1 := filepath.Join(dir, "layout1.blmy")
	if err := os.WriteFile(f1, old, 0o644); err != nil {
		t.Fatal(err)
	}
	var keys strings.Builder
	for i := range 500 {
		fmt.Fprintf(&keys, "golden-key-%04d\n", i)
	}
	f2 := filepath.Join(dir, "layout2.blmy")
	mustRun(t, keys.String(), "build", "--kind", "bloom", "-n", "500", "-p", "0.01", "-o", f2)
	if maybe, no := parseCountLine(t, mustRun(t, keys.String(), "query", "--count", f1).stdout); maybe != 500 || no != 0 {
		t.Fatalf("layout 1 file: maybe=%d no=%d", maybe, no)
	}
	before := listDir(t, dir)
	r := run(t, "", "merge", "-o", filepath.Join(dir, "out.blmy"), f1, f2)
	if r.code != ExitFailure || !strings.Contains(r.stderr, "layout version differs (") || !strings.Contains(r.stderr, "rebuild") {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	if got := listDir(t, dir); strings.Join(got, ",") != strings.Join(before, ",") {
		t.Errorf("directory changed: %v -> %v", before, got)
	}
}

func TestAtomicWriteFailure(t *testing.T) {
	requireKinds(t, bloomery.KindBloom)
	dir := t.TempDir()
	// The output is a directory: the rename fails after the temp file was
	// written; the temp file must be gone.
	target := filepath.Join(dir, "out.blmy")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(target, "inside"), []byte("x"), 0o644)
	r := run(t, "a\nb\n", "build", "--kind", "bloom", "-o", target)
	if r.code != ExitFailure {
		t.Fatalf("exit %d, want %d; stderr %q", r.code, ExitFailure, r.stderr)
	}
	if got := listDir(t, dir); len(got) != 1 || got[0] != "out.blmy" {
		t.Errorf("files left behind: %v", got)
	}
	// A missing directory fails before anything is written.
	r = run(t, "a\n", "build", "--kind", "bloom", "-o", filepath.Join(dir, "no", "such", "f.blmy"))
	if r.code != ExitFailure {
		t.Errorf("missing dir: exit %d", r.code)
	}
	// The success path replaces an existing file and leaves no temp file.
	ok := filepath.Join(dir, "ok.blmy")
	os.WriteFile(ok, []byte("old"), 0o644)
	mustRun(t, "a\n", "build", "--kind", "bloom", "-o", ok)
	if got := listDir(t, dir); len(got) != 2 {
		t.Errorf("files after success: %v", got)
	}
	if _, err := os.Stat(ok); err != nil {
		t.Fatal(err)
	}
	if d, _ := os.ReadFile(ok); string(d[:4]) != "BLMY" {
		t.Errorf("output not replaced: %q", d[:4])
	}
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := writeFileAtomic(p, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := writeFileAtomic(p, []byte("two")); err != nil {
		t.Fatal(err)
	}
	if d, _ := os.ReadFile(p); string(d) != "two" {
		t.Errorf("content %q", d)
	}
	st, _ := os.Stat(p)
	if st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", st.Mode())
	}
	if got := listDir(t, dir); len(got) != 1 {
		t.Errorf("left: %v", got)
	}
}

// TestPlan checks the overfill curve for n=1e6, p=0.01 against the
// textbook values and that every registered family is planned.
func TestPlan(t *testing.T) {
	r := mustRun(t, "", "plan", "-n", "1000000", "-p", "0.01", "--json")
	var rep planReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if rep.N != 1000000 || rep.P != 0.01 {
		t.Errorf("n=%d p=%v", rep.N, rep.P)
	}
	want := []struct{ load, fpr float64 }{{1, 0.01}, {1.5, 0.058}, {2, 0.16}, {3, 0.44}, {5, 0.83}}
	if len(rep.Overfill.Rows) != len(want) {
		t.Fatalf("overfill rows = %d", len(rep.Overfill.Rows))
	}
	for i, w := range want {
		got := rep.Overfill.Rows[i]
		// The textbook curve is quoted to two digits; allow 3% relative.
		if got.Load != w.load || math.Abs(float64(got.FPR)-w.fpr) > 0.03*w.fpr {
			t.Errorf("overfill row %d = %+v, want load %v FPR about %v", i, got, w.load, w.fpr)
		}
	}
	fams := codec.Families()
	if len(rep.Families) != len(fams) {
		t.Errorf("plan lists %d families, catalog has %d", len(rep.Families), len(fams))
	}
	for i, f := range fams {
		if i < len(rep.Families) && rep.Families[i].Kind != f.Kind.String() {
			t.Errorf("row %d kind %s, want %s", i, rep.Families[i].Kind, f.Kind)
		}
	}
	if _, err := codec.Lookup(bloomery.KindBloom); err == nil {
		if rep.Overfill.Source != "bloom family plan" || rep.Overfill.K != 7 {
			t.Errorf("overfill source %q k=%d, want the bloom family's plan with k=7", rep.Overfill.Source, rep.Overfill.K)
		}
		var bloomRow planRow
		for _, f := range rep.Families {
			if f.Kind == "bloom" {
				bloomRow = f
			}
		}
		if bloomRow.HashFuncs != 7 || math.Abs(float64(bloomRow.BitsPerKey)-9.585) > 0.05 || bloomRow.Error != "" {
			t.Errorf("bloom row = %+v, want k=7 at ~9.585 bits/key", bloomRow)
		}
		if len(rep.Recommendations) == 0 {
			t.Errorf("no recommendation")
		}
	}

	// Text form: the same figures as rounded percentages, and a
	// recommendation line.
	r = mustRun(t, "", "plan", "-n", "1e6", "-p", "0.01")
	texts := []string{"recommendation:", "overfill: standard bloom"}
	for _, row := range rep.Overfill.Rows {
		texts = append(texts, fmt.Sprintf("%vx  ", row.Load), percent(float64(row.FPR)))
	}
	if strings.Contains(r.stdout, " \n") {
		t.Errorf("plan text has trailing blanks")
	}
	for _, s := range texts {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("plan text lacks %q:\n%s", s, r.stdout)
		}
	}
}

// TestPlanLoad: plan --load plans cuckoo as build --load makes it (the
// same fingerprint width and bytes as the file build writes, less the
// container's framing), leaves the other families as they were, and
// refuses a load cuckoo refuses with nothing on stdout.
func TestPlanLoad(t *testing.T) {
	if _, err := codec.Lookup(bloomery.KindCuckoo); err != nil {
		t.Skip("cuckoo is not in this build")
	}
	plan := func(args ...string) planReport {
		t.Helper()
		var rep planReport
		r := mustRun(t, "", append([]string{"plan", "-n", "20000", "-p", "0.0184", "--json"}, args...)...)
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatalf("%v\n%s", err, r.stdout)
		}
		return rep
	}
	row := func(rep planReport, kind string) planRow {
		for _, r := range rep.Families {
			if r.Kind == kind {
				return r
			}
		}
		t.Fatalf("no %s row", kind)
		return planRow{}
	}
	def, at := plan(), plan("--load", "85%")
	if def.Load != 0 || at.Load != 0.85 {
		t.Errorf("report load %v and %v, want 0 and 0.85", def.Load, at.Load)
	}
	for i := range def.Families {
		d, a := def.Families[i], at.Families[i]
		if d.Kind != "cuckoo" && d.Bytes != a.Bytes {
			t.Errorf("%s: %d bytes at --load, %d without", d.Kind, a.Bytes, d.Bytes)
		}
	}
	c := row(at, "cuckoo")
	if c.FingerprintBits != 9 || c.Bytes <= row(def, "cuckoo").Bytes || float64(c.FPR) > 0.0184 || !strings.Contains(c.Note, "85% load") {
		t.Errorf("cuckoo at 85%% load: %+v (default: %+v)", c, row(def, "cuckoo"))
	}
	out := filepath.Join(t.TempDir(), "c.bf")
	mustRun(t, joinKeys(filtertest.Keys(20000, 32)), "build", "--kind", "cuckoo", "-n", "20000", "-p", "0.0184", "--load", "0.85", "-o", out)
	f, err := openCuckoo(out)
	if err != nil {
		t.Fatal(err)
	}
	if f.FingerprintBits() != c.FingerprintBits || int64(f.SizeBytes()) != c.Bytes {
		t.Errorf("built %d-bit fingerprints in %d bytes; plan said %d in %d", f.FingerprintBits(), f.SizeBytes(), c.FingerprintBits, c.Bytes)
	}
	if !strings.Contains(mustRun(t, "", "plan", "-n", "1e6", "--load", "0.85").stdout, "cuckoo tables at 85.0% load") {
		t.Errorf("text plan does not state the load")
	}
	r := run(t, "", "plan", "-n", "1e6", "--load", "0.97")
	if r.code != ExitFailure || r.stdout != "" || !strings.Contains(r.stderr, "load 0.97 outside") {
		t.Errorf("plan --load 0.97: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

func TestOverfillTextbookFallback(t *testing.T) {
	// Independent of the catalog: the textbook sizing for n=1e6, p=1%
	// is m=9585059, k=7.
	m := int64(math.Ceil(1e6 * -math.Log(0.01) / (math.Ln2 * math.Ln2)))
	if m != 9585059 {
		t.Fatalf("m = %d", m)
	}
	if _, err := codec.Lookup(bloomery.KindBloom); err != nil {
		tab := overfill(1e6, 0.01)
		if tab.Bits != m || tab.K != 7 {
			t.Errorf("fallback m=%d k=%d", tab.Bits, tab.K)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	requireKinds(t, bloomery.KindBloom)
	dir := t.TempDir()
	f := filepath.Join(dir, "f.blmy")
	mustRun(t, "a\n", "build", "--kind", "bloom", "-o", f)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no args", nil, "usage: bloomery COMMAND"},
		{"unknown command", []string{"frobnicate"}, `unknown command "frobnicate"`},
		{"unknown flag", []string{"plan", "-n", "10", "--bogus"}, "flag provided but not defined"},
		{"plan without n", []string{"plan"}, "-n is required"},
		{"plan bad n", []string{"plan", "-n", "ten"}, "not a number of keys"},
		{"plan zero n", []string{"plan", "-n", "0"}, "must be positive"},
		{"plan p out of range", []string{"plan", "-n", "10", "-p", "1.5"}, "must be in (0, 1)"},
		{"plan extra arg", []string{"plan", "-n", "10", "extra"}, `unexpected argument "extra"`},
		{"build no kind", []string{"build", "-o", f}, "--kind is required"},
		{"build unknown kind", []string{"build", "--kind", "nope", "-o", f}, `unknown kind "nope"`},
		{"build no out", []string{"build", "--kind", "bloom"}, "-o OUT is required"},
		{"build two files", []string{"build", "--kind", "bloom", "-o", f, "x", "y"}, "at most one input FILE"},
		{"build over its input", []string{"build", "--kind", "bloom", "-o", f, f}, "would replace the input key file"},
		{"build seed and key", []string{"build", "--kind", "bloom", "-o", f, "--seed", "1", "--key-file", f}, "exclusive"},
		{"build bad seed", []string{"build", "--kind", "bloom", "-o", f, "--seed", "-1"}, "unsigned 64-bit"},
		{"build load out of range", []string{"build", "--kind", "cuckoo", "-o", f, "--load", "1.2"}, "load factor must be in (0, 1)"},
		{"build load not a number", []string{"build", "--kind", "cuckoo", "-o", f, "--load", "most"}, "not a load factor"},
		{"build load for bloom", []string{"build", "--kind", "bloom", "-o", f, "--load", "0.5"}, "--load applies to cuckoo filters, not bloom"},
		{"query no filter", []string{"query"}, "FILTER is required"},
		{"inspect no filter", []string{"inspect"}, "exactly one FILTER"},
		{"merge one input", []string{"merge", "-o", f, f}, "at least two input filters"},
		{"merge no out", []string{"merge", f, f}, "-o OUT is required"},
		{"version arg", []string{"version", "x"}, "unexpected argument"},
		{"help unknown", []string{"help", "nope"}, "unknown command"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, "", tc.args...)
			if r.code != ExitUsage {
				t.Errorf("exit %d, want %d; stderr %q", r.code, ExitUsage, r.stderr)
			}
			if !strings.Contains(r.stderr, tc.want) {
				t.Errorf("stderr %q lacks %q", r.stderr, tc.want)
			}
			if r.stdout != "" {
				t.Errorf("stdout not empty on usage error: %q", r.stdout)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}} {
		r := mustRun(t, "", args...)
		for _, c := range commands {
			if !strings.Contains(r.stdout, "  "+c.name+" ") {
				t.Errorf("%v: top usage lacks %s", args, c.name)
			}
		}
	}
	for _, c := range commands {
		for _, args := range [][]string{{"help", c.name}, {c.name, "-h"}} {
			r := mustRun(t, "", args...)
			if !strings.HasPrefix(r.stdout, "usage: bloomery "+c.name) {
				t.Errorf("%v: %q", args, r.stdout)
			}
		}
	}
	r := mustRun(t, "", "help", "build")
	for _, flag := range []string{"-kind", "-n", "-p", "-o", "-seed", "-key-file"} {
		if !strings.Contains(r.stdout, "  "+flag+" ") {
			t.Errorf("build help lacks %s:\n%s", flag, r.stdout)
		}
	}
}

func TestVersion(t *testing.T) {
	r := mustRun(t, "", "version")
	if !strings.HasPrefix(r.stdout, "bloomery ") || !strings.Contains(r.stdout, "container format: 1") {
		t.Errorf("version = %q", r.stdout)
	}
	for _, f := range codec.Families() {
		if !strings.Contains(r.stdout, " "+f.Kind.String()) {
			t.Errorf("version lacks family %s", f.Kind)
		}
	}
}

func TestCorruptFilter(t *testing.T) {
	requireKinds(t, bloomery.KindBloom)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.blmy")
	mustRun(t, "a\nb\nc\n", "build", "--kind", "bloom", "-o", good)
	data, _ := os.ReadFile(good)

	flipped := bytes.Clone(data)
	flipped[len(flipped)/2] ^= 0x10
	badVersion := bytes.Clone(data)
	badVersion[4] = 99
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"bit flip", flipped, "checksum mismatch"},
		{"truncated", data[:len(data)-5], "truncated"},
		{"trailing", append(bytes.Clone(data), 0), "trailing"},
		{"not a filter", []byte("hello, world, this is text\n"), "bad magic"},
		{"empty", nil, "truncated header"},
		{"version", badVersion, "format version 99"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".blmy")
			os.WriteFile(p, tc.data, 0o644)
			for _, args := range [][]string{{"inspect", p}, {"query", p, "a"}, {"merge", "-o", filepath.Join(dir, "m.blmy"), good, p}} {
				r := run(t, "", args...)
				if r.code != ExitFailure {
					t.Errorf("%s: exit %d, want %d", args[0], r.code, ExitFailure)
				}
				if !strings.Contains(r.stderr, tc.want) || !strings.Contains(r.stderr, p) {
					t.Errorf("%s: stderr %q lacks %q or the path", args[0], r.stderr, tc.want)
				}
				if r.stdout != "" {
					t.Errorf("%s: stdout %q", args[0], r.stdout)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "m.blmy")); err == nil {
				t.Errorf("merge wrote output from a corrupt input")
			}
		})
	}
	// A missing file is a failure, not a usage error.
	if r := run(t, "", "inspect", filepath.Join(dir, "missing.blmy")); r.code != ExitFailure {
		t.Errorf("missing file: exit %d", r.code)
	}
}

func TestParseValues(t *testing.T) {
	for in, want := range map[string]int{"1000000": 1000000, "1e6": 1000000, "1_000_000": 1000000, "2.5e3": 2500, "7": 7} {
		if got, err := parseCount(in); err != nil || got != want {
			t.Errorf("parseCount(%q) = %d, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "0", "-3", "1.5", "1e300", "NaN", "x"} {
		if _, err := parseCount(in); err == nil {
			t.Errorf("parseCount(%q) accepted", in)
		}
	}
	for in, want := range map[string]float64{"0.01": 0.01, "1%": 0.01, "1e-3": 0.001} {
		v := fprFlag(0.01)
		if err := v.Set(in); err != nil || v.f != want {
			t.Errorf("fpr %q = %v, %v", in, v.f, err)
		}
	}
	for _, in := range []string{"0", "1", "100%", "-0.1", "abc"} {
		v := fprFlag(0.01)
		if err := v.Set(in); err == nil {
			t.Errorf("fpr %q accepted", in)
		}
	}
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.00 KiB", 1198080: "1.14 MiB", 5 << 30: "5.00 GiB"} {
		if got := humanBytes(n); got != want {
			t.Errorf("humanBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestProgress(t *testing.T) {
	var b bytes.Buffer
	if p := newProgress(&env{stderr: &b}, "reading", 100); p != nil {
		t.Fatal("progress on a non-terminal")
	}
	p := newProgress(&env{stderr: &b, tty: true}, "reading", 100)
	p.update(50, 5000)
	p.update(60, 6000) // within 100 ms: not drawn
	p.done()
	out := b.String()
	if !strings.HasPrefix(out, "\rreading [===============               ]  50% 5000 keys") || strings.Contains(out, "6000") {
		t.Errorf("progress output %q", out)
	}
	if !strings.HasSuffix(out, "\r\x1b[2K") {
		t.Errorf("progress not cleared: %q", out)
	}
	var nilBar *progress
	nilBar.update(1, 1) // must not panic
	nilBar.done()
}

// TestKindNames checks the names scripts pass to --kind: every documented
// name parses to its persisted value and prints back unchanged.
func TestKindNames(t *testing.T) {
	names := []string{"bloom", "blocked", "counting", "cuckoo", "quotient", "ribbon", "xor8",
		"fuse8", "fuse16", "fuse8-4", "fuse16-4", "gcs", "sbbf", "scalable", "rotating"}
	for i, name := range names {
		k, err := bloomery.ParseKind(name)
		if err != nil || int(k) != i+1 || k.String() != name || !k.Valid() {
			t.Errorf("%s: kind %d (%v), err %v; want %d", name, k, k, err, i+1)
		}
	}
	if got := len(bloomery.Kinds()); got != len(names) {
		t.Errorf("bloomery.Kinds() has %d kinds, documented %d", got, len(names))
	}
}

func TestMergeThree(t *testing.T) {
	requireKinds(t, bloomery.KindBloom)
	dir := t.TempDir()
	var all [][]byte
	var files []string
	for i := range 3 {
		keys := filtertest.Keys(3000, uint64(20+i))
		all = append(all, keys...)
		f := filepath.Join(dir, fmt.Sprintf("%d.blmy", i))
		mustRun(t, joinKeys(keys), "build", "--kind", "bloom", "-n", "9000", "-o", f)
		files = append(files, f)
	}
	out := filepath.Join(dir, "all.blmy")
	mustRun(t, "", append([]string{"merge", "-o", out}, files...)...)
	maybe, no := parseCountLine(t, mustRun(t, joinKeys(all), "query", "--count", out).stdout)
	if maybe != len(all) || no != 0 {
		t.Errorf("maybe=%d no=%d", maybe, no)
	}
	// The merged filter at its design load reports a normal FPR.
	f, _, err := loadFilter(out, hashing.Expect{})
	if err != nil {
		t.Fatal(err)
	}
	if st := f.Stats(); st.Overfilled || st.EstimatedFPR > 0.0115 {
		t.Errorf("merged stats %+v", st)
	}
}

// TestSubcommandDispatch checks the mechanism "bloomery plan lsm" will use:
// a first argument naming a sub-subcommand runs it with its own flags,
// anything else runs the parent.
func TestSubcommandDispatch(t *testing.T) {
	var ran []string
	sub := &command{
		name: "lsm", summary: "test sub", usage: "bloomery plan lsm --levels L",
		flags: func(fs *flag.FlagSet) any { return fs.Int("levels", 0, "levels") },
		run: func(e *env, opts any, args []string) error {
			ran = append(ran, fmt.Sprintf("lsm levels=%d args=%v", *opts.(*int), args))
			return nil
		},
	}
	parent := &command{
		name: "plan", usage: "bloomery plan -n N",
		flags: func(fs *flag.FlagSet) any { return fs.Int("n", 0, "n") },
		run: func(e *env, opts any, args []string) error {
			ran = append(ran, fmt.Sprintf("plan n=%d args=%v", *opts.(*int), args))
			return nil
		},
		sub: []*command{sub},
	}
	var out, errb bytes.Buffer
	e := &env{stdout: &out, stderr: &errb}
	if c := runCommand(e, parent, "bloomery plan", []string{"lsm", "--levels", "7", "x"}); c != ExitOK {
		t.Fatalf("exit %d: %s", c, errb.String())
	}
	if c := runCommand(e, parent, "bloomery plan", []string{"-n", "5", "lsmx"}); c != ExitOK {
		t.Fatalf("exit %d: %s", c, errb.String())
	}
	if c := runCommand(e, parent, "bloomery plan", []string{"lsm", "-n", "5"}); c != ExitUsage {
		t.Errorf("parent flag on sub: exit %d", c)
	}
	want := "lsm levels=7 args=[x];plan n=5 args=[lsmx]"
	if got := strings.Join(ran, ";"); got != want {
		t.Errorf("ran %q, want %q", got, want)
	}
	if c := runCommand(e, parent, "bloomery plan", []string{"-h"}); c != ExitOK || !strings.Contains(out.String(), "subcommands:\n  lsm") {
		t.Errorf("parent help lacks subcommands: %q", out.String())
	}
}

// TestBuildDuplicateLines checks that each distinct key goes in once, so
// multiset families do not fill up on a key repeated many times.
func TestBuildDuplicateLines(t *testing.T) {
	dir := t.TempDir()
	keys := filtertest.Keys(1000, 30)
	var in strings.Builder
	for range 12 {
		in.WriteString(joinKeys(keys))
	}
	for _, fam := range codec.Families() {
		kind := fam.Kind.String()
		t.Run(kind, func(t *testing.T) {
			out := filepath.Join(dir, kind+".blmy")
			r := mustRun(t, in.String(), "build", "--kind", kind, "-o", out)
			if !strings.Contains(r.stderr, "1000 distinct keys (12000 lines)") {
				t.Errorf("summary %q", r.stderr)
			}
			maybe, no := parseCountLine(t, mustRun(t, joinKeys(keys), "query", "--count", out).stdout)
			if maybe != len(keys) || no != 0 {
				t.Errorf("maybe=%d no=%d", maybe, no)
			}
		})
	}
}

// TestBuildFull checks that a filter that cannot take every key fails the
// build instead of dropping keys, and writes nothing.
func TestBuildFull(t *testing.T) {
	requireKinds(t, bloomery.KindCuckoo)
	dir := t.TempDir()
	out := filepath.Join(dir, "c.blmy")
	r := run(t, joinKeys(filtertest.Keys(10000, 31)), "build", "--kind", "cuckoo", "-n", "100", "-o", out)
	if r.code != ExitFailure || !strings.Contains(r.stderr, "filter is full after") || !strings.Contains(r.stderr, "give a larger -n") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
	if got := listDir(t, dir); len(got) != 0 {
		t.Errorf("files written: %v", got)
	}
}

// TestBuildLoad checks --load: the cuckoo table that N keys fill to the
// given load holds every key, is larger than the default one by the ratio
// of the loads (at the same fingerprint width), and a load above the
// family's maximum fails the build with nothing written.
func TestBuildLoad(t *testing.T) {
	requireKinds(t, bloomery.KindCuckoo)
	dir := t.TempDir()
	keys := filtertest.Keys(20000, 32)
	def := filepath.Join(dir, "default.blmy")
	low := filepath.Join(dir, "low.blmy")
	mustRun(t, joinKeys(keys), "build", "--kind", "cuckoo", "-p", "0.001", "-o", def)
	mustRun(t, joinKeys(keys), "build", "--kind", "cuckoo", "-p", "0.001", "--load", "60%", "-o", low)
	var sizes [2]int
	for i, out := range []string{def, low} {
		maybe, no := parseCountLine(t, mustRun(t, joinKeys(keys), "query", "--count", out).stdout)
		if maybe != len(keys) || no != 0 {
			t.Errorf("%s: maybe=%d no=%d", out, maybe, no)
		}
		fi, err := os.Stat(out)
		if err != nil {
			t.Fatal(err)
		}
		sizes[i] = int(fi.Size())
	}
	f, err := openCuckoo(low)
	if err != nil {
		t.Fatal(err)
	}
	if lf := f.LoadFactor(); lf < 0.58 || lf > 0.6 {
		t.Errorf("load factor %.4f after %d keys at --load 60%%, want just under 0.6", lf, len(keys))
	}
	// Same P: 0.1% needs 13-bit fingerprints at 94% and 13 at 60% too
	// (8*0.6/2^12 = 0.12% > 0.1%), so the table grows by 0.94/0.6.
	if r := float64(sizes[1]) / float64(sizes[0]); r < 1.5 || r > 1.6 {
		t.Errorf("file sizes %d and %d: ratio %.3f, want about 0.94/0.6 = 1.57", sizes[0], sizes[1], r)
	}
	bad := filepath.Join(dir, "bad.blmy")
	r := run(t, joinKeys(keys), "build", "--kind", "cuckoo", "--load", "0.97", "-o", bad)
	if r.code != ExitFailure || !strings.Contains(r.stderr, "load 0.97 outside") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
	if _, err := os.Stat(bad); !os.IsNotExist(err) {
		t.Errorf("%s written: %v", bad, err)
	}
}

// openCuckoo decodes the cuckoo filter in file path.
func openCuckoo(path string) (*cuckoo.Filter, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return cuckoo.Decode(data, hashing.Expect{})
}
