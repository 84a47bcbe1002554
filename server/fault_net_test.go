package server

import (
	"bufio"
	"bytes"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestAuthThrottle sends wrong passwords as fast as 8 pipelining
// connections can (reconnecting when the server closes one) for a second
// and checks that the server answered fewer than 1000 of them, and that a
// correct AUTH on another connection meanwhile succeeds promptly.
func TestAuthThrottle(t *testing.T) {
	_, addr := startServer(t, Config{Password: "s3cret"})
	var (
		answered atomic.Int64
		stop     atomic.Bool
		wg       sync.WaitGroup
	)
	batch := bytes.Repeat(encode("AUTH", "guess"), 256)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				nc, err := net.Dial("tcp", addr)
				if err != nil {
					return
				}
				go func() {
					for !stop.Load() {
						if _, err := nc.Write(batch); err != nil {
							return
						}
					}
				}()
				br := bufio.NewReader(nc)
				for !stop.Load() {
					nc.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
					line, err := br.ReadString('\n')
					if err != nil {
						if ne, ok := err.(net.Error); ok && ne.Timeout() {
							continue
						}
						break
					}
					if strings.HasPrefix(line, "-WRONGPASS") {
						answered.Add(1)
					}
				}
				nc.Close()
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)
	c := dial(t, addr)
	t0 := time.Now()
	c.expect("OK", "AUTH", "s3cret")
	c.expect("PONG", "PING")
	if d := time.Since(t0); d > 200*time.Millisecond {
		t.Errorf("correct AUTH during the attack took %v", d)
	}
	time.Sleep(700 * time.Millisecond)
	stop.Store(true)
	wg.Wait()
	n := answered.Load()
	t.Logf("wrong passwords answered in 1 s through 8 pipelining connections: %d", n)
	if n >= 1000 {
		t.Errorf("%d wrong passwords answered in 1 s, want < 1000", n)
	}
	if n == 0 {
		t.Errorf("no wrong password answered at all")
	}
}
