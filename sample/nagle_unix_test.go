//go:build unix

package sample

import (
	"net"
	"testing"

	"golang.org/x/sys/unix"
)

func TestNagleListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	nl := nagleListener{ln}
	defer nl.Close()
	done := make(chan error, 1)
	go func() {
		c, err := nl.Accept()
		if err != nil {
			done <- err
			return
		}
		defer c.Close()
		raw, _ := c.(splitConn).Conn.(*net.TCPConn).SyscallConn()
		var nodelay int
		raw.Control(func(fd uintptr) { nodelay, err = unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_NODELAY) })
		if err == nil && nodelay != 0 {
			err = net.UnknownNetworkError("TCP_NODELAY is on")
		}
		c.Write([]byte("hello world"))
		done <- err
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := <-done; err != nil {
		t.Fatalf("accepted conn: %v", err)
	}
	buf := make([]byte, 32)
	n := 0
	for n < 11 {
		m, err := c.Read(buf[n:])
		if err != nil {
			t.Fatal(err)
		}
		n += m
	}
	if string(buf[:n]) != "hello world" {
		t.Errorf("read %q; want the whole write", buf[:n])
	}
}
