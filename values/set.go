package values

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
)

// Set is a study's named sources, opened with one seed. It does not change
// once open: templates compiled from it and Renderers made from it may be
// used from any goroutine (each Renderer by one at a time).
type Set struct {
	seed    uint64
	gens    map[string]generator
	feeders map[string]int // name → index in list
	list    []*feeder
	slots   map[string]int // name → index of a Slot
	names   []string       // every name a placeholder may use, sorted
	digest  []digestName
}

// digestName is one name the digest covers: a generator, or a feeder's
// column.
type digestName struct {
	name   string
	gen    generator
	feeder int
	col    int
}

// Open opens the sources: generators are set up, feeder files read once,
// checked and indexed (a bad row is an error "file:line: what is wrong").
// A name is letters, digits, '_' and '-'. Close releases the files.
func Open(ctx context.Context, seed uint64, specs map[string]Spec) (*Set, error) {
	s := &Set{seed: seed, gens: map[string]generator{}, feeders: map[string]int{}, slots: map[string]int{}}
	for _, name := range slices.Sorted(maps.Keys(specs)) {
		if err := s.add(ctx, name, specs[name]); err != nil {
			s.Close()
			return nil, err
		}
	}
	s.index()
	return s, nil
}

func (s *Set) add(ctx context.Context, name string, spec Spec) error {
	if !validName(name) {
		return fmt.Errorf("value %q: a name is letters, digits, '_' and '-', starting with a letter or '_'", name)
	}
	if spec == nil {
		return fmt.Errorf("value %s: no definition", name)
	}
	if err := spec.validate(); err != nil {
		return fmt.Errorf("value %s: %w", name, err)
	}
	if _, ok := spec.(Slot); ok {
		s.slots[name] = len(s.slots)
		return nil
	}
	if fs, ok := spec.(File); ok {
		f, err := openFeeder(ctx, s.seed, name, fs)
		if err != nil {
			return err
		}
		s.feeders[name] = len(s.list)
		s.list = append(s.list, f)
		return nil
	}
	g, err := newGenerator(s.seed, name, spec)
	if err != nil {
		return fmt.Errorf("value %s: %w", name, err)
	}
	s.gens[name] = g
	return nil
}

// index lists the names placeholders may use, and those of the digest.
func (s *Set) index() {
	for name, g := range s.gens {
		s.names = append(s.names, name)
		if _, isTime := g.(*timeGen); !isTime {
			s.digest = append(s.digest, digestName{name: name, gen: g})
		}
	}
	for name := range s.slots {
		s.names = append(s.names, name) // not in the digest: not drawn
	}
	for name, fi := range s.feeders {
		for c, col := range s.list[fi].columns {
			full := name + "." + col
			s.names = append(s.names, full)
			s.digest = append(s.digest, digestName{name: full, feeder: fi, col: c})
		}
	}
	slices.Sort(s.names)
	slices.SortFunc(s.digest, func(a, b digestName) int { return strings.Compare(a.name, b.name) })
}

