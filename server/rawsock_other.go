//go:build !linux

package server

import (
	"io"
	"net"
)

// rawSock is Linux-only (see rawsock_linux.go); elsewhere connections use
// net.Conn's Read and Write.
type rawSock struct{ io.ReadWriter }

func newRawSock(net.Conn) *rawSock { return nil }
