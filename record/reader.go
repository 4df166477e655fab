package record

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"unicode/utf8"
)

// LineError is a problem at a line of a recording (Col counts characters
// from 1; 1 when the whole line is at fault).
type LineError struct {
	File      string
	Line, Col int
	Err       error
}

func (e *LineError) Error() string {
	return fmt.Sprintf("%s:%d:%d: %v", e.File, e.Line, e.Col, e.Err)
}

func (e *LineError) Unwrap() error { return e.Err }

// Reader reads a recording one exchange at a time, like a bufio.Scanner:
//
//	for r.Scan() {
//		ex := r.Exchange()
//	}
//	if err := r.Err(); err != nil { … } // a *LineError for a bad line
type Reader struct {
	name   string
	sc     *bufio.Scanner
	closer io.Closer
	header Header
	line   int
	ex     Exchange
	err    error
	// unterminated is set when the line just read had no newline: the
	// last, and perhaps cut short.
	unterminated bool
	// consumed counts the bytes the scanner has moved past; start is
	// where the line read last starts.
	consumed, start int64
}

// Open opens the recording at path (a regular file) and reads its header
// line; Close closes the file.
func Open(path string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = fmt.Errorf("%s: not a regular file", path)
		}
		return nil, err
	}
	r, err := NewReader(f, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.closer = f
	return r, nil
}

// NewReader reads a recording from rd (name names it in errors) and reads
// its header line.
func NewReader(rd io.Reader, name string) (*Reader, error) {
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLine)
	r := &Reader{name: name, sc: sc}
	sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		adv, tok, err := bufio.ScanLines(data, atEOF)
		r.unterminated = atEOF && tok != nil && adv == len(data) && (len(data) == 0 || data[len(data)-1] != '\n')
		if tok != nil {
			r.start = r.consumed
		}
		r.consumed += int64(adv)
		return adv, tok, err
	})
	data, ok := r.next()
	if !ok {
		if r.err == nil {
			r.err = &LineError{name, 1, 1, errors.New("empty file: want a header line, then one line per exchange")}
		}
		return nil, r.err
	}
	if err := decodeStrict(data, &r.header); err != nil {
		return nil, r.lineError(data, fmt.Errorf("header: %w", jsonError(err)), err)
	}
	if err := r.header.check(); err != nil {
		return nil, r.lineError(data, fmt.Errorf("header: %w", err), nil)
	}
	return r, nil
}

// Header is the recording's header line.
func (r *Reader) Header() Header { return r.header }

// Scan reads the next exchange; false at the end or at an error (see Err).
func (r *Reader) Scan() bool {
	if r.err != nil {
		return false
	}
	data, ok := r.next()
	if !ok {
		return false
	}
	ex, err := unmarshal(data, r.header.MaxBody)
	if err != nil {
		le := r.lineError(data, jsonError(err), err)
		if r.unterminated && cutShort(err) {
			le.Err = fmt.Errorf("the last line is incomplete (the recorder stopped while writing it; remove it to read the rest): %w", le.Err)
		}
		r.err = le
		return false
	}
	r.ex = ex
	return true
}

// Exchange is the exchange Scan read; it is the caller's to keep.
func (r *Reader) Exchange() Exchange { return r.ex }

// Line is the line the last exchange (or error) was read from.
func (r *Reader) Line() int { return r.line }

// Offset is the byte offset in the file where the line of the last
// exchange starts.
func (r *Reader) Offset() int64 { return r.start }

// Err is the first error met, nil at a clean end.
func (r *Reader) Err() error { return r.err }

// Close closes the file Open opened.
func (r *Reader) Close() error {
	if r.closer == nil {
		return nil
	}
	return r.closer.Close()
}

// next returns the next line; false at the end or at an error.
func (r *Reader) next() ([]byte, bool) {
	if !r.sc.Scan() {
		r.line++
		switch err := r.sc.Err(); {
		case errors.Is(err, bufio.ErrTooLong):
			r.err = &LineError{r.name, r.line, 1, fmt.Errorf("line longer than %d bytes", MaxLine)}
		case err != nil:
			r.err = fmt.Errorf("%s: %w", r.name, err)
		}
		return nil, false
	}
	r.line++
	data := r.sc.Bytes()
	if len(bytes.TrimSpace(data)) == 0 {
		r.err = &LineError{r.name, r.line, 1, errors.New("empty line: want one JSON object per line")}
		return nil, false
	}
	return data, true
}

// lineError locates err at the current line: a JSON syntax error at its
// column.
func (r *Reader) lineError(data []byte, err, cause error) *LineError {
	col := 1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	var tr *trailingError
	switch {
	case errors.As(cause, &se):
		col = column(data, se.Offset)
	case errors.As(cause, &te):
		col = column(data, te.Offset)
	case errors.As(cause, &tr):
		col = column(data, tr.off+1)
	case errors.Is(cause, io.ErrUnexpectedEOF):
		col = utf8.RuneCount(data) + 1
	}
	return &LineError{r.name, r.line, col, err}
}

// column is the 1-based column of byte offset off in data (the last byte
// when off is past the end).
func column(data []byte, off int64) int {
	if off <= 0 {
		return 1
	}
	off = min(off, int64(len(data)))
	return utf8.RuneCount(data[:off]) // the offending byte is just past the offset
}

// cutShort reports whether a line's error is that its JSON ends early.
func cutShort(err error) bool { return errors.Is(err, io.ErrUnexpectedEOF) }

// jsonError says a JSON decoding error in the recording's terms.
func jsonError(err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("not JSON: the line ends inside its object")
	case errors.As(err, &se):
		return fmt.Errorf("not JSON: %s", se.Error())
	case errors.As(err, &te):
		return fmt.Errorf("field %s: got a JSON %s, want %s", te.Field, te.Value, te.Type)
	}
	return err
}
