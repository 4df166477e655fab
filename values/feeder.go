package values

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
)

const (
	// MaxRow bounds one row of a feeder file, in bytes.
	MaxRow = 1 << 20
	// memLimit is the largest file a feeder holds in memory; a larger one
	// is read through each Renderer's window.
	memLimit = 4 << 20
	// window is how much of a streamed file a Renderer reads at once in
	// sequential and once order.
	window = 64 << 10
	// chunk is the read size while a file is checked and indexed.
	chunk = 256 << 10
	// blockRows is how many rows share one 64-bit offset in the index.
	blockRows = 64
)

// errLongRow says a row is longer than MaxRow.
var errLongRow = errors.New("a row too long")

// ErrExhausted says a once feeder has no row left for the request: the run
// ends at Set.Limit.
var ErrExhausted = errors.New("no row left (order once)")

// rowError is a bad row: file:line[:col]: what is wrong.
type rowError struct {
	path      string
	line, col int
	msg       string
}

func (e *rowError) Error() string {
	switch {
	case e.line == 0:
		return fmt.Sprintf("%s: %s", e.path, e.msg)
	case e.col == 0:
		return fmt.Sprintf("%s:%d: %s", e.path, e.line, e.msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.path, e.line, e.col, e.msg)
}

// feeder is an open file of rows. Everything in it is fixed once open:
// Renderers read it from any goroutine (os.File.ReadAt is safe for that).
type feeder struct {
	path    string
	format  FileFormat
	order   Order
	base    uint64
	columns []string
	col     map[string]int
	unsafe  []int // per column, the first line whose value an HTTP header cannot carry; 0 for none
	index   rowIndex
	file    *os.File // nil when data holds the file
	data    []byte
}

// rowIndex is where each row starts: a 64-bit offset every blockRows rows
// and a 32-bit offset from it for each row, 4 bytes a row.
type rowIndex struct {
	blocks []int64
	rel    []uint32
	end    int64 // where the last row ends
}

func (x *rowIndex) rows() int { return len(x.rel) }

// add appends a row starting at off; false when it is 4 GiB past its
// block's start (only blank lines could make it so).
func (x *rowIndex) add(off int64) bool {
	if len(x.rel)%blockRows == 0 {
		x.blocks = append(x.blocks, off)
	}
	d := off - x.blocks[len(x.blocks)-1]
	if d > math.MaxUint32 {
		return false
	}
	x.rel = append(x.rel, uint32(d))
	return true
}

// span is row i's bytes: from its start to the next row's.
func (x *rowIndex) span(i int) (start, end int64) {
	start = x.blocks[i/blockRows] + int64(x.rel[i])
	end = x.end
	if i+1 < len(x.rel) {
		end = x.blocks[(i+1)/blockRows] + int64(x.rel[i+1])
	}
	return start, end
}

// openFeeder opens, checks and indexes a feeder's file: every row is read
// once, and a bad one is an error at its line.
func openFeeder(ctx context.Context, seed uint64, name string, spec File) (*feeder, error) {
	f := &feeder{path: spec.Path, format: spec.Format, order: spec.Order, base: baseOf(seed, name), col: map[string]int{}}
	file, err := os.Open(spec.Path)
	if err != nil {
		return nil, fmt.Errorf("feeder %s: %w", name, err)
	}
	info, err := file.Stat()
	if err != nil || !info.Mode().IsRegular() {
		file.Close()
		if err == nil {
			err = fmt.Errorf("%s: not a regular file", spec.Path)
		}
		return nil, fmt.Errorf("feeder %s: %w", name, err)
	}
	var r io.Reader = file
	if info.Size() <= memLimit {
		f.data, err = io.ReadAll(file)
		file.Close()
		if err != nil {
			return nil, fmt.Errorf("feeder %s: %w", name, err)
		}
		r = bytes.NewReader(f.data)
	} else {
		f.file = file
	}
	if err := f.scan(ctx, r); err != nil {
		f.close()
		return nil, err
	}
	return f, nil
}

func (f *feeder) close() error {
	if f.file == nil {
		return nil
	}
	return f.file.Close()
}

func (f *feeder) errorf(line, col int, format string, args ...any) error {
	return &rowError{path: f.path, line: line, col: col, msg: fmt.Sprintf(format, args...)}
}

// scan reads the file once: the header or first object names the columns,
// each row is checked and indexed.
func (f *feeder) scan(ctx context.Context, r io.Reader) error {
	p := &rowParser{f: f}
	sc := scanner{r: r, buf: make([]byte, 0, chunk)}
	next := p.csv.parse
	if f.format == JSONL {
		next = nextLine
	}
	header := f.format == CSV
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		row, err := sc.next(next)
		if err == io.EOF {
			break
		}
		if err != nil {
			return f.scanError(err, &sc)
		}
		if header {
			if err := f.header(p, sc.line); err != nil {
				return err
			}
			header = false
			continue
		}
		if err := p.check(row, sc.line); err != nil {
			return err
		}
		if !f.index.add(sc.off) {
			return f.errorf(sc.line, 0, "more than 4 GiB of blank lines before this row")
		}
	}
	f.index.end = sc.end
	switch {
	case f.columns == nil && f.format == CSV:
		return f.errorf(0, 0, "empty: want a header row naming the columns")
	case f.index.rows() == 0 && f.format == CSV:
		return f.errorf(0, 0, "no rows after the header")
	case f.index.rows() == 0:
		return f.errorf(0, 0, "no rows")
	}
	return nil
}

