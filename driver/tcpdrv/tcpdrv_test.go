package tcpdrv

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"net"
	"strings"
	"testing"
	"time"
)

// serve answers each line a client sends with answer(line), on 127.0.0.1
// port 0, until the test ends.
func serve(t *testing.T, answer func(line string) []byte) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					a := answer(strings.TrimRight(line, "\r\n"))
					if a == nil {
						return // hang up
					}
					c.Write(a)
				}
			}()
		}
	}()
	return ln.Addr().String()
}

func prefixed(s string) []byte {
	b := binary.BigEndian.AppendUint16(nil, uint16(len(s)))
	return append(b, s...)
}

func TestFraming(t *testing.T) {
	addr := serve(t, func(line string) []byte {
		switch line {
		case "PING":
			return []byte("+PONG\r\n")
		case "GET":
			return []byte("VALUE k 0 3\r\nbar\r\nEND\r\n")
		case "BIN":
			return prefixed("hello")
		case "BAD":
			return []byte("-ERR unknown\r\n")
		case "BIG":
			return []byte(strings.Repeat("x", 100) + "\r\n")
		case "BULK":
			return []byte("$3\r\nbar\r\n") // two lines: one-line framing does not fit
		case "RAW":
			return prefixed("\xff\x00")
		}
		return nil
	})
	cases := []struct {
		name   string
		o      Options
		answer string
		status string
	}{
		{"line", Options{Send: []byte("PING\r\n"), Until: []byte("\r\n")}, `"+PONG\r\n"`, ""},
		{"terminator of several bytes", Options{Send: []byte("GET\r\n"), Until: []byte("END\r\n")}, `"VALUE k 0 3\r\nbar\r\nEND\r\n"`, ""},
		{"length prefix", Options{Send: []byte("BIN\n"), LengthPrefix: 2}, `"hello"`, ""},
		{"error prefix", Options{Send: []byte("BAD\r\n"), Until: []byte("\r\n"), ErrorPrefix: []byte("-")}, `"-ERR unknown\r\n"`, "tcp:error"},
		{"too large", Options{Send: []byte("BIG\r\n"), Until: []byte("\r\n"), MaxAnswer: 50}, "", "too-large"},
		{"hung up", Options{Send: []byte("QUIT\r\n"), Until: []byte("\r\n")}, "", "eof"},
		{"more than one answer", Options{Send: []byte("BULK\r\n"), Until: []byte("\r\n")}, "", "tcp:extra"},
		{"binary answer", Options{Send: []byte("RAW\n"), LengthPrefix: 2, QuickACK: true}, `{"base64":"/wA="}`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.o.Addr, c.o.Timeout = "tcp://"+addr, 5*time.Second
			cl, err := New(c.o)
			if err != nil {
				t.Fatal(err)
			}
			cn, err := cl.DialConn(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer cn.Close()
			for i := range 3 { // the same connection, request after request
				ans, res := cn.Ask(context.Background())
				if res.Status != c.status || c.answer != "" && (len(ans) != 1 || string(ans[0]) != c.answer) {
					t.Fatalf("request %d: answer %q, status %q; want %s, %q", i, ans, res.Status, c.answer, c.status)
				}
			}
		})
	}
}

func TestOptionsChecked(t *testing.T) {
	for _, o := range []Options{
		{Addr: "127.0.0.1", Send: []byte("x"), Until: []byte("\n")},
		{Addr: "127.0.0.1:1", Until: []byte("\n")},
		{Addr: "127.0.0.1:1", Send: []byte("x")},
		{Addr: "127.0.0.1:1", Send: []byte("x"), Until: []byte("\n"), LengthPrefix: 2},
		{Addr: "127.0.0.1:1", Send: []byte("x"), LengthPrefix: 3},
	} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v): no error", o)
		}
	}
}

// The run's end interrupts a request waiting for an answer that never
// comes, well before the request's own timeout.
func TestRunEndInterruptsAWait(t *testing.T) {
	stop := make(chan struct{})
	defer close(stop)
	addr := serve(t, func(string) []byte { <-stop; return nil })
	cl, err := New(Options{Addr: addr, Send: []byte("WAIT\n"), Until: []byte("\n"), Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	cn, err := cl.DialConn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer cn.Close()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	done := make(chan string, 1)
	go func() { done <- cn.Do(ctx, 0, time.Now().Add(time.Minute)).Status }()
	select {
	case st := <-done:
		if st == "" {
			t.Errorf("an interrupted wait succeeded")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the run's end did not interrupt the wait")
	}
}

// FuzzRead reads answers from any byte stream: an answer is never over the
// bound, ends with its terminator, and a length-prefixed one is as long as
// its prefix says.
func FuzzRead(f *testing.F) {
	f.Add([]byte("+PONG\r\n"), false)
	f.Add([]byte("VALUE k 0 3\r\nbar\r\nEND\r\n"), false)
	f.Add(prefixed("hello"), true)
	f.Add([]byte{0xff, 0xff, 1}, true)
	f.Fuzz(func(t *testing.T, stream []byte, lengthPrefixed bool) {
		o := Options{Addr: "127.0.0.1:1", Send: []byte("x"), Until: []byte("\r\n"), MaxAnswer: 64}
		if lengthPrefixed {
			o.Until, o.LengthPrefix = nil, 2
		}
		c, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		cn := &Conn{c: c, r: bufio.NewReader(bytes.NewReader(stream))}
		for range 4 {
			ans, err := cn.read()
			if err != nil {
				return
			}
			if len(ans) > o.MaxAnswer {
				t.Fatalf("answer of %d bytes over the bound %d", len(ans), o.MaxAnswer)
			}
			if !lengthPrefixed && !bytes.HasSuffix(ans, o.Until) {
				t.Fatalf("answer %q does not end with the terminator", ans)
			}
		}
	})
}
