package driver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/tandem-bench/tandem/driver/grpcdrv"
	"github.com/tandem-bench/tandem/driver/httpdrv"
	"github.com/tandem-bench/tandem/load"
	"github.com/tandem-bench/tandem/study"
	"github.com/tandem-bench/tandem/values"
)

// MixCall is one call of a mix: its name, its weight and its Caller (built
// with the call's own values, if it has any).
type MixCall struct {
	Name   string
	Weight float64
	Caller Caller
}

// Mix is the Caller of a scenario's mix: request i goes to call Pick(i),
// drawn by weight from the study's seed, the scenario's name and i alone
// (values.Picker), so every target is sent the same calls in the same
// order; each call renders its own values for request i. Each connection
// carries every call in turn where the protocol allows (HTTP/1.1
// keep-alive, one HTTP/2 or gRPC connection), and the event loop's wire
// renders the chosen call's request. A run records each call apart as well
// (load.Parts).
type Mix struct {
	calls  []MixCall
	picker *values.Picker
	// high is one past the highest request number sent, for the digest of
	// the sequence (Sequence).
	high atomic.Uint64
	// sets are the values MixAt opened for the calls, closed by Close.
	sets []*values.Set
}

// MixPickerName is the name of a scenario's mix's stream: "mix/" and the
// scenario's name (no value's name has a '/', so no value shares it).
func MixPickerName(scenario string) string { return "mix/" + scenario }

// NewMix returns the Caller of a mix of calls, picked under seed and the
// scenario's name.
func NewMix(seed uint64, scenario string, calls []MixCall) (*Mix, error) {
	if len(calls) == 0 {
		return nil, errors.New("a mix of no calls")
	}
	weights := make([]float64, len(calls))
	for k, c := range calls {
		if c.Caller == nil {
			return nil, fmt.Errorf("mix call %s has no caller", c.Name)
		}
		weights[k] = c.Weight
	}
	p, err := values.NewPicker(seed, MixPickerName(scenario), weights)
	if err != nil {
		return nil, fmt.Errorf("mix of scenario %s: %w", scenario, err)
	}
	return &Mix{calls: calls, picker: p}, nil
}

// Pick is the index of request i's call.
func (m *Mix) Pick(i uint64) int { return m.picker.Pick(i) }

// Parts says that a run's requests fall into the mix's calls by Pick.
func (m *Mix) Parts() load.Parts { return load.Parts{N: len(m.calls), Of: m.picker.Pick} }

// Requests is one past the highest request number sent so far: the
// digest of the sequence (Sequence) covers every run's.
func (m *Mix) Requests() uint64 { return m.high.Load() }

// Sequence is the digest of the calls of requests 0 to Requests − 1
// (values.Picker.Digest): two targets with the same digest were sent the
// same calls in the same order.
func (m *Mix) Sequence() values.Digest { return m.picker.Digest(m.Requests()) }

// note records that request i was sent.
func (m *Mix) note(i uint64) {
	for {
		cur := m.high.Load()
		if i < cur || m.high.CompareAndSwap(cur, i+1) {
			return
		}
	}
}

// Dial opens one connection that carries every call of the mix where the
// protocol allows, else a connection per call.
func (m *Mix) Dial(ctx context.Context) (load.Conn, error) {
	callers := make([]Caller, len(m.calls))
	for k, c := range m.calls {
		callers[k] = c.Caller
	}
	conns, err := dialBeside(ctx, callers)
	if err != nil {
		return nil, err
	}
	return &mixConn{m: m, conns: conns}, nil
}

// Ask refuses: a mix is sent by a scenario's load, request by request.
func (m *Mix) Ask(context.Context) ([][]byte, load.Result, error) {
	return nil, load.Result{}, errors.New("a mix is sent by a scenario's load, not asked once")
}

// Wire offers the event loop a wire that renders each request's call,
// when every call has a wire to one address.
func (m *Mix) Wire() (load.Wire, bool) {
	ws := make([]load.Wire, len(m.calls))
	for k, c := range m.calls {
		wd, ok := c.Caller.(load.Wired)
		if !ok {
			return nil, false
		}
		if ws[k], ok = wd.Wire(); !ok || ws[k].Addr().String() != ws[0].Addr().String() {
			return nil, false
		}
		if _, ok := load.SerialOf(ws[k].NewConn()); !ok {
			return nil, false // a mix takes turns on a connection, one request at a time
		}
	}
	return mixWire{m: m, ws: ws}, true
}

// mixConn sends request i on the connection of its call.
type mixConn struct {
	m     *Mix
	conns []load.Conn
}

func (c *mixConn) Do(ctx context.Context, i uint64, deadline time.Time) load.Result {
	c.m.note(i)
	return c.conns[c.m.picker.Pick(i)].Do(ctx, i, deadline)
}

func (c *mixConn) Close() error { return closeAll(c.conns) }

// mixWire is the event loop's mix: each connection's state for every
// call, the request rendered by its call's, the answer framed by the
// same.
type mixWire struct {
	m  *Mix
	ws []load.Wire
}

func (w mixWire) Addr() *net.TCPAddr { return w.ws[0].Addr() }
func (w mixWire) Parts() load.Parts  { return w.m.Parts() }
func (w mixWire) NewConn() load.WireConn {
	wc := &mixWireConn{m: w.m, subs: make([]load.SerialConn, len(w.ws))}
	for k, sw := range w.ws {
		wc.subs[k], _ = load.SerialOf(sw.NewConn()) // serial: see Wire
	}
	return load.Serial(wc)
}

