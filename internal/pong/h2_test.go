package pong

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/tandem-bench/tandem/sample/ledgerpb"
)

// countingListener counts the connections accepted.
type countingListener struct {
	net.Listener
	n atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// startH2 serves ServeH2 on 127.0.0.1:0, behind TLS if cfg is not nil.
func startH2(t testing.TB, o H2Options, cfg *tls.Config) (string, *countingListener) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cl := &countingListener{Listener: ln}
	var served net.Listener = cl
	if cfg != nil {
		served = tls.NewListener(cl, cfg)
	}
	done := make(chan struct{})
	go func() { ServeH2(served, o); close(done) }()
	t.Cleanup(func() { ln.Close(); <-done })
	return ln.Addr().String(), cl
}

func get(ctx context.Context, c *http.Client, url string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if resp.ProtoMajor != 2 {
		return 0, "", errors.New("not HTTP/2: " + resp.Proto)
	}
	return resp.StatusCode, string(body), err
}

func TestServeH2HTTPClient(t *testing.T) {
	cfg, err := H2TLSConfig()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		tls      bool
		requests int
		workers  int
	}{
		{"h2c", false, 1, 1},
		{"h2c multiplexed", false, 1000, 50},
		{"tls", true, 1, 1},
		{"tls multiplexed", true, 1000, 50},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := &http.Transport{MaxConnsPerHost: 1, Protocols: new(http.Protocols)}
			scheme := "http"
			var serverTLS *tls.Config
			if tc.tls {
				scheme, serverTLS = "https", cfg
				tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true}
				tr.Protocols.SetHTTP2(true)
			} else {
				tr.Protocols.SetUnencryptedHTTP2(true)
			}
			defer tr.CloseIdleConnections()
			addr, ln := startH2(t, H2Options{}, serverTLS)
			client := &http.Client{Transport: tr}
			url := scheme + "://" + addr + "/"
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var next atomic.Int64
			errs := make(chan error, tc.workers)
			for range tc.workers {
				go func() {
					for next.Add(1) <= int64(tc.requests) {
						code, body, err := get(ctx, client, url)
						if err == nil && (code != 200 || body != "pong") {
							err = errors.New("got " + http.StatusText(code) + " " + body)
						}
						if err != nil {
							errs <- err
							return
						}
					}
					errs <- nil
				}()
			}
			for range tc.workers {
				if err := <-errs; err != nil {
					t.Fatal(err)
				}
			}
			if n := ln.n.Load(); n != 1 {
				t.Errorf("%d connections, want 1", n)
			}
		})
	}
}

func dialGRPC(t *testing.T, addr string) ledgerpb.LedgerClient {
	t.Helper()
	cc, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return ledgerpb.NewLedgerClient(cc)
}

func TestServeH2GRPCUnary(t *testing.T) {
	addr, ln := startH2(t, H2Options{GRPC: true}, nil)
	c := dialGRPC(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.Ping(ctx, &ledgerpb.PingRequest{}); err != nil {
		t.Fatal(err)
	}
	// 2,000 concurrent calls, half with a 1 KiB request: megabytes through
	// the server's 64 KiB receive windows
	txid := bytes.Repeat([]byte{7}, 1<<10)
	var wg sync.WaitGroup
	errs := make(chan error, 2000)
	for i := range 2000 {
		wg.Go(func() {
			var err error
			if i%2 == 0 {
				_, err = c.Ping(ctx, &ledgerpb.PingRequest{})
			} else {
				_, err = c.GetTransaction(ctx, &ledgerpb.TxRequest{Txid: txid})
			}
			if err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := ln.n.Load(); n != 1 {
		t.Errorf("%d connections, want 1", n)
	}
}

func TestServeH2GRPCStream(t *testing.T) {
	for _, tc := range []struct {
		name     string
		messages int
		want     int
	}{
		{"default", 0, 1},
		{"7", 7, 7},
		// 100,000 bytes: beyond the client's 64 KiB stream and connection windows
		{"20000", 20000, 20000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, _ := startH2(t, H2Options{GRPC: true, Messages: tc.messages}, nil)
			c := dialGRPC(t, addr)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			for range 3 {
				st, err := c.GetBlockRange(ctx, &ledgerpb.BlockRange{Start: 1, End: 7})
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				for {
					_, err := st.Recv()
					if err == io.EOF {
						break
					}
					if err != nil {
						t.Fatalf("after %d messages: %v", n, err)
					}
					n++
				}
				if n != tc.want {
					t.Fatalf("%d messages, want %d", n, tc.want)
				}
			}
		})
	}
}

// rawH2 is a hand-written HTTP/2 client that allocates nothing per frame.
type rawH2 struct {
	c      net.Conn
	buf    []byte
	off, n int
}

func frameBytes(typ, flags byte, id uint32, payload []byte) []byte {
	return append(appendFrameHeader(nil, len(payload), typ, flags, id), payload...)
}

func setting(id uint16, v uint32) []byte {
	return binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint16(nil, id), v)
}

func u32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }

// dialRaw sends the client preface with these settings (SETTINGS payload).
func dialRaw(t testing.TB, addr string, settings []byte) *rawH2 {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(30 * time.Second))
	r := &rawH2{c: c, buf: make([]byte, 256<<10)}
	r.write(t, append([]byte(h2Preface), frameBytes(frameSettings, 0, 0, settings)...))
	return r
}

