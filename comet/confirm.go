package comet

import (
	"context"
	"fmt"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Confirmation is what became of one run's transactions.
type Confirmation struct {
	// Confirmed counts distinct transactions of the run found in blocks;
	// Duplicates counts further occurrences (the first is kept).
	Confirmed, Duplicates int64
	// Negative counts transactions whose block H+1 is older than their
	// send time (clocks or setup at fault); they count in Mean, not in
	// Latency.
	Negative int64
	// Latency holds the non-negative latencies; Mean is over all of them,
	// as CometBFT's report tool computes its average.
	Latency *hdrhistogram.Histogram
	Mean    time.Duration
	// First and Last are the times of the first and last block that held
	// the run's transactions.
	First, Last time.Time
	Blocks      []BlockStat
	// Drained reports whether the mempool emptied within the wait.
	Drained bool
}

// BlockStat is one block's share of a run.
type BlockStat struct {
	Height int64
	Time   time.Time
	Txs    int64
	Mean   time.Duration
}

// Drain waits, at most wait, for the node's mempool to empty.
func (n *Node) Drain(ctx context.Context, wait time.Duration) (bool, error) {
	deadline := time.Now().Add(wait)
	for {
		m, err := n.Mempool(ctx)
		if err != nil {
			return false, err
		}
		if m == 0 {
			return true, nil
		}
		if time.Now().After(deadline) {
			return false, nil
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Confirm waits for the mempool to drain (at most drain), then reads the
// blocks after height from and finds the transactions of run id. A
// transaction in block H gets the time of block H+1 (when H was committed)
// minus its send time, so Confirm also waits for the block after the last
// one it reads, within the same bound.
func (n *Node) Confirm(ctx context.Context, id [16]byte, from int64, drain time.Duration, hist func() *hdrhistogram.Histogram) (Confirmation, error) {
	c := Confirmation{Latency: hist()}
	start := time.Now()
	drained, err := n.Drain(ctx, drain)
	if err != nil {
		return c, err
	}
	c.Drained = drained
	last, err := n.Height(ctx)
	if err != nil {
		return c, err
	}
	for {
		h, err := n.Height(ctx)
		if err != nil {
			return c, err
		}
		if h > last {
			break
		}
		wait := n.BlockWait
		if wait <= 0 {
			wait = 10 * time.Second
		}
		if time.Since(start) > drain+wait {
			return c, fmt.Errorf("no block after height %d within %s", last, drain+wait)
		}
		select {
		case <-ctx.Done():
			return c, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	if from < 1 {
		from = 1
	}
	seen := map[[32]byte]bool{}
	var sum time.Duration
	var n64 int64
	prev, err := n.Block(ctx, from)
	if err != nil {
		return c, err
	}
	for h := from + 1; h <= last+1; h++ {
		cur, err := n.Block(ctx, h)
		if err != nil {
			return c, err
		}
		var bs BlockStat
		var bsum time.Duration
		for _, tx := range prev.Txs {
			p, err := ParseTx(tx)
			if err != nil || p.ID != id {
				continue // another run's, or not a loadtime transaction
			}
			hash := TxHash(tx)
			if seen[hash] {
				c.Duplicates++
				continue
			}
			seen[hash] = true
			l := cur.Time.Sub(p.Time)
			c.Confirmed++
			n64++
			sum += l
			bs.Txs++
			bsum += l
			if l < 0 {
				c.Negative++
			} else if err := c.Latency.RecordValue(max(int64(l), 1)); err != nil {
				c.Latency.RecordValue(c.Latency.HighestTrackableValue())
			}
		}
		if bs.Txs > 0 {
			bs.Height, bs.Time, bs.Mean = prev.Height, prev.Time, bsum/time.Duration(bs.Txs)
			c.Blocks = append(c.Blocks, bs)
			if c.First.IsZero() {
				c.First = prev.Time
			}
			c.Last = prev.Time
		}
		prev = cur
	}
	if n64 > 0 {
		c.Mean = sum / time.Duration(n64)
	}
	return c, nil
}
