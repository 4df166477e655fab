package sample

import (
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/tandem-bench/tandem/demo"
	"github.com/tandem-bench/tandem/values"
)

// The demo asks for fixed heights, addresses and transaction ids; each must
// exist in the chain the sample serves by default, or the demo would measure
// NOT_FOUND answers.
func TestDemoInputsExistInDefaultChain(t *testing.T) {
	s, err := demo.Study(false)
	if err != nil {
		t.Fatal(err)
	}
	var o Options
	o.Build, o.DataDir = BuildA, "unused"
	if err := o.setDefaults(); err != nil {
		t.Fatal(err)
	}
	g := newChainGen(o.Seed, o.Addresses)
	txids := map[string]bool{}
	for range o.Blocks {
		for _, tx := range g.block().Txs {
			txids[string(tx.Txid)] = true
		}
	}
	checked := 0
	for name, c := range s.Calls {
		if c.GRPC == nil {
			continue
		}
		for vn, spec := range c.ValueSpecs { // heights drawn per request: every key a block
			if z, ok := spec.(values.Zipf); ok {
				checked++
				if z.N != uint64(o.Blocks) {
					t.Errorf("call %s: ${%s} draws from %d heights; want the default chain's %d", name, vn, z.N, o.Blocks)
				}
			}
		}
		req, _ := c.GRPC.Request.V.(map[string]any)
		if h, ok := req["height"].(int64); ok {
			checked++
			if h >= int64(o.Blocks) {
				t.Errorf("call %s: height %d beyond the default chain of %d blocks", name, h, o.Blocks)
			}
		}
		if id, ok := req["txid"].(string); ok && !strings.Contains(id, "${") {
			checked++
			raw, err := base64.StdEncoding.DecodeString(id)
			if err != nil || !txids[string(raw)] {
				t.Errorf("call %s: txid %s is not a transaction of the default chain (%v)", name, id, err)
			}
		}
	}
	// The compat cases' transaction ids of 32 bytes (base64 for gRPC, hex
	// for JSON-RPC) must exist too; shorter ones are the invalid inputs.
	for _, cs := range s.Compat.Cases {
		vals, _ := cs.Vary["txid"].V.([]any)
		for _, v := range vals {
			id, _ := v.(string)
			raw, err := hex.DecodeString(id)
			if err != nil {
				raw, _ = base64.StdEncoding.DecodeString(id)
			}
			if len(raw) == 32 {
				checked++
				if !txids[string(raw)] {
					t.Errorf("compat case %s: txid %s is not a transaction of the default chain", cs.Call, id)
				}
			}
		}
	}
	if checked < 5 {
		t.Errorf("%d heights and txids checked; want the demo's GetBlock and GetTransaction calls", checked)
	}
}