func (r *rawH2) write(t testing.TB, b []byte) {
	t.Helper()
	if _, err := r.c.Write(b); err != nil {
		t.Fatal(err)
	}
}

// next returns the next frame; p is valid until the next call.
func (r *rawH2) next() (typ, flags byte, id uint32, p []byte, err error) {
	need := 9
	for {
		if r.n-r.off >= need {
			h := r.buf[r.off:]
			length := int(h[0])<<16 | int(h[1])<<8 | int(h[2])
			if need == 9 && length > 0 {
				need += length
				continue
			}
			r.off += need
			return h[3], h[4], binary.BigEndian.Uint32(h[5:]) & maxWindow, h[9:need], nil
		}
		if r.off > 0 {
			r.n = copy(r.buf, r.buf[r.off:r.n])
			r.off = 0
		}
		m, err := r.c.Read(r.buf[r.n:])
		if err != nil {
			return 0, 0, 0, nil, err
		}
		r.n += m
	}
}

// until reads frames until want reports true; every frame passes by check.
func (r *rawH2) until(t testing.TB, want func(typ, flags byte, id uint32, p []byte) bool) {
	t.Helper()
	for {
		typ, flags, id, p, err := r.next()
		if err != nil {
			t.Fatal(err)
		}
		if want(typ, flags, id, p) {
			return
		}
	}
}

// eof reads until the server closes the connection.
func (r *rawH2) eof(t testing.TB) {
	t.Helper()
	for {
		if _, _, _, _, err := r.next(); err != nil {
			if err != io.EOF && !errors.Is(err, net.ErrClosed) && !isReset(err) {
				t.Fatalf("want EOF, got %v", err)
			}
			return
		}
	}
}

func isReset(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && !op.Timeout()
}

// a GET's header block: :method GET, :scheme http, :path /, :authority x
var getBlock = []byte{0x82, 0x86, 0x84, 0x01, 0x01, 'x'}