// scanError places a scanner's error at its line and column.
func (f *feeder) scanError(err error, sc *scanner) error {
	var ce *csvError
	if errors.As(err, &ce) {
		line, col := sc.position(ce.at)
		return f.errorf(line, col, "%s", ce.msg)
	}
	if errors.Is(err, errLongRow) {
		return f.errorf(sc.line, 0, "a row longer than %d bytes (or a quoted field never closed)", MaxRow)
	}
	return fmt.Errorf("%s: %w", f.path, err)
}

// header reads the CSV header: the column names, distinct and not empty.
func (f *feeder) header(p *rowParser, line int) error {
	for k := range p.csv.fields() {
		name := string(p.csv.field(k))
		if name == "" {
			return f.errorf(line, 0, "column %d of the header has no name", k+1)
		}
		if _, dup := f.col[name]; dup {
			return f.errorf(line, 0, "column %q is named twice in the header", name)
		}
		f.col[name] = k
		f.columns = append(f.columns, name)
	}
	f.unsafe = make([]int, len(f.columns))
	return nil
}

// setColumns names the columns after the first JSONL object's keys.
func (f *feeder) setColumns(keys []string) {
	for k, name := range keys {
		f.col[name] = k
	}
	f.columns = keys
	f.unsafe = make([]int, len(keys))
}

// noteUnsafe records the first line where a column's value has a byte an
// HTTP header cannot carry.
func (f *feeder) noteUnsafe(col int, v value, line int) {
	if f.unsafe[col] == 0 && v.t == tString && headerUnsafe(v.b) >= 0 {
		f.unsafe[col] = line
	}
}

// nextLine finds the next JSONL row in b: a line that is not blank.
func nextLine(b []byte, atEOF bool) (start, end int, err error) {
	pos := 0
	for pos < len(b) {
		i := bytes.IndexByte(b[pos:], '\n')
		if i < 0 {
			if !atEOF {
				return pos, pos, errNeedMore
			}
			i = len(b) - pos
		} else {
			i++
		}
		if skipSpace(b[pos:pos+i], 0) < i {
			return pos, pos + i, nil
		}
		pos += i
	}
	if !atEOF {
		return pos, pos, errNeedMore
	}
	return pos, pos, io.EOF
}

// scanner reads a file in chunks and finds its rows one after another,
// keeping count of lines and offsets.
type scanner struct {
	r    io.Reader
	buf  []byte
	pos  int   // where the next row's search starts in buf
	at   int64 // the file offset of buf[0]
	ln   int   // the line number at buf[pos]
	eof  bool
	off  int64 // the offset of the row found last
	line int   // its first line
	end  int64 // where it ends
	from int   // where the last search began in buf, for position
}

