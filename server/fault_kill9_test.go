package server

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The kill -9 suite under a mixed load: four clients pipeline adds to a
// scalable Bloom key and a cuckoo key, add-add-delete triples to the
// multiset families (counting, quotient, cuckoo), BF.MADD batches,
// transactions, and reads of items already acknowledged, while a fifth
// issues BGSAVE now and then. The server is killed with SIGKILL at a
// random moment of every round and restarted on the same directory. A
// journal records every reply that acknowledged a write; after each
// restart every journalled item must be present, and a transaction whose
// EXEC was never acknowledged must have left all of its items or none.
// Reads during the load must never answer "no" for an acknowledged item.
//
// The test is bounded: 8 rounds a policy, each 60-260 ms of paced load.

func TestKill9MixedAlways(t *testing.T)   { testKill9Mixed(t, "always", 11) }
func TestKill9MixedEverySec(t *testing.T) { testKill9Mixed(t, "everysec", 12) }
func TestKill9MixedNo(t *testing.T)       { testKill9Mixed(t, "no", 13) }

// journal holds what the server acknowledged.
type journal struct {
	mu sync.Mutex
	// present: "cmd key item" lines whose query must answer 1, where cmd
	// is the query command of the key's family.
	present []string
	// txPending: item lists of transactions sent whose EXEC reply never
	// arrived (all or none of them may be present).
	txPending [][]string
	// stats
	acks, txAcked int
}

func (j *journal) add(lines ...string) {
	j.mu.Lock()
	j.present = append(j.present, lines...)
	j.acks += len(lines)
	j.mu.Unlock()
}

// snapshot returns a random sample of at most n acknowledged lines (all of
// them when n <= 0), for the live reads.
func (j *journal) sample(rng *rand.Rand, n int) []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	if len(j.present) == 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = j.present[rng.IntN(len(j.present))]
	}
	return out
}

func testKill9Mixed(t *testing.T, policy string, seed uint64) {
	if testing.Short() {
		t.Skip("subprocess crash test")
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(seed, 99))
	j := &journal{}
	const rounds = 8
	setup := [][]string{
		{"BF.RESERVE", "bf", "0.001", "100000"},
		{"CF.RESERVE", "cf", "200000"},
		{"BLOOMERY.RESERVE", "cnt", "counting", "300000", "0.001"},
		{"BLOOMERY.RESERVE", "qf", "quotient", "300000", "0.001"},
		// The transactions' key: FPR 10^-7 so that "none of a lost
		// transaction's items" is not confused by false positives.
		{"BF.RESERVE", "tx", "0.0000001", "200000"},
	}
	kills := 0
	for round := 0; round <= rounds; round++ {
		ch := startChild(t, dir, policy)
		c := dial(t, ch.addr)
		if round == 0 {
			for _, a := range setup {
				if r := c.do(a...); r != "OK" {
					t.Fatalf("%q: %s", a, show(r))
				}
			}
		}
		verifyJournal(t, c, j, round)
		if round == rounds {
			ch.cmd.Process.Signal(syscall.SIGTERM)
			if err := ch.cmd.Wait(); err != nil {
				t.Fatalf("clean exit after the last round: %v\n%s", err, ch.logs())
			}
			break
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for w := 0; w < 4; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				mixedWorker(t, ch.addr, j, round, w, stop)
			}(w)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			nc, err := net.Dial("tcp", ch.addr)
			if err != nil {
				return
			}
			defer nc.Close()
			br := bufio.NewReader(nc)
			for {
				select {
				case <-stop:
					return
				case <-time.After(40 * time.Millisecond):
				}
				nc.Write(encode("BGSAVE"))
				if _, err := readReply(br); err != nil {
					return
				}
			}
		}()
		time.Sleep(time.Duration(60+rng.IntN(200)) * time.Millisecond)
		ch.cmd.Process.Kill()
		ch.cmd.Wait()
		kills++
		close(stop)
		wg.Wait()
	}
	if j.acks < 2000 || j.txAcked < 20 {
		t.Fatalf("only %d acknowledged writes and %d transactions over %d kills; the load did not run", j.acks, j.txAcked, kills)
	}
	t.Logf("appendfsync %s: %d acknowledged writes (%d in %d transactions), all present after %d kill -9 restarts; %d unacknowledged transactions all-or-nothing",
		policy, j.acks, j.txAcked*4, j.txAcked, kills, len(j.txPending))
}