func TestServeH2Raw(t *testing.T) {
	pingFrame := frameBytes(framePing, 0, 0, []byte("12345678"))
	isPingAck := func(typ, flags byte, _ uint32, p []byte) bool {
		return typ == framePing && flags&flagAck != 0 && string(p) == "12345678"
	}
	t.Run("stream window", func(t *testing.T) {
		addr, _ := startH2(t, H2Options{}, nil)
		r := dialRaw(t, addr, setting(settingInitialWindowSize, 0))
		r.write(t, frameBytes(frameHeaders, flagEndHeaders|flagEndStream, 1, getBlock))
		r.until(t, func(typ, _ byte, id uint32, _ []byte) bool { return typ == frameHeaders && id == 1 })
		r.write(t, pingFrame)
		r.until(t, func(typ, flags byte, id uint32, p []byte) bool {
			if typ == frameData {
				t.Fatal("DATA beyond a zero window")
			}
			return isPingAck(typ, flags, id, p)
		})
		r.write(t, frameBytes(frameWindowUpdate, 0, 1, u32(4)))
		r.until(t, func(typ, flags byte, id uint32, p []byte) bool {
			return typ == frameData && id == 1 && flags&flagEndStream != 0 && string(p) == "pong"
		})
	})
	t.Run("connection window", func(t *testing.T) {
		const messages = 20000 // 100,000 bytes
		addr, _ := startH2(t, H2Options{GRPC: true, Messages: messages}, nil)
		r := dialRaw(t, addr, setting(settingInitialWindowSize, 1<<30))
		r.write(t, frameBytes(frameHeaders, flagEndHeaders, 1, getBlock))
		r.write(t, frameBytes(frameData, flagEndStream, 1, []byte{0, 0, 0, 0, 0}))
		got := 0
		r.until(t, func(typ, _ byte, id uint32, p []byte) bool {
			if typ == frameData {
				got += len(p)
			}
			return got > defaultWindow-5
		})
		r.write(t, pingFrame)
		r.until(t, func(typ, flags byte, id uint32, p []byte) bool {
			if typ == frameData {
				got += len(p)
			}
			return isPingAck(typ, flags, id, p)
		})
		if got > defaultWindow {
			t.Fatalf("%d DATA bytes beyond the connection window", got)
		}
		r.write(t, frameBytes(frameWindowUpdate, 0, 0, u32(1<<20)))
		r.until(t, func(typ, flags byte, id uint32, p []byte) bool {
			if typ == frameData {
				got += len(p)
			}
			return typ == frameHeaders && flags&flagEndStream != 0
		})
		if got != 5*messages {
			t.Fatalf("%d DATA bytes, want %d", got, 5*messages)
		}
	})
	t.Run("reset", func(t *testing.T) {
		addr, _ := startH2(t, H2Options{}, nil)
		r := dialRaw(t, addr, setting(settingInitialWindowSize, 0))
		r.write(t, frameBytes(frameHeaders, flagEndHeaders|flagEndStream, 1, getBlock))
		r.until(t, func(typ, _ byte, id uint32, _ []byte) bool { return typ == frameHeaders && id == 1 })
		r.write(t, frameBytes(frameRSTStream, 0, 1, u32(8)))
		r.write(t, frameBytes(frameSettings, 0, 0, setting(settingInitialWindowSize, 100)))
		r.write(t, frameBytes(frameHeaders, flagEndHeaders|flagEndStream, 3, getBlock))
		r.until(t, func(typ, flags byte, id uint32, _ []byte) bool {
			if typ == frameData && id == 1 {
				t.Fatal("DATA on a reset stream")
			}
			return typ == frameData && id == 3 && flags&flagEndStream != 0
		})
	})
	t.Run("continuation", func(t *testing.T) {
		addr, _ := startH2(t, H2Options{}, nil)
		r := dialRaw(t, addr, nil)
		var b []byte
		b = append(b, frameBytes(frameHeaders, flagEndStream, 1, getBlock[:3])...)
		b = append(b, frameBytes(frameContinuation, 0, 1, getBlock[3:4])...)
		b = append(b, frameBytes(0xee, 0, 0, []byte("unknown"))...) // not allowed here
		r.write(t, append(b, frameBytes(frameContinuation, flagEndHeaders, 1, getBlock[4:])...))
		r.eof(t)

		r = dialRaw(t, addr, nil)
		b = b[:0]
		b = append(b, frameBytes(frameHeaders, flagEndStream, 1, getBlock[:3])...)
		b = append(b, frameBytes(frameContinuation, 0, 1, getBlock[3:4])...)
		b = append(b, frameBytes(frameContinuation, flagEndHeaders, 1, getBlock[4:])...)
		r.write(t, append(b, frameBytes(0xee, 0, 0, []byte("unknown"))...))
		r.until(t, func(typ, flags byte, id uint32, p []byte) bool {
			return typ == frameData && id == 1 && flags&flagEndStream != 0 && string(p) == "pong"
		})
	})
	t.Run("goaway", func(t *testing.T) {
		addr, _ := startH2(t, H2Options{}, nil)
		r := dialRaw(t, addr, nil)
		var b []byte
		b = append(b, frameBytes(frameHeaders, flagEndHeaders|flagEndStream, 1, getBlock)...)
		r.write(t, append(b, frameBytes(frameGoAway, 0, 0, make([]byte, 8))...))
		r.until(t, func(typ, flags byte, id uint32, p []byte) bool {
			return typ == frameData && id == 1 && flags&flagEndStream != 0 && string(p) == "pong"
		})
		r.eof(t)
	})
	for _, tc := range []struct {
		name string
		send []byte
	}{
		{"http/1.1", []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\nxxxxxxxxxxxxxxxxxxxxxxxxxx")},
		{"no settings first", append([]byte(h2Preface), pingFrame...)},
		{"frame too long", append(append([]byte(h2Preface), frameBytes(frameSettings, 0, 0, nil)...),
			appendFrameHeader(nil, maxFrame+1, frameData, 0, 1)...)},
		{"even stream", append(append([]byte(h2Preface), frameBytes(frameSettings, 0, 0, nil)...),
			frameBytes(frameHeaders, flagEndHeaders|flagEndStream, 2, getBlock)...)},
		{"short ping", append(append([]byte(h2Preface), frameBytes(frameSettings, 0, 0, nil)...),
			frameBytes(framePing, 0, 0, []byte("1234"))...)},
	} {
		t.Run("malformed "+tc.name, func(t *testing.T) {
			addr, _ := startH2(t, H2Options{}, nil)
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(10 * time.Second))
			r := &rawH2{c: c, buf: make([]byte, 64<<10)}
			r.write(t, tc.send)
			r.eof(t)
		})
	}
}

