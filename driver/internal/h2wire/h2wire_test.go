package h2wire

import (
	"bytes"
	"io"
	"slices"
	"testing"

	"github.com/tandem-bench/tandem/load"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// plain is a Protocol of GET / whose answers succeed with a 200.
type plain struct{ e Encoder }

func (p *plain) Request(uint64, *Stream) ([]byte, []byte, error) {
	p.e.Reset()
	p.e.Field(":method", "GET")
	p.e.Field(":path", "/")
	return p.e.Bytes(), nil, nil
}
func (p *plain) Header(*Stream, hpack.HeaderField) {}
func (p *plain) Data(*Stream, []byte)              {}
func (p *plain) Streams() bool                     { return false }
func (p *plain) Answer(st *Stream) load.Result {
	if st.Status != 200 {
		return load.Result{Status: "not 200"}
	}
	return load.Result{Units: 1}
}

// answer is a server's frames answering stream id: its headers (status,
// with the dynamic table) and a body in one DATA frame, ending the stream.
func answer(enc *hpack.Encoder, hb *bytes.Buffer, id uint32, status string, body string) []byte {
	hb.Reset()
	enc.WriteField(hpack.HeaderField{Name: ":status", Value: status})
	enc.WriteField(hpack.HeaderField{Name: "x-served-by", Value: "server-7"})
	var a appender
	fr := http2.NewFramer(&a, nil)
	fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: hb.Bytes(), EndHeaders: true, EndStream: body == ""})
	if body != "" {
		fr.WriteData(id, true, []byte(body))
	}
	return a.b
}

// Encoded blocks leave the HPACK tables alone: the same block decodes to
// the same fields every time, and the server's decoder adds nothing.
func TestEncoderStateless(t *testing.T) {
	var e Encoder
	e.Reset()
	e.Field(":method", "POST")
	e.Field(":path", "/a/b")
	e.Field("x-custom", "value")
	block := e.WithLength(e.Bytes(), 42)
	var got []string
	dec := hpack.NewDecoder(4096, func(f hpack.HeaderField) { got = append(got, f.Name+"="+f.Value) })
	for range 3 {
		got = got[:0]
		if _, err := dec.Write(block); err != nil {
			t.Fatal(err)
		}
		want := []string{":method=POST", ":path=/a/b", "x-custom=value", "content-length=42"}
		if !slices.Equal(got, want) {
			t.Fatalf("decoded %q, want %q", got, want)
		}
	}
	// the first entry of the dynamic table (index 62): there is none
	if _, err := dec.Write([]byte{0x80 | 62}); err == nil {
		t.Fatal("the blocks added to the decoder's dynamic table")
	}
}

// A connection frames its streams' answers whatever their order, answers
// the server's settings and pings, and decodes every header block (an
// abandoned stream's too) so that its table follows the server's.
func TestConn(t *testing.T) {
	c := NewConn(&plain{})
	var out []byte
	for s := range 3 {
		var err error
		if out, err = c.AppendRequest(out, uint64(s), s); err != nil {
			t.Fatal(err)
		}
	}
	out, _ = c.Cancel(out[:0], 1) // stream 3
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	var in appender
	sf := http2.NewFramer(&in, nil)
	sf.WriteSettings(http2.Setting{ID: http2.SettingMaxFrameSize, Val: 1 << 20})
	sf.WritePing(false, [8]byte{7})
	in.b = append(in.b, answer(enc, &hb, 5, "200", "x")...)
	in.b = append(in.b, answer(enc, &hb, 3, "200", "")...) // abandoned: decoded, not framed
	in.b = append(in.b, answer(enc, &hb, 1, "503", "")...)
	var slots []int
	var results []load.Result
	b := in.b
	out = out[:0]
	for len(b) > 0 {
		fr, o, err := c.Next(b, out)
		if err != nil {
			t.Fatal(err)
		}
		if fr.N == 0 {
			t.Fatalf("incomplete with %d bytes left", len(b))
		}
		out = o
		if fr.Slot >= 0 {
			slots = append(slots, fr.Slot)
			results = append(results, fr.Result)
		}
		b = b[fr.N:]
	}
	if !slices.Equal(slots, []int{2, 0}) || results[0].Units != 1 || results[1].Status != "not 200" {
		t.Fatalf("slots %v results %v; want slot 2 ok, slot 0 not 200", slots, results)
	}
	// the replies: a settings ACK and a ping ACK
	rf := http2.NewFramer(io.Discard, bytes.NewReader(out))
	var kinds []string
	for {
		f, err := rf.ReadFrame()
		if err != nil {
			break
		}
		kinds = append(kinds, f.Header().Type.String())
		if !f.Header().Flags.Has(http2.FlagSettingsAck) {
			t.Errorf("%v not an ACK", f)
		}
	}
	if !slices.Equal(kinds, []string{"SETTINGS", "PING"}) {
		t.Errorf("replies %v; want a SETTINGS and a PING ACK", kinds)
	}
}

