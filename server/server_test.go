package server

import "testing"

func TestSmoke(t *testing.T) {
	_, addr := startServer(t, Config{})
	c := dial(t, addr)
	c.expect("PONG", "PING")
	c.expect("OK", "BF.RESERVE", "k", "0.01", "100")
	c.expect("1", "BF.ADD", "k", "a")
	c.expect("0", "BF.ADD", "k", "a")
	c.expect("[b:Capacity 100 b:Size 240 b:Number of filters 1 b:Number of items inserted 1 b:Expansion rate 2]", "BF.INFO", "k")
}
