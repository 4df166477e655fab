package record

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestReadHAR(t *testing.T) {
	f, err := os.Open("testdata/sample.har")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, exs, st, err := ReadHAR(f, HAROptions{Name: "sample.har"})
	if err != nil {
		t.Fatal(err)
	}
	if st != (HARStats{Imported: 3, NotHTTP: 1, OtherOrigin: 1}) {
		t.Errorf("stats %+v; want 3 imported, 1 not HTTP, 1 of another origin", st)
	}
	wantStart := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	if h.Upstream != "http://127.0.0.1:8080" || !h.Start.Equal(wantStart) || h.Source != "har" || h.MaxBody != DefaultMaxBody {
		t.Errorf("header %+v", h)
	}
	if len(exs) != 3 {
		t.Fatalf("%d exchanges; want 3", len(exs))
	}
	// in the order they started: the JSON-RPC call began first
	rpc, ping, blocked := exs[0], exs[1], exs[2]
	body := `{"jsonrpc":"2.0","id":7,"method":"getbalance","params":["tz1000014"]}`
	if rpc.Protocol != JSONRPC || rpc.Method != "POST" || rpc.Path != "/" || string(rpc.Body) != body || rpc.BodySize != int64(len(body)) ||
		rpc.Offset != 0 || rpc.Duration != 3*time.Millisecond || rpc.Status != 200 {
		t.Errorf("JSON-RPC entry %+v", rpc)
	}
	wantHeaders := http.Header{"Authorization": {Marker}, "Content-Type": {"application/json"}} // Connection is hop-by-hop
	if !reflect.DeepEqual(rpc.Headers, wantHeaders) || !reflect.DeepEqual(rpc.Redacted, []string{"header Authorization"}) {
		t.Errorf("headers %v (redacted %q); want %v", rpc.Headers, rpc.Redacted, wantHeaders)
	}
	pong := sha256.Sum256([]byte("pong"))
	if ping.Protocol != H2 || ping.Path != "/ping?x=1" || ping.Offset != 500*time.Millisecond || ping.Duration != 12500*time.Microsecond ||
		ping.Digest != hex.EncodeToString(pong[:]) || ping.AnswerSize != 4 || ping.Headers.Get(":authority") != "" || ping.Headers.Get("Cookie") != Marker {
		t.Errorf("HTTP/2 entry %+v", ping)
	}
	if blocked.Status != 0 || blocked.Error == "" || blocked.Duration != 0 {
		t.Errorf("an entry without an answer: %+v", blocked)
	}
	// another origin chosen: only its entry
	f.Seek(0, 0)
	h, exs, _, err = ReadHAR(f, HAROptions{Name: "sample.har", Origin: "https://cdn.example"})
	if err != nil || len(exs) != 1 || exs[0].Path != "/lib.js" || h.Upstream != "https://cdn.example" {
		t.Errorf("origin https://cdn.example: %v, %+v", err, exs)
	}
}

func TestReadHARErrors(t *testing.T) {
	entry := func(started, method, url, headers string) string {
		return `{"startedDateTime": "` + started + `", "time": 1, "request": {"method": "` + method + `", "url": "` + url +
			`", "httpVersion": "HTTP/1.1", "headers": ` + headers + `}, "response": {"status": 200, "headers": [], "content": {"size": 0}}}`
	}
	good := entry("2026-03-01T12:00:00Z", "GET", "http://h/", "[]")
	cases := []struct{ name, file, want string }{
		{"not JSON", "{\n  \"log\": {\n    \"entries\": [}\n}", "x.har:3:17: not a HAR file"},
		{"no log", `{"entries": []}`, "x.har: no log object"},
		{"wrong type", "{\"log\": {\"entries\": 5}}", "x.har:1:"},
		{"bad time", `{"log": {"entries": [` + good + `, ` + entry("yesterday", "GET", "http://h/", "[]") + `]}}`, `x.har: log.entries[1]: startedDateTime "yesterday"`},
		{"bad method", `{"log": {"entries": [` + entry("2026-03-01T12:00:00Z", "GE T", "http://h/", "[]") + `]}}`, `x.har: log.entries[0]: method "GE T"`},
		{"bad url", `{"log": {"entries": [` + good + `, ` + entry("2026-03-01T12:00:00Z", "GET", "http://h/%zz", "[]") + `]}}`, "x.har: log.entries[1]: request.url"},
		{"bad header", `{"log": {"entries": [` + entry("2026-03-01T12:00:00Z", "GET", "http://h/", `[{"name": "a b", "value": "x"}]`) + `]}}`, `x.har: log.entries[0]: headers: bad header name "a b"`},
		{"nameless header", `{"log": {"entries": [` + entry("2026-03-01T12:00:00Z", "GET", "http://h/", `[{"name": "", "value": "x"}]`) + `]}}`, "x.har: log.entries[0]: request.headers: a header without a name"},
		{"nothing to import", `{"log": {"entries": []}}`, "x.har: no HTTP entries to import"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, _, err := ReadHAR(strings.NewReader(c.file), HAROptions{Name: "x.har"})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v; want %q", err, c.want)
			}
		})
	}
}