func validName(name string) bool {
	if name == "" || name[0] >= '0' && name[0] <= '9' || name[0] == '-' {
		return false
	}
	for _, c := range []byte(name) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// Close closes the feeders' files.
func (s *Set) Close() error {
	var errs []error
	for _, f := range s.list {
		errs = append(errs, f.close())
	}
	return errors.Join(errs...)
}

// Names lists the names a placeholder may use, sorted: each generator's,
// and NAME.COLUMN for each column of each feeder.
func (s *Set) Names() []string { return slices.Clone(s.names) }

// Limit is how many requests the set has values for: the fewest rows of a
// feeder in once order; ok is false when no feeder limits the run.
func (s *Set) Limit() (n uint64, ok bool) {
	n = math.MaxUint64
	for _, f := range s.list {
		if f.order == Once && uint64(f.index.rows()) < n {
			n, ok = uint64(f.index.rows()), true
		}
	}
	if !ok {
		return 0, false
	}
	return n, true
}

// Rows is the number of rows of the feeder named name; ok is false when
// there is none.
func (s *Set) Rows(name string) (n int, ok bool) {
	fi, ok := s.feeders[name]
	if !ok {
		return 0, false
	}
	return s.list[fi].index.rows(), true
}

// Renderer is one goroutine's state for rendering requests: its buffers
// and, for each feeder, the row it read last and the window of the file
// around it. It is not safe for concurrent use; make one per goroutine.
type Renderer struct {
	set     *Set
	scratch []byte
	cursors []cursor
	slots   []slotValue
}

// slotValue is a Renderer's value of one Slot, in a buffer of its own.
type slotValue struct {
	v   value
	set bool
	buf []byte
}

// NewRenderer returns a Renderer for templates compiled from s.
func (s *Set) NewRenderer() *Renderer {
	r := &Renderer{set: s, cursors: make([]cursor, len(s.list)), slots: make([]slotValue, len(s.slots))}
	for k, f := range s.list {
		r.cursors[k] = cursor{p: rowParser{f: f}, row: -1}
	}
	return r
}

// ref is what a placeholder names: a generator, a feeder's column, or a
// slot (slot: its index + 1).
type ref struct {
	gen    generator
	feeder int
	col    int
	slot   int
}

// errSlotUnset is the error of a slot rendered before it is set.
var errSlotUnset = errors.New("no value has been set (captured) for it")

// value is ref's value for request i, sent at now.
func (r *Renderer) value(ref ref, i uint64, now time.Time) (value, error) {
	if ref.slot > 0 {
		sv := &r.slots[ref.slot-1]
		if !sv.set {
			return value{}, errSlotUnset
		}
		return sv.v, nil
	}
	if ref.gen != nil {
		return ref.gen.value(r, i, now), nil
	}
	c := &r.cursors[ref.feeder]
	if err := c.load(i); err != nil {
		return value{}, err
	}
	return c.p.cells[ref.col], nil
}

// cursor is a Renderer's reading of one feeder.
type cursor struct {
	p     rowParser
	row   int    // the row in p.cells; −1 for none
	buf   []byte // the window's storage
	win   []byte // the bytes of the file read last
	winAt int64  // their offset
}

// load reads request i's row into c.p.cells, unless it is there already.
func (c *cursor) load(i uint64) error {
	f := c.p.f
	n := uint64(f.index.rows())
	var row uint64
	switch f.order {
	case Sequential:
		row = i % n
	case Once:
		if i >= n {
			return fmt.Errorf("%s: request %d of %d rows: %w", f.path, i, n, ErrExhausted)
		}
		row = i
	default:
		r := draws(f.base, i)
		row = bounded(&r, n)
	}
	if int(row) == c.row {
		return nil
	}
	c.row = -1
	b, err := c.rowBytes(int(row))
	if err != nil {
		return err
	}
	if f.format == CSV {
		if _, _, err = c.p.csv.parse(b, true); err == nil {
			err = c.p.csvCells(0)
		}
	} else {
		err = c.p.jsonlCells(b)
	}
	if err != nil {
		return fmt.Errorf("%s: row %d no longer reads as it did when the file was opened (was it changed?): %w", f.path, row+1, err)
	}
	c.row = int(row)
	return nil
}

// rowBytes is a row's bytes: from the file held in memory, from the
// window, or read into the window (in random order, the row alone).
func (c *cursor) rowBytes(row int) ([]byte, error) {
	f := c.p.f
	start, end := f.index.span(row)
	if f.data != nil {
		return f.data[start:end], nil
	}
	if start >= c.winAt && end <= c.winAt+int64(len(c.win)) {
		return c.win[start-c.winAt : end-c.winAt], nil
	}
	size := end - start
	if f.order != Random && size < window {
		size = min(window, f.index.end-start)
	}
	if int64(cap(c.buf)) < size {
		c.buf = make([]byte, size)
	}
	c.win = nil
	n, err := f.file.ReadAt(c.buf[:size], start)
	if int64(n) < end-start {
		if err == nil {
			err = errors.New("short read")
		}
		return nil, fmt.Errorf("%s: row %d: %w", f.path, row+1, err)
	}
	c.win, c.winAt = c.buf[:n], start
	return c.win[:end-start], nil
}

// Digest is the fingerprint of a run's values: the SHA-256 of the first
// Requests requests' values, in the encoding docs/values.md defines.
type Digest struct {
	Requests uint64 `json:"requests"`
	SHA256   string `json:"sha256"`
}

// digestVersion begins what the digest hashes; it changes with the
// encoding.
const digestVersion = "tandem values digest v1\n"

// Digest fingerprints the values of requests 0 to n−1 (fewer when a once
// feeder ends first): for each request, every name but the time values,
// sorted (a feeder's columns as NAME.COLUMN), each with its value. Two
// runs with equal digests sent the same values, on any machine.
func (s *Set) Digest(ctx context.Context, n uint64) (Digest, error) {
	if limit, ok := s.Limit(); ok && limit < n {
		n = limit
	}
	h := sha256.New()
	r := s.NewRenderer()
	buf := []byte(digestVersion)
	for i := range n {
		if i%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return Digest{}, err
			}
		}
		for _, d := range s.digest {
			v, err := r.value(ref{gen: d.gen, feeder: d.feeder, col: d.col}, i, time.Time{})
			if err != nil {
				return Digest{}, err
			}
			buf = appendDigest(buf, d.name, v)
		}
		if len(buf) >= 32<<10 {
			h.Write(buf)
			buf = buf[:0]
		}
	}
	h.Write(buf)
	return Digest{Requests: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// appendDigest appends a name and its value as the digest encodes them:
// the name's length (uvarint) and bytes, a type byte, then an int64 or a
// float64's bits (8 bytes, big-endian) or the length (uvarint) and bytes of
// a string ('s'), bytes ('b') or other JSON value ('j').
func appendDigest(dst []byte, name string, v value) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(name)))
	dst = append(dst, name...)
	switch v.t {
	case tInt:
		return binary.BigEndian.AppendUint64(append(dst, 'i'), uint64(v.n))
	case tFloat:
		return binary.BigEndian.AppendUint64(append(dst, 'f'), math.Float64bits(v.f))
	case tString:
		dst = append(dst, 's')
	case tBytes:
		dst = append(dst, 'b')
	default:
		dst = append(dst, 'j')
	}
	dst = binary.AppendUvarint(dst, uint64(len(v.b)))
	return append(dst, v.b...)
}

