//go:build !linux

package veth

import (
	"context"
	"errors"
	"net"
	"runtime"
)

// errNotLinux is why there is no kernel path on this system.
var errNotLinux = errors.New("veth: network namespaces and veth pairs are Linux's; on " + runtime.GOOS + " use the user-space link")

// Path is a TCP path through the kernel; on this system New refuses.
type Path struct{}

// Probe says why this system has no kernel path.
func Probe() error { return errNotLinux }

// New refuses: there is no kernel path on this system.
func New(context.Context, Options) (*Path, error) { return nil, errNotLinux }

// Abort is not reached: New refuses.
func (p *Path) Abort(string) {}

// Dial is not reached: New refuses.
func (p *Path) Dial(context.Context) (net.Conn, error) { return nil, errNotLinux }

// Set is not reached: New refuses.
func (p *Path) Set(up, down Shape) error { return errNotLinux }

// Shapes is not reached: New refuses.
func (p *Path) Shapes() (up, down Shape) { return }

// Stats is not reached: New refuses.
func (p *Path) Stats() Stats { return Stats{} }

// Close is not reached: New refuses.
func (p *Path) Close() error { return nil }
