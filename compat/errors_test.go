package compat

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tandem-bench/tandem/driver"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/sample/ledgerpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"
)

// errorSummary is a line per case: its agreement and its differences
// (target, kind, path, reference→value), then its noise.
func errorSummary(c *results.Compat) string {
	var lines []string
	for _, cs := range c.Cases {
		line := fmt.Sprintf("%s %v: %s", cs.Call, cs.Vars, cs.Agreement)
		for _, d := range cs.Differences {
			line += fmt.Sprintf(" [%s %s %s %s→%s]", d.Target, d.Kind, d.Path, d.Reference, d.Value)
		}
		for _, d := range cs.Noise {
			line += fmt.Sprintf(" noise[%s]", d.Path)
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

// runErrors runs a study's compat section against its targets' endpoints.
func runErrors(t *testing.T, yaml string) *results.Compat {
	t.Helper()
	s := parseStudy(t, yaml)
	eps := map[string]map[string]string{}
	for _, tg := range s.Targets {
		eps[tg.Name] = tg.Endpoints
	}
	q := driver.NewQuerier(driver.Options{})
	defer q.Close()
	got, err := Run(context.Background(), s, Options{Endpoints: eps, Query: q})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// Two HTTP servers that both answer 400: alike when their error bodies
// are (the target's own address in the body, a secret of the call
// hidden), "error differs" with the differing field when not.
func TestBothFailedCompareHTTPErrorBodies(t *testing.T) {
	const secret = "s3cr3t-token-value"
	t.Setenv("TANDEM_TEST_ERR_TOKEN", secret)
	server := func(message func(n string) string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n := r.URL.Query().Get("n")
			if n == "text" {
				http.Error(w, message(n)+" at "+r.Host+" for "+r.Header.Get("Authorization"), http.StatusBadRequest)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			json.NewEncoder(w).Encode(map[string]any{"error": message(n), "n": n,
				"host": r.Host, "auth": r.Header.Get("Authorization")})
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	a := server(func(string) string { return "bad id" })
	b := server(func(n string) string {
		if n == "1" || n == "text" {
			return "invalid id"
		}
		return "bad id"
	})
	got := runErrors(t, fmt.Sprintf(`
version: 1
name: errors
targets:
  - {name: a, endpoints: {http: %q}}
  - {name: b, endpoints: {http: %q}}
calls:
  get: {http: {path: "/x?n=${n}", headers: {Authorization: "Bearer ${env.TANDEM_TEST_ERR_TOKEN}"}}}
compat:
  cases:
    - {call: get, vary: {n: ["0", "1", "text"]}}
`, a, b))
	want := strings.Join([]string{
		`get map[n:0]: both http:400`,
		`get map[n:1]: error differs [b value error.error "bad id"→"invalid id"]`,
		`get map[n:text]: error differs [b value error "bad id at {target} for Bearer xxx\n"→"invalid id at {target} for Bearer xxx\n"]`,
	}, "\n")
	if s := errorSummary(got); s != want {
		t.Errorf("cases:\n%s\nwant:\n%s", s, want)
	}
	if got.Failed != 2 {
		t.Errorf("failed %d; want the 2 cases whose errors differ", got.Failed)
	}
	raw, err := results.Marshal(withCompat(got))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), secret) {
		t.Errorf("the call's secret reached the results: %s", raw)
	}
	if err := results.Validate(raw); err != nil {
		t.Errorf("results with error differs do not validate: %v", err)
	}
	counts := map[string]int{}
	for _, row := range got.Matrix {
		for k, v := range row.Counts {
			counts[k] += v
		}
	}
	if counts["both http:400"] != 1 || counts[ErrorDiffers] != 2 {
		t.Errorf("matrix counts %v; want 1 both http:400 and 2 error differs", counts)
	}
}

// A JSON-RPC error object is compared field by field: the same code with
// another message or data is "error differs".
func TestBothFailedCompareJSONRPCErrors(t *testing.T) {
	server := func(message string, data any) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var req struct {
				ID     int64 `json:"id"`
				Params []int `json:"params"`
			}
			json.NewDecoder(r.Body).Decode(&req)
			e := map[string]any{"code": -32602, "message": "invalid params"}
			if req.Params[0] == 1 {
				e["message"] = message
			}
			if req.Params[0] == 2 {
				e["data"] = data
			}
			json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": e})
		}))
		t.Cleanup(srv.Close)
		return srv.URL + "/"
	}
	a := server("height out of range", map[string]any{"max": 10})
	b := server("height too large", map[string]any{"max": 11})
	got := runErrors(t, fmt.Sprintf(`
version: 1
name: rpc errors
targets:
  - {name: a, endpoints: {http: %q}}
  - {name: b, endpoints: {http: %q}}
calls:
  get: {jsonrpc: {method: get, params: ["${n}"]}}
compat:
  cases:
    - {call: get, vary: {n: [0, 1, 2]}}
`, a, b))
	want := strings.Join([]string{
		`get map[n:0]: both jsonrpc:-32602`,
		`get map[n:1]: error differs [b value error.message "height out of range"→"height too large"]`,
		`get map[n:2]: error differs [b value error.data.max 10→11]`,
	}, "\n")
	if s := errorSummary(got); s != want {
		t.Errorf("cases:\n%s\nwant:\n%s", s, want)
	}
}