// slot is the Renderer's value of the Slot named name.
func (r *Renderer) slot(name string) (*slotValue, error) {
	k, ok := r.set.slots[name]
	if !ok {
		return nil, fmt.Errorf("values: no slot %q", name)
	}
	return &r.slots[k], nil
}

// SetSlotText sets the Slot named name to a string, text, for every
// request the Renderer renders until it is set again or cleared. The
// bytes are copied.
func (r *Renderer) SetSlotText(name string, text []byte) error {
	sv, err := r.slot(name)
	if err != nil {
		return err
	}
	sv.buf = append(sv.buf[:0], text...)
	sv.v, sv.set = value{t: tString, b: sv.buf}, true
	return nil
}

// SetSlotJSON sets the Slot named name to a JSON value: a string as its
// text, anything else (a number, true, false, an object, a list) as the
// JSON it is, so that a number spliced alone into a JSON document stays a
// number. js must be one valid JSON value; null is refused, as no value.
func (r *Renderer) SetSlotJSON(name string, js []byte) error {
	sv, err := r.slot(name)
	if err != nil {
		return err
	}
	js = bytes.TrimSpace(js)
	switch {
	case !json.Valid(js):
		return fmt.Errorf("values: slot %s: not one JSON value", name)
	case string(js) == "null":
		return fmt.Errorf("values: slot %s: null is no value", name)
	case js[0] == '"':
		var s string
		if err := json.Unmarshal(js, &s); err != nil {
			return fmt.Errorf("values: slot %s: %w", name, err)
		}
		sv.buf = append(sv.buf[:0], s...)
		sv.v = value{t: tString, b: sv.buf}
	default:
		sv.buf = append(sv.buf[:0], js...)
		sv.v = value{t: tRaw, b: sv.buf}
	}
	sv.set = true
	return nil
}

// ClearSlots unsets every Slot of the Renderer.
func (r *Renderer) ClearSlots() {
	for k := range r.slots {
		r.slots[k].set = false
	}
}
