package record

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"
)

// Index limits: a recording opened as an Index holds at most MaxIndexed
// exchanges, and its file's bytes stay in memory when it is at most
// indexMemLimit long (else each line is read back from the file).
const (
	MaxIndexed    = 4_000_000
	indexMemLimit = 4 << 20
)

// IndexEntryBytes is what an Index holds per exchange: when its request
// arrived, and where its line is in the file.
const IndexEntryBytes = 24

// Index is a recording opened to be replayed as load: read through and
// checked once (a bad line is a *LineError, as Reader gives), then each
// exchange read back by its number when it is sent. Exchanges are
// numbered in the order their requests arrived (offset_ns; a file's lines
// are in the order the answers ended), the file's order among equal
// offsets. It holds IndexEntryBytes per exchange and not the exchanges,
// so its memory does not grow with the requests sent; the file's bytes
// are held too when it is at most 4 MiB. Its methods are safe for
// concurrent use.
type Index struct {
	name      string
	header    Header
	src       io.ReaderAt
	file      *os.File // nil when the bytes are held
	entries   []entry
	protocols []Protocol
	sum       string
	size      int64
}

// entry is one exchange: when its request arrived, where its line starts
// in the file, its length without the newline, and its line number.
type entry struct {
	at   time.Duration
	off  int64
	n    uint32
	line uint32
}

// OpenIndex reads the recording at path through, checks every line and
// indexes its exchanges.
func OpenIndex(path string) (*Index, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s: not a regular file", path)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	x := &Index{name: path, src: f, file: f, size: fi.Size()}
	var in io.Reader = f
	if fi.Size() <= indexMemLimit {
		data, err := io.ReadAll(f)
		f.Close()
		if err != nil {
			return nil, err
		}
		x.src, x.file, x.size = bytes.NewReader(data), nil, int64(len(data))
		in = bytes.NewReader(data)
	}
	if err := x.scan(in); err != nil {
		x.Close()
		return nil, err
	}
	return x, nil
}

// scan reads the recording from in and fills the index.
func (x *Index) scan(in io.Reader) error {
	h := sha256.New()
	rd, err := NewReader(io.TeeReader(in, h), x.name)
	if err != nil {
		return err
	}
	x.header = rd.Header()
	for rd.Scan() {
		if len(x.entries) == MaxIndexed {
			return fmt.Errorf("%s: more than %d exchanges", x.name, MaxIndexed)
		}
		ex := rd.Exchange()
		x.entries = append(x.entries, entry{at: ex.Offset, off: rd.Offset(), n: uint32(len(rd.sc.Bytes())), line: uint32(rd.Line())})
		if !slices.Contains(x.protocols, ex.Protocol) {
			x.protocols = append(x.protocols, ex.Protocol)
		}
	}
	if err := rd.Err(); err != nil {
		return err
	}
	if len(x.entries) == 0 {
		return fmt.Errorf("%s: no exchanges, only the header", x.name)
	}
	x.sum = hex.EncodeToString(h.Sum(nil))
	slices.SortStableFunc(x.entries, func(a, b entry) int { return int(min(max(a.at-b.at, -1), 1)) })
	x.entries = slices.Clip(x.entries)
	return nil
}

// Len is how many exchanges the recording holds.
func (x *Index) Len() int { return len(x.entries) }

// At is when exchange k's request arrived, from the recording's start;
// exchanges are numbered so that At never decreases.
func (x *Index) At(k int) time.Duration { return x.entries[k].at }

// Line is the file's line that holds exchange k.
func (x *Index) Line(k int) int { return int(x.entries[k].line) }

// Protocols are the protocols of the exchanges, in the order the file
// first has them.
func (x *Index) Protocols() []Protocol { return slices.Clone(x.protocols) }

// SHA256 is the hex SHA-256 of the file's bytes.
func (x *Index) SHA256() string { return x.sum }

// Size is the file's size in bytes.
func (x *Index) Size() int64 { return x.size }

// Header is the recording's header line.
func (x *Index) Header() Header { return x.header }

// Exchange reads exchange k back from the file into buf (grown as
// needed; the exchange does not keep it) and returns both. A line that no
// longer reads as it did, because the file changed, is a *LineError.
func (x *Index) Exchange(k int, buf []byte) (Exchange, []byte, error) {
	if k < 0 || k >= len(x.entries) {
		return Exchange{}, buf, fmt.Errorf("%s: no exchange %d of %d", x.name, k, len(x.entries))
	}
	e := x.entries[k]
	buf = slices.Grow(buf[:0], int(e.n))[:e.n]
	if _, err := x.src.ReadAt(buf, e.off); err != nil {
		if errors.Is(err, io.EOF) {
			err = errors.New("the file is shorter than when it was read")
		}
		return Exchange{}, buf, fmt.Errorf("%s: exchange %d: %w", x.name, k, err)
	}
	ex, err := unmarshal(buf, x.header.MaxBody)
	if err != nil {
		return Exchange{}, buf, &LineError{x.name, int(e.line), 1, fmt.Errorf("%w (the file changed since it was read)", jsonError(err))}
	}
	return ex, buf, nil
}

// Close closes the file, if it is still open.
func (x *Index) Close() error {
	if x.file == nil {
		return nil
	}
	return x.file.Close()
}
