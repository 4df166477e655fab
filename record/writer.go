package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// ErrClosed is the error of a Write after Close.
var ErrClosed = errors.New("recording closed")

// Writer appends exchanges to a recording, each line in one write, so a
// recorder killed at any moment leaves every line it finished whole and
// loses at most the line it was writing. It is safe for concurrent use.
type Writer struct {
	mu      sync.Mutex
	w       io.Writer
	f       *os.File // set by Create: synced and closed by Close
	maxBody int
	n       int64
	size    int64 // bytes of whole lines written
	closed  bool
}

// Create creates the recording at path (mode 0600; an existing file is
// an error, never overwritten) and writes its header line.
func Create(path string, h Header) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	w, err := NewWriter(f, h)
	if err != nil {
		f.Close()
		os.Remove(path)
		return nil, err
	}
	w.f = f
	return w, nil
}

// NewWriter writes a recording's header line to w and returns the Writer
// of its exchanges. Format and Version are filled in.
func NewWriter(w io.Writer, h Header) (*Writer, error) {
	h.Format, h.Version = Format, Version
	if h.MaxBody == 0 {
		h.MaxBody = DefaultMaxBody
	}
	if err := h.check(); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(h); err != nil {
		return nil, fmt.Errorf("encode header: %w", err)
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return nil, fmt.Errorf("write header: %w", err)
	}
	return &Writer{w: w, maxBody: h.MaxBody, size: int64(b.Len())}, nil
}

// Write appends one exchange. An exchange the Reader would refuse is an
// error, and nothing is written.
func (w *Writer) Write(e *Exchange) error {
	b, err := marshal(e, w.maxBody)
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	if _, err := w.w.Write(b); err != nil {
		if w.f != nil {
			w.f.Truncate(w.size) // a line cut short (a full disk) is taken back: the file stays whole lines
		}
		return fmt.Errorf("write exchange: %w", err)
	}
	w.n++
	w.size += int64(len(b))
	return nil
}

// Count is how many exchanges were written.
func (w *Writer) Count() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}

// Close syncs and closes the file Create made (a Writer of NewWriter has
// nothing to close); later Writes fail with ErrClosed.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	if w.f == nil {
		return nil
	}
	if err := w.f.Sync(); err != nil {
		w.f.Close()
		return fmt.Errorf("sync %s: %w", w.f.Name(), err)
	}
	return w.f.Close()
}

// MaxBody is the most bytes of a request body the recording keeps.
func (w *Writer) MaxBody() int { return w.maxBody }