// mixedWorker sends pipelines until stop or the server dies; it journals
// each acknowledged write and checks each live read.
func mixedWorker(t *testing.T, addr string, j *journal, round, w int, stop <-chan struct{}) {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		return
	}
	defer nc.Close()
	br := bufio.NewReader(nc)
	rng := rand.New(rand.NewPCG(uint64(round), uint64(w)))
	type expect struct {
		// on an acknowledgement (a non-error reply), these lines join
		// the journal; need names replies that must also succeed.
		lines []string
		// group: replies of one add-add-del triple share a slot; the
		// triple's items are journalled once both adds are acknowledged.
		group int
		read  string // a live read that must answer 1
		tx    []string
	}
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		if i > 0 {
			time.Sleep(2 * time.Millisecond)
		}
		var cmds []byte
		var exp []expect
		add := func(e expect, args ...string) {
			cmds = append(cmds, encode(args...)...)
			exp = append(exp, e)
		}
		id := func(p string, k int) string { return fmt.Sprintf("%s%d-%d-%d-%d", p, round, w, i, k) }
		for k := 0; k < 4; k++ {
			it := id("b", k)
			add(expect{lines: []string{"BF.EXISTS bf " + it}}, "BF.ADD", "bf", it)
			it = id("c", k)
			add(expect{lines: []string{"CF.EXISTS cf " + it}}, "CF.ADD", "cf", it)
		}
		// add, add, del on each multiset family: one copy stays.
		for g, fam := range []struct{ add, del, query, key string }{
			{"BLOOMERY.ADD", "BLOOMERY.DEL", "BLOOMERY.EXISTS", "cnt"},
			{"BLOOMERY.ADD", "BLOOMERY.DEL", "BLOOMERY.EXISTS", "qf"},
			{"CF.ADD", "CF.DEL", "CF.EXISTS", "cf"},
		} {
			it := id("m", g)
			line := fam.query + " " + fam.key + " " + it
			add(expect{group: 1, lines: []string{line}}, fam.add, fam.key, it)
			add(expect{group: 2, lines: []string{line}}, fam.add, fam.key, it)
			add(expect{group: 3}, fam.del, fam.key, it)
		}
		madd := []string{"BF.MADD", "bf"}
		var mlines []string
		for k := 0; k < 8; k++ {
			it := id("x", k)
			madd = append(madd, it)
			mlines = append(mlines, "BF.EXISTS bf "+it)
		}
		add(expect{lines: mlines}, madd...)
		for _, line := range j.sample(rng, 2) {
			args := strings.Fields(line)
			add(expect{read: line}, args...)
		}
		if i%3 == 0 {
			var items []string
			add(expect{}, "MULTI")
			for k := 0; k < 4; k++ {
				it := id("t", k)
				items = append(items, it)
				add(expect{}, "BF.ADD", "tx", it)
			}
			add(expect{tx: items}, "EXEC")
		}
		if _, err := nc.Write(cmds); err != nil {
			return
		}
		var pending []string // the first add of a triple, acknowledged
		for k, e := range exp {
			v, err := readReply(br)
			if err != nil {
				// Killed: from here on nothing is acknowledged. A
				// transaction sent but not answered is all or nothing.
				for _, e := range exp[k:] {
					if e.tx != nil {
						j.mu.Lock()
						j.txPending = append(j.txPending, e.tx)
						j.mu.Unlock()
					}
				}
				return
			}
			if re, ok := v.(respErr); ok {
				t.Errorf("round %d: %s", round, re)
				return
			}
			switch {
			case e.read != "":
				if !isYes(v) {
					t.Errorf("round %d: live read %q answered %s for an acknowledged write", round, e.read, show(v))
				}
			case e.tx != nil:
				arr, ok := v.([]any)
				if !ok || len(arr) != len(e.tx) {
					t.Errorf("round %d: EXEC replied %s", round, show(v))
					return
				}
				var lines []string
				for _, it := range e.tx {
					lines = append(lines, "BF.EXISTS tx "+it)
				}
				j.add(lines...)
				j.mu.Lock()
				j.txAcked++
				j.mu.Unlock()
			case e.group == 1:
				pending = e.lines
			case e.group == 2:
				if pending != nil {
					j.add(pending...)
				}
				pending = nil
			case e.group == 3:
			default:
				j.add(e.lines...)
			}
		}
	}
}

// isYes reports whether a query reply says "maybe present": 1, true, or
// an array of one such element.
func isYes(v any) bool {
	switch x := v.(type) {
	case int64:
		return x == 1
	case bool:
		return x
	case []any:
		return len(x) == 1 && isYes(x[0])
	}
	return false
}

// verifyJournal checks every journalled item after a restart, and that
// each unacknowledged transaction left all of its items or none.
func verifyJournal(t *testing.T, c *client, j *journal, round int) {
	t.Helper()
	j.mu.Lock()
	lines := append([]string(nil), j.present...)
	txs := append([][]string(nil), j.txPending...)
	j.mu.Unlock()
	const batch = 500
	for start := 0; start < len(lines); start += batch {
		end := min(start+batch, len(lines))
		for _, l := range lines[start:end] {
			c.send(strings.Fields(l)...)
		}
		for _, l := range lines[start:end] {
			if v := c.read(); !isYes(v) {
				t.Fatalf("round %d: acknowledged write lost after kill -9: %q answered %s", round, l, show(v))
			}
		}
	}
	for _, tx := range txs {
		n := 0
		for _, it := range tx {
			if isYes(c.do("BF.EXISTS", "tx", it)) {
				n++
			}
		}
		if n != 0 && n != len(tx) {
			t.Fatalf("round %d: an unacknowledged transaction was half applied: %d of %d items present", round, n, len(tx))
		}
	}
}