type mixWireConn struct {
	m    *Mix
	subs []load.SerialConn
	last int // the call of the request in flight
}

func (wc *mixWireConn) AppendRequest(b []byte, i uint64) ([]byte, error) {
	wc.m.note(i)
	wc.last = wc.m.picker.Pick(i)
	return wc.subs[wc.last].AppendRequest(b, i)
}

func (wc *mixWireConn) Response(b []byte) (int, load.Result, bool, error) {
	return wc.subs[wc.last].Response(b)
}

// dialBeside dials a connection for each caller: the first its own, and
// each later one over an earlier one's connection where both protocols
// allow it (Beside), else its own.
func dialBeside(ctx context.Context, callers []Caller) ([]load.Conn, error) {
	conns := make([]load.Conn, 0, len(callers))
	for _, c := range callers {
		var cn load.Conn
		for _, other := range conns {
			var ok bool
			var err error
			if cn, ok, err = beside(ctx, c, other); err != nil {
				closeAll(conns)
				return nil, err
			} else if ok {
				break
			}
		}
		if cn == nil {
			var err error
			if cn, err = c.Dial(ctx); err != nil {
				closeAll(conns)
				return nil, err
			}
		}
		conns = append(conns, cn)
	}
	return conns, nil
}

// beside is a Conn of c over other's connection, if their protocol
// carries both (HTTP and JSON-RPC, gRPC).
func beside(ctx context.Context, c Caller, other load.Conn) (load.Conn, bool, error) {
	switch a := c.(type) {
	case asker[*httpdrv.Conn]:
		o, isHTTP := other.(*httpdrv.Conn)
		hc, ok := a.Dialer.(*httpdrv.Caller)
		if !isHTTP || !ok {
			return nil, false, nil
		}
		cn, ok := hc.Beside(o)
		if !ok {
			return nil, false, nil
		}
		return cn, true, nil
	case asker[*grpcdrv.Conn]:
		o, isGRPC := other.(*grpcdrv.Conn)
		gc, ok := a.Dialer.(*grpcdrv.Caller)
		if !isGRPC || !ok {
			return nil, false, nil
		}
		cn, ok, err := gc.Beside(ctx, o)
		if err != nil || !ok {
			return nil, false, err
		}
		return cn, true, nil
	}
	return nil, false, nil
}

// closeAll closes conns, the last first (a Conn over another's connection
// before the one that owns it).
func closeAll(conns []load.Conn) error {
	var errs []error
	for k := len(conns) - 1; k >= 0; k-- {
		errs = append(errs, conns[k].Close())
	}
	return errors.Join(errs...)
}

// MixAt returns the Caller of a mix file's mix (tandem load --mix), every
// call sent to target, a tandem load URL: http(s)://HOST/… for http and
// jsonrpc calls (each call's path joined to it), grpc://HOST:PORT for grpc
// calls. Each call's values are opened under the file's seed, until the
// mix's Close.
func MixAt(ctx context.Context, target string, mf *study.MixFile, o Options) (m *Mix, err error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, fmt.Errorf("target %q: %w", target, err)
	}
	var sets []*values.Set
	defer func() {
		if err != nil {
			for _, s := range sets {
				s.Close()
			}
		}
	}()
	calls := make([]MixCall, len(mf.Mix))
	for k, mc := range mf.Mix {
		call := mf.Calls[mc.Call]
		endpoint, err := mixEndpoint(u, target, call.Protocol())
		if err != nil {
			return nil, fmt.Errorf("call %s: %w", mc.Call, err)
		}
		co := o
		if call.HasValues() {
			set, err := values.Open(ctx, mf.Seed, call.ValueSpecs)
			if err != nil {
				return nil, fmt.Errorf("call %s: %w", mc.Call, err)
			}
			sets = append(sets, set)
			co.Values = NewValues(set)
		}
		c, err := New(ctx, call, endpoint, co)
		if err != nil {
			return nil, fmt.Errorf("call %s: %w", mc.Call, err)
		}
		calls[k] = MixCall{Name: mc.Call, Weight: mc.Weight, Caller: c}
	}
	if m, err = NewMix(mf.Seed, MixLoadName, calls); err != nil {
		return nil, err
	}
	m.sets = sets
	return m, nil
}

// Close closes the values MixAt opened.
func (m *Mix) Close() error {
	for _, s := range m.sets {
		s.Close()
	}
	m.sets = nil
	return nil
}

// MixLoadName is the scenario name tandem load's mix is picked under.
const MixLoadName = "load"

// mixEndpoint is the endpoint of a mix's call of protocol proto at target
// URL u.
func mixEndpoint(u *url.URL, target, proto string) (string, error) {
	switch {
	case proto == study.ProtoGRPC && u.Scheme == "grpc":
		if u.Path != "" && u.Path != "/" {
			return "", fmt.Errorf("target %q: a mix's grpc calls name their methods: give grpc://HOST:PORT", target)
		}
		return u.Host, nil
	case (proto == study.ProtoHTTP || proto == study.ProtoJSONRPC) && (u.Scheme == "http" || u.Scheme == "https"):
		return target, nil
	case proto == study.ProtoGRPC:
		return "", fmt.Errorf("target %q: a grpc call goes to grpc://HOST:PORT", target)
	}
	return "", fmt.Errorf("target %q: %s calls go to http(s)://HOST/", target, proto)
}
