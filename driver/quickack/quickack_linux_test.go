package quickack

import (
	"context"
	"io"
	"net"
	"testing"

	"golang.org/x/sys/unix"
)

func TestWrappedConnAcksAtOnce(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		c.Write([]byte("hello"))
		c.Write([]byte(" world"))
	}()
	c, err := Dial(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got, err := io.ReadAll(c)
	if err != nil || string(got) != "hello world" {
		t.Fatalf("read %q, %v", got, err)
	}
	raw, _ := c.(Conn).SyscallConn()
	var on int
	raw.Control(func(fd uintptr) { on, err = unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_QUICKACK) })
	if err != nil || on != 1 {
		t.Errorf("TCP_QUICKACK after reads = %d, %v; want 1", on, err)
	}
	pipeA, pipeB := net.Pipe()
	defer pipeA.Close()
	defer pipeB.Close()
	if Wrap(pipeA) != pipeA {
		t.Error("a connection that is not TCP was wrapped")
	}
}
