package comet

import (
	"encoding/base64"
	"strconv"
	"time"

	"github.com/buger/jsonparser"
)

// Run is what every transaction of one sweep cell carries.
type Run struct {
	Connections, Rate int
	ID                [16]byte
	// Size is each transaction's size in bytes.
	Size int
}

// Params returns a params builder for broadcast_tx_*: each call makes a
// fresh payload stamped with the time of sending. Connections call it
// concurrently, so it keeps no state between calls.
func (r Run) Params() func(dst []byte) ([]byte, error) {
	return func(dst []byte) ([]byte, error) {
		p := Payload{Connections: uint64(r.Connections), Rate: uint64(r.Rate), ID: r.ID, Time: time.Now()}
		tx, err := p.Tx(r.Size)
		if err != nil {
			return nil, err
		}
		dst = append(dst, `{"tx":"`...)
		dst = base64.StdEncoding.AppendEncode(dst, tx)
		return append(dst, `"}`...), nil
	}
}

// CheckResult judges a broadcast_tx_* result: CheckTx (and, for
// broadcast_tx_commit, the block's execution) must return code 0; any
// other code is status abci:CODE.
func CheckResult(result []byte) string {
	for _, path := range [][]string{{"code"}, {"check_tx", "code"}, {"tx_result", "code"}} {
		if code, err := jsonparser.GetInt(result, path...); err == nil && code != 0 {
			return "abci:" + strconv.FormatInt(code, 10)
		}
	}
	return ""
}
