// Package pong holds minimal servers for measuring clients, so that what a
// benchmark counts is the client's cost, not the server's:
//
//   - Serve, HTTP/1.1: it answers every request on a keep-alive connection
//     with a fixed "pong", reading into one buffer.
//   - ServeH2, HTTP/2 (h2c, or h2 behind TLS): it answers every stream with
//     pre-encoded frames, a plain "pong" or a gRPC answer of empty messages
//     that any unary or server-streaming method accepts.
//
// Both serve a connection with one goroutine and allocate nothing per
// request.
package pong

import (
	"bytes"
	"net"
)

var response = []byte("HTTP/1.1 200 OK\r\nContent-Length: 4\r\nContent-Type: text/plain\r\n\r\npong")

// Serve answers on ln until it is closed.
func Serve(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go serveConn(c)
	}
}

func serveConn(c net.Conn) {
	defer c.Close()
	buf := make([]byte, 64<<10)
	n := 0
	for {
		m, err := c.Read(buf[n:])
		if err != nil {
			return
		}
		n += m
		// answer every complete request (bodiless: GET) in the buffer
		for {
			end := bytes.Index(buf[:n], []byte("\r\n\r\n"))
			if end < 0 {
				break
			}
			if _, err := c.Write(response); err != nil {
				return
			}
			n = copy(buf, buf[end+4:n])
		}
		if n == len(buf) {
			return // a request header beyond 64 KiB
		}
	}
}
