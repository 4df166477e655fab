// Package vary renders the parts of a request that take values (package
// values) for request number i: a call's path, headers and body, compiled
// once into templates and rendered into the buffers of one connection's
// Request. Values counts the request numbers rendered over every
// connection of every caller that shares it, for the run's digest.
package vary

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/tandem-bench/tandem/values"
)

// Values is a scenario's set of values and the count of request numbers
// rendered from it, by every caller built with it. It is safe for
// concurrent use.
type Values struct {
	set  *values.Set
	high atomic.Uint64
}

// New returns the Values of an open set.
func New(set *values.Set) *Values { return &Values{set: set} }

// Set is the values' set.
func (v *Values) Set() *values.Set { return v.set }

// Requests is one past the highest request number rendered so far: every
// request sent took the values of one of the set's first Requests
// requests, so their digest covers them all.
func (v *Values) Requests() uint64 { return v.high.Load() }

// note records that request i was rendered. Numbers mostly grow, so it is
// one compare-and-swap a request, and a load alone for a number below the
// highest.
func (v *Values) note(i uint64) {
	for {
		cur := v.high.Load()
		if i < cur || v.high.CompareAndSwap(cur, i+1) {
			return
		}
	}
}

// Parts are the parts of a call's request that vary from one request to
// the next, as templates of one set: nil (or no headers) for a part that
// does not vary.
type Parts struct {
	Values *Values
	// Path is the path and query, appended to the call's URL.
	Path *values.Template
	// Headers are headers (gRPC: metadata) whose values vary.
	Headers []Header
	// Body is the body, params, request or send.
	Body *values.Template
}

// Header is a header whose value varies.
type Header struct {
	Name  string
	Value *values.Template
}

// Varies reports whether any part varies.
func (p *Parts) Varies() bool {
	return p != nil && (p.Path != nil || len(p.Headers) > 0 || p.Body != nil)
}

// UsesSlots reports whether a part holds a values.Slot (a flow's
// capture): it renders only once the Request's slots are set.
func (p *Parts) UsesSlots() bool {
	if p.Path != nil && p.Path.UsesSlots() || p.Body != nil && p.Body.UsesSlots() {
		return true
	}
	for _, h := range p.Headers {
		if h.Value.UsesSlots() {
			return true
		}
	}
	return false
}

// usesTime reports whether a part holds a time value (then rendering
// reads the clock).
func (p *Parts) usesTime() bool {
	if p.Path != nil && p.Path.UsesTime() || p.Body != nil && p.Body.UsesTime() {
		return true
	}
	for _, h := range p.Headers {
		if h.Value.UsesTime() {
			return true
		}
	}
	return false
}

// Request is one connection's rendering of Parts: the buffers of the last
// request rendered, reused for the next. It is not safe for concurrent
// use.
type Request struct {
	p    *Parts
	r    *values.Renderer
	time bool
	// Path, Headers (one per Parts.Headers, in order) and Body are the
	// parts of the request rendered last; each is valid until the next
	// Render.
	Path    []byte
	Headers [][]byte
	Body    []byte
}

// NewRequest returns a Request for one connection.
func (p *Parts) NewRequest() *Request {
	return &Request{p: p, r: p.Values.set.NewRenderer(), time: p.usesTime(), Headers: make([][]byte, len(p.Headers))}
}

// Render renders request i's parts into the Request's buffers. It
// allocates nothing once they have grown.
func (q *Request) Render(i uint64) error {
	var now time.Time
	if q.time {
		now = time.Now()
	}
	var err error
	if t := q.p.Path; t != nil {
		if q.Path, err = t.Append(q.Path[:0], q.r, i, now); err != nil {
			return fmt.Errorf("request %d: path: %w", i, err)
		}
	}
	for k, h := range q.p.Headers {
		if q.Headers[k], err = h.Value.Append(q.Headers[k][:0], q.r, i, now); err != nil {
			return fmt.Errorf("request %d: header %s: %w", i, h.Name, err)
		}
	}
	if t := q.p.Body; t != nil {
		if q.Body, err = t.Append(q.Body[:0], q.r, i, now); err != nil {
			return fmt.Errorf("request %d: %w", i, err)
		}
	}
	q.p.Values.note(i)
	return nil
}

// Static renders a template without placeholders: its text, "$${" read
// as "${".
func Static(set *values.Set, t *values.Template) ([]byte, error) {
	return t.Append(nil, set.NewRenderer(), 0, time.Time{})
}

// SetSlotJSON sets a values.Slot of the Request's renderer to a JSON
// value (a flow's capture), for the requests it renders next.
func (q *Request) SetSlotJSON(name string, js []byte) error { return q.r.SetSlotJSON(name, js) }

// SetSlotText sets a values.Slot of the Request's renderer to a string.
func (q *Request) SetSlotText(name string, text []byte) error { return q.r.SetSlotText(name, text) }

// Answer is what a flow's step keeps of its answer, for its captures: the
// answer as JSON (an HTTP body, a JSON-RPC result, the last gRPC message in
// protobuf's JSON form) and the values of the headers it names. Its
// buffers are reused from one answer to the next.
type Answer struct {
	// Headers names the headers to keep (the caller sets them).
	Headers []string
	// Body is the answer; Values holds each header's value, one per
	// Headers, nil for a header the answer does not have. Both are valid
	// until the next answer.
	Body   []byte
	Values [][]byte
}

// KeepHeader sets header k's value, a copy of v (nil: absent).
func (a *Answer) KeepHeader(k int, v []byte, present bool) {
	if len(a.Values) != len(a.Headers) {
		a.Values = make([][]byte, len(a.Headers))
	}
	if !present {
		a.Values[k] = nil
		return
	}
	if a.Values[k] == nil {
		a.Values[k] = make([]byte, 0, len(v))
	}
	a.Values[k] = append(a.Values[k][:0], v...)
}