// FuzzNext frames what a server might send with Conn and with
// x/net/http2's Framer, frame by frame: Conn takes exactly the frames the
// library reads (same lengths), fails where the library fails, asks for
// more where a frame is incomplete, and frames each request's answer at
// most once, in its own slot.
func FuzzNext(f *testing.F) {
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	var settings appender
	sf := http2.NewFramer(&settings, nil)
	sf.WriteSettings(http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: 100}, http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1 << 20})
	sf.WriteWindowUpdate(0, 1<<20)
	sf.WritePing(false, [8]byte{1, 2, 3})
	f.Add(append(append(settings.b, answer(enc, &hb, 1, "200", "ok")...), answer(enc, &hb, 3, "404", "")...))
	f.Add(answer(enc, &hb, 3, "200", ""))
	f.Add(append(answer(enc, &hb, 1, "100", ""), answer(enc, &hb, 1, "200", "x")...))
	f.Add([]byte{0, 0, 4, 3, 0, 0, 0, 0, 1, 0, 0, 0, 8}) // RST_STREAM 1 CANCEL
	f.Fuzz(func(t *testing.T, b []byte) {
		c := NewConn(&plain{})
		c.Greeting(nil)
		inFlight := map[int]bool{}
		for s := range 3 { // streams 1, 3, 5 in slots 0, 1, 2
			if _, err := c.AppendRequest(nil, uint64(s), s); err != nil {
				t.Fatal(err)
			}
			inFlight[s] = true
		}
		lib := http2.NewFramer(io.Discard, bytes.NewReader(b))
		lib.SetMaxReadFrameSize(MaxFrame)
		for len(b) > 0 {
			fr, _, err := c.Next(b, nil)
			lf, lerr := lib.ReadFrame()
			switch {
			case fr.N > len(b):
				t.Fatalf("framed %d bytes of %d", fr.N, len(b))
			case err == nil && fr.N == 0:
				if lerr == nil {
					t.Fatalf("asked for more where the library read a frame: %v", lf)
				}
				return
			case err != nil:
				return // stricter than the library (hpack, a push) is fine
			case lerr != nil:
				t.Fatalf("took %d bytes where the library failed: %v", fr.N, lerr)
			case fr.N != 9+int(lf.Header().Length):
				t.Fatalf("took %d bytes of a %d-byte frame", fr.N, 9+lf.Header().Length)
			}
			if fr.Slot >= 0 {
				if !inFlight[fr.Slot] {
					t.Fatalf("an answer in slot %d, not in flight", fr.Slot)
				}
				delete(inFlight, fr.Slot)
			}
			b = b[fr.N:]
		}
	})
}

// A GOAWAY closes the connection to new streams: those above its last
// stream are the server's to leave unanswered (Unanswered, once), those
// up to it are still answered.
func TestGoAway(t *testing.T) {
	c := NewConn(&plain{})
	for s := range 3 { // streams 1, 3, 5
		if _, err := c.AppendRequest(nil, uint64(s), s); err != nil {
			t.Fatal(err)
		}
	}
	var in appender
	sf := http2.NewFramer(&in, nil)
	sf.WriteGoAway(3, http2.ErrCodeNo, nil)
	var hb bytes.Buffer
	in.b = append(in.b, answer(hpack.NewEncoder(&hb), &hb, 3, "200", "")...)
	fr, _, err := c.Next(in.b, nil)
	if err != nil || !fr.Close || fr.Slot != -1 {
		t.Fatalf("GOAWAY: %+v, %v; want Close", fr, err)
	}
	if u := c.Unanswered(); !slices.Equal(u, []int{2}) {
		t.Errorf("unanswered slots %v; want [2] (stream 5)", u)
	}
	if u := c.Unanswered(); len(u) != 0 {
		t.Errorf("unanswered again: %v", u)
	}
	if fr, _, err := c.Next(in.b[fr.N:], nil); err != nil || fr.Slot != 1 || fr.Result.Units != 1 {
		t.Errorf("stream 3 after the GOAWAY: %+v, %v; want its answer in slot 1", fr, err)
	}
}

