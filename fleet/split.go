package fleet

import (
	"fmt"

	"github.com/tandem-bench/tandem/internal/human"
	"github.com/tandem-bench/tandem/load"
)

// Split is the index-th of count shares of total by largest remainder:
// each share is total/count, and the first total%count shares one more,
// so the shares sum exactly to total and differ by at most one.
func Split(total int64, count, index int) int64 {
	if count <= 0 || index < 0 || index >= count {
		return 0
	}
	share := total / int64(count)
	if int64(index) < total%int64(count) {
		share++
	}
	return share
}

// Share is one worker's part of a loop: its clients (a closed loop) or
// connections (an open or batched loop), its requests (0: the run is
// bounded by time), and the part in words.
type Share struct {
	Conns    int
	Requests int64
	Words    string
}

// ShareOf splits a loop of kind closed, open or batched with conns
// clients or connections and requests (0: none) over count workers and
// returns the index-th share: an open loop's worker also takes every
// count-th arrival of the whole timetable from its index (load.Shard),
// which the words say. A share without a client or connection, or
// without a request when the whole has a count, is an error: the run
// cannot be split so.
func ShareOf(kind load.Kind, conns int, requests int64, index, count int) (Share, error) {
	sh := Share{Conns: int(Split(int64(conns), count, index)), Requests: Split(requests, count, index)}
	what := "connection"
	switch kind {
	case load.KindClosed:
		what = "client"
		sh.Words = "closed loop: " + human.Plural(sh.Conns, what)
	case load.KindOpen:
		sh.Words = fmt.Sprintf("open loop: every %s arrival from the %s, over %s", human.Ordinal(count), human.Ordinal(index+1),
			human.Plural(sh.Conns, what))
	default:
		sh.Words = string(kind) + " loop: " + human.Plural(sh.Conns, what)
	}
	if sh.Conns < 1 {
		return sh, fmt.Errorf("%s over %d workers: worker %d gets none; give at least one per worker", human.Plural(conns, what), count, index+1)
	}
	if requests > 0 {
		if sh.Requests < 1 {
			return sh, fmt.Errorf("%s over %d workers: worker %d gets none", human.Plural(int(requests), "request"), count, index+1)
		}
		sh.Words += fmt.Sprintf(", %d requests", sh.Requests)
	}
	return sh, nil
}
