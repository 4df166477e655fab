package values

import (
	"bytes"
	"errors"
	"io"
)

// csvParser reads CSV records as encoding/csv's Reader does with its
// defaults (comma ',', no comment lines, strict quotes, leading spaces
// kept, empty lines skipped, "\r\n" read as "\n" and a '\r' that ends the
// input dropped), into buffers it reuses: once they have grown, a record
// costs no allocation, which encoding/csv cannot offer (it makes a string
// per record). FuzzCSV holds the two to the same records and errors.
type csvParser struct {
	rec  []byte // the fields' bytes, one after another
	ends []int  // where each field ends in rec
}

// csvError is a syntax error at an offset of the bytes parsed.
type csvError struct {
	at  int
	msg string
}

func (e *csvError) Error() string { return e.msg }

// errNeedMore says a row may go on past the bytes given.
var errNeedMore = errors.New("the row goes on past the bytes read")

// fields is the number of fields of the record parsed last.
func (p *csvParser) fields() int { return len(p.ends) }

// field is the k-th field of the record parsed last.
func (p *csvParser) field(k int) []byte {
	from := 0
	if k > 0 {
		from = p.ends[k-1]
	}
	return p.rec[from:p.ends[k]]
}

// parse reads the record at the start of b, after any empty lines, and
// returns where it starts and where it ends (after its last line's end).
// atEOF says the input ends with b; if it does not and the record may go
// on past b, the error is errNeedMore. With no record left it is io.EOF; a
// syntax error is a *csvError.
func (p *csvParser) parse(b []byte, atEOF bool) (start, end int, err error) {
	p.rec, p.ends = p.rec[:0], p.ends[:0]
	pos := 0
	var line []byte
	var nl bool
	for {
		l, n, next, ok := csvLine(b, pos, atEOF)
		if !ok {
			if atEOF {
				return pos, pos, io.EOF
			}
			return pos, pos, errNeedMore
		}
		if len(l) > 0 {
			start, line, nl, pos = pos, l, n, next
			break
		}
		pos = next // an empty line
	}
	off := start // the offset of line[0] in b
	for {
		if len(line) == 0 || line[0] != '"' {
			field := line
			i := bytes.IndexByte(line, ',')
			if i >= 0 {
				field = line[:i]
			}
			if j := bytes.IndexByte(field, '"'); j >= 0 {
				return start, 0, &csvError{at: off + j, msg: `a " in an unquoted field (quote the field, and write a " inside quotes as "")`}
			}
			p.rec = append(p.rec, field...)
			p.ends = append(p.ends, len(p.rec))
			if i < 0 {
				return start, pos, nil
			}
			line, off = line[i+1:], off+i+1
			continue
		}
		var done bool
		line, nl, off, pos, done, err = p.quoted(b, line[1:], nl, off+1, pos, atEOF)
		if err != nil || done {
			return start, pos, err
		}
	}
}

// quoted reads a quoted field whose text begins at line (the opening quote
// at off−1) and returns what follows its closing quote and comma; done says
// the record ended with the field.
func (p *csvParser) quoted(b, line []byte, nl bool, off, pos int, atEOF bool) ([]byte, bool, int, int, bool, error) {
	opening := off - 1
	for {
		i := bytes.IndexByte(line, '"')
		switch {
		case i >= 0:
			p.rec = append(p.rec, line[:i]...)
			line, off = line[i+1:], off+i+1
			switch {
			case len(line) > 0 && line[0] == '"':
				p.rec = append(p.rec, '"')
				line, off = line[1:], off+1
			case len(line) > 0 && line[0] == ',':
				p.ends = append(p.ends, len(p.rec))
				return line[1:], nl, off + 1, pos, false, nil
			case len(line) == 0:
				p.ends = append(p.ends, len(p.rec))
				return nil, nl, off, pos, true, nil
			default:
				return nil, false, 0, 0, false, &csvError{at: off - 1, msg: `a closing " is followed by neither a comma nor the line's end (write a " inside quotes as "")`}
			}
		case len(line) > 0 || nl:
			p.rec = append(p.rec, line...)
			if nl {
				p.rec = append(p.rec, '\n')
			}
			l, n, next, ok := csvLine(b, pos, atEOF)
			if !ok {
				if !atEOF {
					return nil, false, 0, 0, false, errNeedMore
				}
				return nil, false, 0, 0, false, &csvError{at: opening, msg: "a quoted field is never closed"}
			}
			line, nl, off, pos = l, n, pos, next
		default:
			return nil, false, 0, 0, false, &csvError{at: opening, msg: "a quoted field is never closed"}
		}
	}
}

// csvLine is the line at b[pos:] as encoding/csv reads it: its text
// without its end ("\n" or "\r\n"; a final '\r' is dropped), whether it
// had an end, and where the next line starts. ok is false when b holds no
// whole line (atEOF false) or nothing (atEOF true).
func csvLine(b []byte, pos int, atEOF bool) (text []byte, nl bool, next int, ok bool) {
	if pos >= len(b) {
		return nil, false, pos, false
	}
	i := bytes.IndexByte(b[pos:], '\n')
	if i < 0 {
		if !atEOF {
			return nil, false, pos, false
		}
		return bytes.TrimSuffix(b[pos:], []byte{'\r'}), false, len(b), true
	}
	return bytes.TrimSuffix(b[pos:pos+i], []byte{'\r'}), true, pos + i + 1, true
}
