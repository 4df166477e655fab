// Package rawclock reads CLOCK_MONOTONIC and sleeps until a time on it
// with raw system calls (Linux), for the loops that own their thread: a
// raw call does not hand the thread's P to the runtime and back around
// every sleep.
package rawclock
