// Package values gives each request of a run its own values: seeded
// generators (a sequence number, uniform integers and floats, a choice, a
// Zipf draw, random bytes or hex, the send time) and feeders (rows of a CSV
// or JSONL file), spliced into templates compiled once.
//
// The contract: a value is a function of the seed, the value's name and the
// request's number i alone (time values excepted: the caller gives the send
// time), so any goroutine may ask for any request in any order and every
// target gets the same sequence, which Set.Digest fingerprints. Rendering a
// request appends to the caller's buffer and allocates nothing in steady
// state; feeders stream their file through a row index rather than holding
// it whole.
//
// docs/values.md defines each source, the digest's encoding and the
// measured costs.
package values
