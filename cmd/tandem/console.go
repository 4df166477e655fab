package main

import (
	"io"
	"os"
	"sync"
)

// console is stderr as tandem writes to it. While a live status area is
// drawn, what else is written there (the signal handler's notice) goes
// through the area, which prints it above itself, rather than under it,
// where the area's next redraw would overdraw it.
type console struct {
	f  *os.File
	mu sync.Mutex
	to io.Writer // nil: f
}

func (c *console) Write(b []byte) (int, error) {
	c.mu.Lock()
	to := c.to
	c.mu.Unlock()
	if to != nil {
		if n, err := to.Write(b); err == nil {
			return n, nil
		} // the area closed meanwhile: write under it
	}
	return c.f.Write(b)
}

// File is the terminal (or file) underneath, for terminal checks and for
// the status area itself.
func (c *console) File() *os.File { return c.f }

// route sends writes to w until the returned function is called.
func (c *console) route(w io.Writer) (restore func()) {
	c.mu.Lock()
	c.to = w
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		c.to = nil
		c.mu.Unlock()
	}
}

// fileOf is the file a writer writes to, if it is one (or a console).
func fileOf(w io.Writer) (*os.File, bool) {
	switch f := w.(type) {
	case *os.File:
		return f, true
	case interface{ File() *os.File }:
		return f.File(), true
	}
	return nil, false
}