// TestServeH2Allocs counts the process's allocations across 10,000 plain
// requests from a raw client that allocates nothing itself.
func TestServeH2Allocs(t *testing.T) {
	const batch = 100
	addr, _ := startH2(t, H2Options{}, nil)
	r := dialRaw(t, addr, setting(settingInitialWindowSize, 1<<30))
	r.write(t, frameBytes(frameWindowUpdate, 0, 0, u32(1<<30)))
	req := frameBytes(frameHeaders, flagEndHeaders|flagEndStream, 0, getBlock)
	reqs := bytes.Repeat(req, batch)
	id := uint32(1)
	send := func(n int) {
		for range n / batch {
			for i := range batch {
				binary.BigEndian.PutUint32(reqs[i*len(req)+5:], id)
				id += 2
			}
			if _, err := r.c.Write(reqs); err != nil {
				t.Fatal(err)
			}
			for done := 0; done < batch; {
				typ, flags, _, _, err := r.next()
				if err != nil {
					t.Fatal(err)
				}
				if typ == frameData && flags&flagEndStream != 0 {
					done++
				}
			}
		}
	}
	send(2000) // warm up
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	const n = 10000
	send(n)
	runtime.ReadMemStats(&m1)
	if per := float64(m1.Mallocs-m0.Mallocs) / n; per >= 1 {
		t.Errorf("%.2f allocations per request, want < 1", per)
	} else {
		t.Logf("%.4f allocations per request", per)
	}
}

func FuzzServeH2(f *testing.F) {
	f.Add(false, uint8(0), frameBytes(frameSettings, 0, 0, nil))
	f.Add(false, uint8(0), append(frameBytes(frameSettings, 0, 0, setting(settingInitialWindowSize, 0)),
		frameBytes(frameHeaders, flagEndHeaders|flagEndStream, 1, getBlock)...))
	f.Add(true, uint8(3), append(append(frameBytes(frameSettings, 0, 0, nil),
		frameBytes(frameHeaders, flagEndHeaders, 1, getBlock)...),
		frameBytes(frameData, flagEndStream, 1, []byte{0, 0, 0, 0, 0})...))
	f.Add(false, uint8(0), append(append(frameBytes(frameSettings, 0, 0, nil),
		frameBytes(frameHeaders, flagEndStream, 1, getBlock[:2])...),
		frameBytes(frameContinuation, flagEndHeaders, 1, getBlock[2:])...))
	f.Add(true, uint8(2), append(append(frameBytes(frameSettings, 0, 0, setting(settingInitialWindowSize, 3)),
		frameBytes(frameHeaders, flagEndHeaders|flagEndStream, 1, getBlock)...),
		frameBytes(frameRSTStream, 0, 1, u32(8))...))
	f.Add(false, uint8(0), append(frameBytes(frameSettings, 0, 0, nil), frameBytes(frameGoAway, 0, 0, make([]byte, 8))...))
	f.Fuzz(func(t *testing.T, grpc bool, messages uint8, data []byte) {
		a := newH2Answer(H2Options{GRPC: grpc, Messages: int(messages)})
		client, server := net.Pipe()
		server.SetDeadline(time.Now().Add(2 * time.Second))
		done := make(chan struct{})
		go func() { serveH2Conn(server, a); close(done) }()
		go io.Copy(io.Discard, client)
		client.SetWriteDeadline(time.Now().Add(2 * time.Second))
		client.Write(append([]byte(h2Preface), data...))
		client.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("the server hangs")
		}
	})
}
