package record

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// MaxHAR is the largest HAR file imported.
const MaxHAR = 256 << 20

// HAROptions configures ReadHAR.
type HAROptions struct {
	// Name names the file in errors.
	Name string
	// Origin keeps only the entries to this scheme://host[:port]; default
	// the origin of the first HTTP entry.
	Origin string
	// MaxBody is the most bytes of a request body kept; default
	// DefaultMaxBody.
	MaxBody int
	// Rules redact each entry.
	Rules Rules
}

// HARStats counts a HAR file's entries by what became of them.
type HARStats struct {
	Imported, NotHTTP, OtherOrigin int
}

// The parts of HAR 1.2 an exchange is made of.
type harFile struct {
	Log *struct {
		Entries []harEntry `json:"entries"`
	} `json:"log"`
}

type harEntry struct {
	StartedDateTime string  `json:"startedDateTime"`
	Time            float64 `json:"time"`
	Request         struct {
		Method      string    `json:"method"`
		URL         string    `json:"url"`
		HTTPVersion string    `json:"httpVersion"`
		Headers     []harPair `json:"headers"`
		PostData    *struct {
			MimeType string `json:"mimeType"`
			Text     string `json:"text"`
			Encoding string `json:"encoding"`
		} `json:"postData"`
	} `json:"request"`
	Response struct {
		Status  int       `json:"status"`
		Headers []harPair `json:"headers"`
		Content struct {
			Size     int64   `json:"size"`
			MimeType string  `json:"mimeType"`
			Text     *string `json:"text"`
			Encoding string  `json:"encoding"`
		} `json:"content"`
	} `json:"response"`
}

type harPair struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// ReadHAR imports the HTTP entries of a HAR 1.2 file of one origin as a
// recording: its header and its exchanges in the order they started.
// Entries that are not HTTP (ws:, data:, …) or go to another origin are
// skipped and counted; an entry that cannot be an exchange is an error
// that names its index.
func ReadHAR(r io.Reader, o HAROptions) (Header, []Exchange, HARStats, error) {
	var st HARStats
	if o.MaxBody == 0 {
		o.MaxBody = DefaultMaxBody
	}
	data, err := io.ReadAll(io.LimitReader(r, MaxHAR+1))
	if err != nil {
		return Header{}, nil, st, fmt.Errorf("%s: %w", o.Name, err)
	}
	if len(data) > MaxHAR {
		return Header{}, nil, st, fmt.Errorf("%s: larger than %d MiB", o.Name, MaxHAR>>20)
	}
	var h harFile
	if err := json.Unmarshal(data, &h); err != nil {
		return Header{}, nil, st, harSyntax(o.Name, data, err)
	}
	if h.Log == nil {
		return Header{}, nil, st, fmt.Errorf("%s: no log object: not a HAR file", o.Name)
	}
	origin := o.Origin
	var exs []Exchange
	var starts []time.Time
	for i := range h.Log.Entries {
		e := &h.Log.Entries[i]
		u, err := url.Parse(e.Request.URL)
		if err != nil {
			return Header{}, nil, st, fmt.Errorf("%s: log.entries[%d]: request.url %q: %w", o.Name, i, e.Request.URL, err)
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			st.NotHTTP++
			continue
		}
		if origin == "" {
			origin = u.Scheme + "://" + u.Host
		}
		if !strings.EqualFold(u.Scheme+"://"+u.Host, strings.TrimSuffix(origin, "/")) {
			st.OtherOrigin++
			continue
		}
		started, ex, err := harExchange(e, u, o)
		if err != nil {
			return Header{}, nil, st, fmt.Errorf("%s: log.entries[%d]: %w", o.Name, i, err)
		}
		exs = append(exs, ex)
		starts = append(starts, started)
	}
	if len(exs) == 0 {
		return Header{}, nil, st, fmt.Errorf("%s: no HTTP entries to import (%d not HTTP, %d of other origins than %q)", o.Name, st.NotHTTP, st.OtherOrigin, origin)
	}
	first := slices.MinFunc(starts, func(a, b time.Time) int { return a.Compare(b) })
	for i := range exs {
		exs[i].Offset = starts[i].Sub(first)
	}
	slices.SortStableFunc(exs, func(a, b Exchange) int { return cmp.Compare(a.Offset, b.Offset) })
	st.Imported = len(exs)
	return Header{Format: Format, Version: Version, Upstream: strings.TrimSuffix(origin, "/"), Start: first.UTC(),
		MaxBody: o.MaxBody, SecretsKept: o.Rules.Keep, Source: "har"}, exs, st, nil
}

