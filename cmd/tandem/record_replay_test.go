package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/internal/tooltest"
	"github.com/tandem-bench/tandem/record"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/sample"
	"github.com/tandem-bench/tandem/sample/ledgerpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// postJSON posts body to url with curl when it is installed (else with
// net/http) and returns the answer's body.
func postJSON(t *testing.T, curl, url, body string, headers ...string) []byte {
	t.Helper()
	if curl == "" {
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return b
	}
	args := []string{"-sS", "--fail-with-body", "-H", "Content-Type: application/json", "--data-binary", body, url}
	for i := 0; i+1 < len(headers); i += 2 {
		args = append(args, "-H", headers[i]+": "+headers[i+1])
	}
	out, err := exec.Command(curl, args...).Output()
	if err != nil {
		t.Fatalf("curl %s: %v", body, err)
	}
	return out
}

func getText(t *testing.T, curl, url string) []byte {
	t.Helper()
	if curl == "" {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return b
	}
	out, err := exec.Command(curl, "-sS", "--fail-with-body", url).Output()
	if err != nil {
		t.Fatalf("curl %s: %v", url, err)
	}
	return out
}

// The check: curl's requests (JSON-RPC and HTTP) and a gRPC
// client's recorded through tandem record in front of the sample's build
// a, replayed as compat cases to both builds, are classified exactly as
// the same requests listed as cases are, and so find the planted
// differences (docs/sample.md: status, byte-order, value, type); the
// Authorization header is redacted in the file.
func TestRecordReplayFindsPlantedDifferences(t *testing.T) {
	tooltest.Long(t)
	t.Parallel() // child processes; asserts answers, not speed
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Log("curl is not installed: the HTTP requests are sent with net/http")
		curl = ""
	}
	up, err := sample.Start(context.Background(), sample.Options{Build: sample.BuildA, DataDir: t.TempDir(), Blocks: 50, Work: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	for deadline := time.Now().Add(time.Minute); !up.Indexed(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the upstream was not indexed within a minute")
		}
	}
	web := startRecord(t, "http://"+up.HTTPAddr())
	rpc := startRecord(t, "http://"+up.GRPCAddr())

	// JSON-RPC and HTTP through the recorder, with curl
	url := "http://" + web.addr + "/"
	call := func(method, params string, headers ...string) []byte {
		return postJSON(t, curl, url, `{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":`+params+`}`, headers...)
	}
	call("getbalance", `["tz1000014"]`, "Authorization", "Bearer s3cret-token")
	call("getbalance", `["tz1000007"]`)
	call("getbalance", `["not-an-address"]`)
	var block struct {
		Result struct {
			Tx []string `json:"tx"`
		} `json:"result"`
	}
	if err := json.Unmarshal(call("getblock", `[3]`), &block); err != nil || len(block.Result.Tx) == 0 {
		t.Fatalf("getblock 3 through the recorder: %v %+v", err, block)
	}
	txid := block.Result.Tx[0]
	call("getrawtransaction", `["`+txid+`", 0]`)
	call("getrawtransaction", `["zz", 0]`)
	if got := getText(t, curl, url+"ping"); !bytes.HasPrefix(got, []byte("pong")) {
		t.Fatalf("GET /ping through the recorder: %q", got)
	}

	// gRPC through the recorder, with grpc-go
	cc, err := grpc.NewClient("passthrough:///"+rpc.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ledger := ledgerpb.NewLedgerClient(cc)
	if _, err := ledger.GetBlock(ctx, &ledgerpb.BlockRequest{Height: 3}); err != nil {
		t.Fatal(err)
	}
	st, err := ledger.GetBlockRange(ctx, &ledgerpb.BlockRange{Start: 0, End: 4})
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; ; n++ {
		if _, err := st.Recv(); err == io.EOF {
			if n != 5 {
				t.Fatalf("GetBlockRange 0…4: %d blocks", n)
			}
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ledger.GetBalance(ctx, &ledgerpb.BalanceRequest{Address: "tz1000007"}); err != nil {
		t.Fatal(err)
	}
	if _, err := ledger.GetTransaction(ctx, &ledgerpb.TxRequest{Txid: []byte{0, 0, 0}}); err == nil {
		t.Fatal("GetTransaction of a 3-byte id answered")
	}
	cc.Close()

	code, webExs := web.stop(t, syscall.SIGINT)
	code2, rpcExs := rpc.stop(t, syscall.SIGINT)
	if code != 0 || code2 != 0 || len(webExs) != 7 || len(rpcExs) != 4 {
		t.Fatalf("recorders: exit %d and %d, %d and %d exchanges; want 0, 0, 7 and 4\n%s\n%s", code, code2, len(webExs), len(rpcExs), web.log(), rpc.log())
	}
	data, _ := os.ReadFile(web.out)
	if bytes.Contains(data, []byte("s3cret-token")) || webExs[0].Headers.Get("Authorization") != record.Marker {
		t.Errorf("the Authorization header is not redacted: %v", webExs[0].Headers)
	}

	// replayed to both builds, beside the same requests listed as cases
	studyPath := compatStudy(t, fmt.Sprintf(`    - {call: balance, vary: {addr: [tz1000014, tz1000007, not-an-address]}}
    - {call: getblock, vary: {h: [3]}}
    - {call: rawtx, vary: {txid: [%s, zz]}}
    - {call: ping}
    - {call: block, vary: {h: [3]}}
    - {call: range}
    - {call: gbalance, vary: {addr: [tz1000007]}}
    - {call: gtx, vary: {txid: [AAAA]}}
  recordings: [%q, %q]
`, txid, web.out, rpc.out))
	extraCalls := `  getblock: {jsonrpc: {method: getblock, params: ["${h}"]}}
  rawtx: {jsonrpc: {method: getrawtransaction, params: ["${txid}", 0]}}
  ping: {http: {path: /ping}}
  range: {grpc: {method: tandem.sample.v1.Ledger/GetBlockRange, request: {start: 0, end: 4}}}
  gbalance: {grpc: {method: tandem.sample.v1.Ledger/GetBalance, request: {address: "${addr}"}}}
  gtx: {grpc: {method: tandem.sample.v1.Ledger/GetTransaction, request: {txid: "${txid}"}}}
`
	src, _ := os.ReadFile(studyPath)
	os.WriteFile(studyPath, bytes.Replace(src, []byte("calls:\n"), []byte("calls:\n"+extraCalls), 1), 0o644)

	if code, stdout, stderr := tandem(t, "validate", studyPath); code != 0 || !strings.Contains(stdout, "22 compat cases") {
		t.Fatalf("validate: exit %d\n%s\n%s", code, stdout, stderr)
	}
	out := t.TempDir()
	if code, stdout, stderr := tandem(t, "run", studyPath, "--only", "compat", "--pin=false", "--out", out); code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	res, err := results.Read(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	cases := res.Compat.Cases
	if len(cases) != 22 {
		t.Fatalf("%d cases; want 11 listed and 11 recorded", len(cases))
	}
	listed, recorded := cases[:11], cases[11:]
	found := map[string]bool{}
	for i, rc := range recorded {
		lc := listed[i]
		if rc.Recording == nil || lc.Recording != nil {
			t.Fatalf("case %d: listed %+v, recorded %+v", i, lc.Recording, rc.Recording)
		}
		if rc.Agreement != lc.Agreement || !slices.Equal(kinds(rc), kinds(lc)) || !slices.Equal(statuses(rc), statuses(lc)) {
			t.Errorf("%s#%d (%s): %s %v %v; the listed case %s %v: %s %v %v", rc.Recording.File, rc.Recording.Exchange, rc.Call,
				rc.Agreement, kinds(rc), statuses(rc), lc.Call, lc.Vars, lc.Agreement, kinds(lc), statuses(lc))
		}
		for _, k := range kinds(rc) {
			found[rc.Recording.Protocol+" "+k] = true
		}
	}
	// the planted differences, each found by the recording
	for _, want := range []string{"jsonrpc status ", "jsonrpc value tx_count", "jsonrpc type ", "grpc byte-order prev_hash",
		"grpc byte-order [1].prev_hash", "grpc value tx_count", "grpc status "} {
		if !found[want] {
			t.Errorf("the recorded cases do not find %q; they found %v", want, found)
		}
	}
}

// kinds are a case's differences as "KIND PATH", in order.
func kinds(cs results.Case) []string {
	var out []string
	for _, d := range cs.Differences {
		out = append(out, d.Kind+" "+d.Path)
	}
	return out
}

func statuses(cs results.Case) []string {
	var out []string
	for _, a := range cs.Answers {
		out = append(out, a.Target+":"+a.Status)
	}
	return out
}
