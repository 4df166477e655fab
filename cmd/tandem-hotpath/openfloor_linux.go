package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"slices"
	"time"
	"unsafe"

	"github.com/tandem-bench/tandem/internal/rawclock"
	"golang.org/x/sys/unix"
)

// openFloor is the least an open loop that times every arrival on its own
// can do on this machine: one locked thread sleeps until each arrival of a
// constant rate (clock_nanosleep, absolute, the default timer slack), reads
// without blocking whatever answers came on the connection it will use
// (round robin over conns), and writes the request; raw system calls on
// sockets Go dialled, nothing timed, nothing counted but bytes. It sends
// rate·d requests to the HTTP/1.1 server at addr and then waits up to a
// second for their answers; lag is the median schedule lag. What it costs per request (the CPU its process
// used, measured outside) is the floor under any generator of that
// precision here: the wake-up per arrival and the write that wakes the
// server.
func openFloor(addr string, rate, conns int, d time.Duration) (sent, answered int64, lag time.Duration, err error) {
	if rate < 1 || conns < 1 || d <= 0 || int64(rate)*int64(d) < int64(time.Second) {
		return 0, 0, 0, errors.New("--open-floor: want --rate, --connections and --duration above 0, and at least one arrival")
	}
	req := []byte("GET /ping HTTP/1.1\r\nHost: " + addr + "\r\n\r\n")
	fds := make([]int, conns)
	var size int64
	for i := range fds {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return 0, 0, 0, err
		}
		defer c.Close()
		if size, err = warm(c, req); err != nil {
			return 0, 0, 0, err
		}
		raw, err := c.(*net.TCPConn).SyscallConn()
		if err != nil {
			return 0, 0, 0, err
		}
		raw.Control(func(fd uintptr) { fds[i] = int(fd) })
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	buf := make([]byte, 64<<10)
	var got int64
	n := int64(rate) * int64(d) / int64(time.Second)
	interval := time.Second / time.Duration(rate)
	start := rawclock.Now()
	lags := make([]time.Duration, n)
	for i := range n {
		at := start + time.Duration(i)*interval
		if now := rawclock.Now(); now < at {
			rawclock.SleepUntil(at)
		}
		lags[i] = rawclock.Now() - at
		fd := fds[i%int64(conns)]
		got += drain(fd, buf)
		if _, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&req[0])), uintptr(len(req))); e != 0 {
			return i, got / size, 0, fmt.Errorf("write: %w", e)
		}
	}
	for end := rawclock.Now() + time.Second; got < n*size && rawclock.Now() < end; {
		for _, fd := range fds {
			got += drain(fd, buf)
		}
		rawclock.SleepUntil(rawclock.Now() + time.Millisecond)
	}
	slices.Sort(lags)
	return n, got / size, lags[len(lags)/2], nil
}

// warm sends one request on c and reads its answer, whose size in bytes
// it returns (every answer of /ping is that long).
func warm(c net.Conn, req []byte) (int64, error) {
	if _, err := c.Write(req); err != nil {
		return 0, err
	}
	cr := &countReader{r: c}
	resp, err := http.ReadResponse(bufio.NewReaderSize(cr, 1), nil)
	if err != nil {
		return 0, err
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return 0, err
	}
	return cr.n, nil
}

// countReader counts what it reads.
type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n += int64(n)
	return n, err
}

// drain reads what fd holds without blocking; it returns the bytes read.
func drain(fd int, buf []byte) int64 {
	var total int64
	for {
		n, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
		if e != 0 || int(n) <= 0 { // EAGAIN: nothing more yet
			return total
		}
		total += int64(n)
		if int(n) < len(buf) {
			return total
		}
	}
}