// ledgerErrors is a Ledger whose GetBlock fails NOT_FOUND with its own
// message, and a detail, for heights above 100.
type ledgerErrors struct {
	ledgerpb.UnimplementedLedgerServer
	message string
	seq     *atomic.Int64
}

func (l ledgerErrors) GetBlock(_ context.Context, r *ledgerpb.BlockRequest) (*ledgerpb.Block, error) {
	msg := "no such block"
	if r.Height == 200 {
		msg = l.message
	}
	if r.Height == 300 && l.seq != nil {
		msg = fmt.Sprintf("no such block (request %d)", l.seq.Add(1))
	}
	st := status.New(codes.NotFound, msg)
	if d, err := structpb.NewStruct(map[string]any{"height": float64(r.Height)}); err == nil {
		if withDetail, err := st.WithDetails(d); err == nil {
			st = withDetail
		}
	}
	return nil, st.Err()
}

// grpcLedger serves l with reflection on 127.0.0.1 and returns its
// address.
func grpcLedger(t *testing.T, l ledgerErrors) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	ledgerpb.RegisterLedgerServer(s, l)
	reflection.Register(s)
	go s.Serve(ln)
	t.Cleanup(s.Stop)
	return ln.Addr().String()
}

// Two gRPC servers failing NOT_FOUND: alike when their statuses are (the
// details included), "error differs" at error.message when the messages
// are not; a message that changes from one answer to the next is noise
// when the noise source (the reference again) shows it.
func TestBothFailedCompareGRPCStatuses(t *testing.T) {
	var seq atomic.Int64
	a := grpcLedger(t, ledgerErrors{message: "block 200 not found", seq: &seq})
	b := grpcLedger(t, ledgerErrors{message: "height 200 is past the tip", seq: &seq})
	got := runErrors(t, fmt.Sprintf(`
version: 1
name: grpc errors
targets:
  - {name: a, endpoints: {grpc: %q}}
  - {name: b, endpoints: {grpc: %q}}
calls:
  block: {grpc: {method: tandem.sample.v1.Ledger/GetBlock, request: {height: "${h}"}}}
compat:
  noise: again
  cases:
    - {call: block, vary: {h: [150, 200, 300]}}
`, a, b))
	want := strings.Join([]string{
		`block map[h:150]: both grpc:NOT_FOUND`,
		`block map[h:200]: error differs [b value error.message "block 200 not found"→"height 200 is past the tip"]`,
		`block map[h:300]: both grpc:NOT_FOUND noise[error.message]`,
	}, "\n")
	if s := errorSummary(got); s != want {
		t.Errorf("cases:\n%s\nwant:\n%s", s, want)
	}
}