// harExchange makes one entry an exchange, and says when it started.
func harExchange(e *harEntry, u *url.URL, o HAROptions) (time.Time, Exchange, error) {
	started, err := time.Parse(time.RFC3339Nano, e.StartedDateTime)
	if err != nil {
		return time.Time{}, Exchange{}, fmt.Errorf("startedDateTime %q: want an ISO 8601 time such as 2026-01-02T15:04:05.000Z", e.StartedDateTime)
	}
	ex := Exchange{Method: e.Request.Method, Path: u.RequestURI(), Duration: time.Duration(max(e.Time, 0) * float64(time.Millisecond))}
	if ex.Headers, err = harHeaders(e.Request.Headers); err != nil {
		return time.Time{}, Exchange{}, fmt.Errorf("request.headers: %w", err)
	}
	if pd := e.Request.PostData; pd != nil {
		body := []byte(pd.Text)
		if pd.Encoding == "base64" {
			if body, err = base64.StdEncoding.DecodeString(pd.Text); err != nil {
				return time.Time{}, Exchange{}, fmt.Errorf("request.postData.text: not base64: %w", err)
			}
		}
		ex.BodySize = int64(len(body))
		ex.Body = body[:min(len(body), o.MaxBody)]
		if ex.Headers.Get("Content-Type") == "" && pd.MimeType != "" {
			if ex.Headers == nil {
				ex.Headers = http.Header{}
			}
			ex.Headers.Set("Content-Type", pd.MimeType)
		}
	}
	major := 1
	if v := strings.ToLower(e.Request.HTTPVersion); v == "h2" || strings.HasPrefix(v, "http/2") {
		major = 2
	}
	ex.Protocol = Detect(major, ex.Headers.Get("Content-Type"), ex.Body)
	if err := harAnswer(e, &ex); err != nil {
		return time.Time{}, Exchange{}, err
	}
	o.Rules.Apply(&ex)
	if err := ex.check(o.MaxBody); err != nil {
		return time.Time{}, Exchange{}, err
	}
	return started, ex, nil
}

// harAnswer fills in the answer of an entry.
func harAnswer(e *harEntry, ex *Exchange) error {
	resp := &e.Response
	if resp.Status == 0 {
		ex.Error = "no answer (the HAR's status is 0)"
		return nil
	}
	ex.Status = resp.Status
	hs, err := harHeaders(resp.Headers)
	if err != nil {
		return fmt.Errorf("response.headers: %w", err)
	}
	for _, k := range []string{"Content-Type", "Content-Encoding", "Grpc-Encoding"} {
		if vs := hs.Values(k); len(vs) > 0 {
			if ex.AnswerHeaders == nil {
				ex.AnswerHeaders = http.Header{}
			}
			ex.AnswerHeaders[k] = vs
		}
	}
	c := &resp.Content
	if c.Text == nil {
		ex.AnswerSize = max(c.Size, 0)
		return nil
	}
	body := []byte(*c.Text)
	if c.Encoding == "base64" {
		if body, err = base64.StdEncoding.DecodeString(*c.Text); err != nil {
			return fmt.Errorf("response.content.text: not base64: %w", err)
		}
	}
	sum := sha256.Sum256(body)
	ex.Digest, ex.AnswerSize = hex.EncodeToString(sum[:]), int64(len(body))
	return nil
}

// harHeaders turns HAR's name/value pairs into end-to-end headers: HTTP/2
// pseudo-headers (:authority, …) and hop-by-hop headers left out.
func harHeaders(pairs []harPair) (http.Header, error) {
	var h http.Header
	for _, p := range pairs {
		if strings.HasPrefix(p.Name, ":") {
			continue
		}
		if p.Name == "" {
			return nil, errors.New("a header without a name")
		}
		if h == nil {
			h = http.Header{}
		}
		h.Add(p.Name, p.Value)
	}
	return requestHeaders(h), nil
}

// harSyntax locates a JSON error in a HAR file at its line and column.
func harSyntax(name string, data []byte, err error) error {
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	if off < 0 {
		return fmt.Errorf("%s: %w", name, err)
	}
	off = min(off, int64(len(data)))
	line := bytes.Count(data[:off], []byte("\n")) + 1
	col := int(off) - bytes.LastIndexByte(data[:off], '\n') - 1
	return fmt.Errorf("%s:%d:%d: not a HAR file: %w", name, line, max(col, 1), err)
}
