package load

import (
	"fmt"

	"github.com/tandem-bench/tandem/internal/human"
)

// SplitCount is the index-th of count shares of total by largest remainder:
// each share is total/count, and the first total%count shares one more,
// so the shares sum exactly to total and differ by at most one.
func SplitCount(total int64, count, index int) int64 {
	if count <= 0 || index < 0 || index >= count {
		return 0
	}
	share := total / int64(count)
	if int64(index) < total%int64(count) {
		share++
	}
	return share
}

// Split narrows the spec to the index-th of count shares of its load,
// exactly, and says the share in words: a closed loop takes a share of the
// clients, an open loop a share of the connections and every count-th
// arrival of the whole schedule from its index (Shard), a batched loop a
// share of the connections, each sending the whole batch; Requests is
// split too. Shares are by largest remainder and add up to the whole. A
// share without a client or connection, or without a request where the
// whole has a count, is an error: the load cannot be split so.
func (s Spec) Split(index, count int) (Spec, string, error) {
	if count < 1 || index < 0 || index >= count {
		return s, "", fmt.Errorf("share %d of %d: want 0 ≤ index < count", index, count)
	}
	whole, what := s.Connections, "connection"
	if s.Kind == KindClosed {
		whole, what = s.Clients, "client"
	}
	conns := int(SplitCount(int64(whole), count, index))
	if conns < 1 {
		return s, "", fmt.Errorf("%s over %d workers: worker %d gets none; give at least one per worker", human.Plural(whole, what), count, index+1)
	}
	part := s
	part.Requests = SplitCount(s.Requests, count, index)
	if s.Requests > 0 && part.Requests < 1 {
		return s, "", fmt.Errorf("%s over %d workers: worker %d gets none", human.Plural(int(s.Requests), "request"), count, index+1)
	}
	var words string
	switch s.Kind {
	case KindClosed:
		part.Clients = conns
		words = "closed loop: " + human.Plural(conns, what)
	case KindOpen:
		part.Connections = conns
		words = fmt.Sprintf("open loop: every %s arrival from the %s, over %s", human.Ordinal(count), human.Ordinal(index+1), human.Plural(conns, what))
		if s.Schedule != nil {
			part.Schedule = Shard{Schedule: s.Schedule, Index: index, Count: count}
		}
	default:
		part.Connections = conns
		words = string(s.Kind) + " loop: " + human.Plural(conns, what)
	}
	if part.Requests > 0 {
		words += fmt.Sprintf(", %d requests", part.Requests)
	}
	return part, words, nil
}