// next returns the next row found by find, or io.EOF.
func (s *scanner) next(find func(b []byte, atEOF bool) (int, int, error)) ([]byte, error) {
	if s.ln == 0 {
		s.ln = 1
		for len(s.buf) < 3 && !s.eof {
			if err := s.fill(); err != nil {
				return nil, err
			}
		}
		if bytes.HasPrefix(s.buf, []byte("\ufeff")) {
			s.pos = 3 // a byte-order mark
		}
	}
	for {
		s.from = s.pos
		start, end, err := find(s.buf[s.pos:], s.eof)
		if err == errNeedMore && !s.eof {
			if err := s.fill(); err != nil {
				return nil, err
			}
			continue
		}
		if err == io.EOF {
			s.end = s.at + int64(len(s.buf))
			return nil, io.EOF
		}
		if err != nil {
			return nil, err
		}
		if end-start > MaxRow {
			s.line = s.ln + bytes.Count(s.buf[s.pos:s.pos+start], []byte{'\n'})
			return nil, errLongRow
		}
		row := s.buf[s.pos+start : s.pos+end]
		s.line = s.ln + bytes.Count(s.buf[s.pos:s.pos+start], []byte{'\n'})
		s.off = s.at + int64(s.pos+start)
		s.ln += bytes.Count(s.buf[s.pos:s.pos+end], []byte{'\n'})
		s.pos += end
		s.end = s.at + int64(s.pos)
		return row, nil
	}
}

// fill drops what was read and reads more, growing the buffer up to a row
// of MaxRow.
func (s *scanner) fill() error {
	if s.pos > 0 {
		n := copy(s.buf, s.buf[s.pos:])
		s.at += int64(s.pos)
		s.buf, s.pos = s.buf[:n], 0
	}
	if len(s.buf) > MaxRow {
		return errLongRow // what is left of the buffer is one row, unfinished
	}
	if len(s.buf) == cap(s.buf) {
		s.buf = append(s.buf, make([]byte, cap(s.buf))...)[:len(s.buf)]
	}
	n, err := s.r.Read(s.buf[len(s.buf):cap(s.buf)])
	s.buf = s.buf[:len(s.buf)+n]
	if err == io.EOF {
		s.eof = true
		return nil
	}
	return err
}

// position is the line and column of offset at of the last search.
func (s *scanner) position(at int) (line, col int) {
	b := s.buf[s.from : s.from+at]
	line = s.ln + bytes.Count(b, []byte{'\n'})
	return line, len(b) - bytes.LastIndexByte(b, '\n')
}

// rowParser reads one row's values into cells, one per column; a Renderer
// has one per feeder, and the file's check at open uses the same code.
type rowParser struct {
	f     *feeder
	csv   csvParser
	rec   []byte  // JSONL values, decoded
	key   []byte  // a JSONL key with escapes, decoded
	cells []value // per column; b points into csv.rec or rec
	spans [][2]int
	seen  []bool
}

// check checks a row when the file is opened, and notes the columns that
// an HTTP header cannot carry.
func (p *rowParser) check(row []byte, line int) error {
	var err error
	if p.f.format == CSV {
		err = p.csvCells(line)
	} else {
		err = p.checkJSONL(row, line)
	}
	if err != nil {
		return err
	}
	for k, v := range p.cells {
		p.f.noteUnsafe(k, v, line)
	}
	return nil
}

// csvCells fills cells from the record csv holds.
func (p *rowParser) csvCells(line int) error {
	f := p.f
	if n := p.csv.fields(); n != len(f.columns) {
		return f.errorf(line, 0, "%s; the header has %d (%s)", fieldCount(n), len(f.columns), strings.Join(f.columns, ", "))
	}
	p.cells = p.cells[:0]
	for k := range f.columns {
		p.cells = append(p.cells, value{t: tString, b: p.csv.field(k)})
	}
	return nil
}