// Past the server's limit of streams a request waits (ErrFull); streams it
// refused unprocessed (REFUSED_STREAM, sent before its settings came) are
// sent again, first, as its answers make room.
func TestStreamLimit(t *testing.T) {
	c := NewConn(&plain{})
	for s := range 3 { // streams 1, 3, 5
		if _, err := c.AppendRequest(nil, uint64(s), s); err != nil {
			t.Fatal(err)
		}
	}
	var in appender
	sf := http2.NewFramer(&in, nil)
	sf.WriteSettings(http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: 1})
	sf.WriteRSTStream(3, http2.ErrCodeRefusedStream)
	sf.WriteRSTStream(5, http2.ErrCodeRefusedStream)
	var hb bytes.Buffer
	in.b = append(in.b, answer(hpack.NewEncoder(&hb), &hb, 1, "200", "")...)
	var out []byte
	var slots []int
	b := in.b
	for len(b) > 0 {
		fr, o, err := c.Next(b, out)
		if err != nil {
			t.Fatal(err)
		}
		out = o
		if fr.Slot >= 0 {
			slots = append(slots, fr.Slot)
		}
		if _, err := c.AppendRequest(nil, 9, 3); err != load.ErrFull {
			t.Fatalf("a new request beside the limit or the refused: %v; want ErrFull", err)
		}
		b = b[fr.N:]
	}
	if !slices.Equal(slots, []int{0}) {
		t.Errorf("answers in slots %v; want [0]", slots)
	}
	// sent again: stream 7 for slot 1 (the refused request first), once
	// stream 1's answer made room; slot 2 still waits
	rf := http2.NewFramer(io.Discard, bytes.NewReader(out))
	var again []uint32
	for {
		f, err := rf.ReadFrame()
		if err != nil {
			break
		}
		if h, ok := f.(*http2.HeadersFrame); ok {
			again = append(again, h.StreamID)
		}
	}
	if !slices.Equal(again, []uint32{7}) || len(c.refused) != 1 || c.refused[0].slot != 2 {
		t.Errorf("sent again %v, still refused %v; want [7] and slot 2 waiting", again, c.refused)
	}
}

// A connection whose stream ids ran out takes no more requests
// (load.ErrSpent: the loop retires it and dials anew); the last id is
// still used.
func TestStreamIDsSpent(t *testing.T) {
	c := NewConn(&plain{})
	c.nextID = maxStream - 2
	var ids []uint32
	for s := range 3 {
		b, err := c.AppendRequest(nil, uint64(s), s)
		if s == 2 {
			if err != load.ErrSpent || len(b) != 0 {
				t.Fatalf("a request past stream id %d: %v, %d bytes; want load.ErrSpent and nothing", maxStream, err, len(b))
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		f, err := http2.NewFramer(io.Discard, bytes.NewReader(b)).ReadFrame()
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, f.Header().StreamID)
	}
	if !slices.Equal(ids, []uint32{maxStream - 2, maxStream}) {
		t.Errorf("stream ids %v; want the last two, %d and %d", ids, maxStream-2, maxStream)
	}
}

// A request the server refused when no stream id is left to send it again
// is left to the next connection: the frame closes this one and the slot
// is Unanswered, not failed.
func TestRefusedWhenSpent(t *testing.T) {
	c := NewConn(&plain{})
	c.nextID = maxStream - 2
	for s := range 2 { // streams maxStream-2 and maxStream
		if _, err := c.AppendRequest(nil, uint64(s), s); err != nil {
			t.Fatal(err)
		}
	}
	var in appender
	http2.NewFramer(&in, nil).WriteRSTStream(maxStream, http2.ErrCodeRefusedStream)
	fr, _, err := c.Next(in.b, nil)
	if err != nil || !fr.Close || fr.Slot != -1 || fr.N != len(in.b) {
		t.Fatalf("frame %+v, %v; want the whole frame read, no answer, the connection closing, no error", fr, err)
	}
	if u := c.Unanswered(); !slices.Equal(u, []int{1}) {
		t.Errorf("unanswered %v; want [1]", u)
	}
}