func fieldCount(n int) string {
	if n == 1 {
		return "1 field"
	}
	return fmt.Sprintf("%d fields", n)
}

// checkJSONL checks one JSONL line when the file is opened: valid JSON, an
// object, every column (the first object's keys) present, no key twice.
func (p *rowParser) checkJSONL(row []byte, line int) error {
	f := p.f
	if !json.Valid(row) {
		var raw json.RawMessage
		err := json.Unmarshal(row, &raw)
		var se *json.SyntaxError
		col := 0
		if errors.As(err, &se) {
			col = int(se.Offset)
		}
		if err == nil {
			err = errBadJSON
		}
		return f.errorf(line, col, "bad JSON: %v", err)
	}
	if f.columns == nil {
		if err := p.firstObject(row, line); err != nil {
			return err
		}
	}
	if err := p.jsonlCells(row); err != nil {
		var me *missingError
		switch {
		case errors.Is(err, errNotObject):
			return f.errorf(line, 0, "%s, not a JSON object", jsonKind(row))
		case errors.As(err, &me):
			return f.errorf(line, 0, "%s", me.Error())
		}
		return f.errorf(line, 0, "%v", err)
	}
	return nil
}

// firstObject names the columns after the first object's keys.
func (p *rowParser) firstObject(row []byte, line int) error {
	m, err := newMembers(row)
	if err != nil {
		return p.f.errorf(line, 0, "%s, not a JSON object", jsonKind(row))
	}
	var keys []string
	seen := map[string]bool{}
	for {
		k, _, ok, err := m.next()
		if err != nil {
			return p.f.errorf(line, 0, "%v", err)
		}
		if !ok {
			break
		}
		var name []byte
		p.key, name = jsonKey(p.key, k)
		if seen[string(name)] {
			return p.f.errorf(line, 0, "key %q twice", name)
		}
		seen[string(name)] = true
		keys = append(keys, string(name))
	}
	if len(keys) == 0 {
		return p.f.errorf(line, 0, "an empty object: the first names the columns")
	}
	p.f.setColumns(keys)
	return nil
}

// missingError is a JSONL line without one of the columns, or with one
// twice.
type missingError struct {
	column string
	twice  bool
	first  []string
}

func (e *missingError) Error() string {
	if e.twice {
		return fmt.Sprintf("key %q twice", e.column)
	}
	return fmt.Sprintf("no %q: every line has the keys of the first (%s)", e.column, strings.Join(e.first, ", "))
}

// jsonlCells fills cells from the JSON object in row: strings decoded,
// objects and arrays compacted, numbers and literals as written.
func (p *rowParser) jsonlCells(row []byte) error {
	f := p.f
	m, err := newMembers(row)
	if err != nil {
		return err
	}
	n := len(f.columns)
	if len(p.seen) < n {
		p.seen = make([]bool, n)
		p.spans = make([][2]int, n)
		p.cells = make([]value, n)
	}
	clear(p.seen)
	p.rec = p.rec[:0]
	for {
		k, v, ok, err := m.next()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		var name []byte
		p.key, name = jsonKey(p.key, k)
		c, known := f.col[string(name)]
		if !known {
			continue
		}
		if p.seen[c] {
			return &missingError{column: f.columns[c], twice: true}
		}
		p.seen[c] = true
		from := len(p.rec)
		t := tRaw
		switch v[0] {
		case '"':
			t = tString
			p.rec = appendUnquoted(p.rec, v)
		case '{', '[':
			p.rec = appendCompact(p.rec, v)
		default:
			p.rec = append(p.rec, v...)
		}
		p.cells[c].t = t
		p.spans[c] = [2]int{from, len(p.rec)}
	}
	for c := range n {
		if !p.seen[c] {
			return &missingError{column: f.columns[c], first: f.columns}
		}
		p.cells[c].b = p.rec[p.spans[c][0]:p.spans[c][1]]
	}
	p.cells = p.cells[:n]
	return nil
}
