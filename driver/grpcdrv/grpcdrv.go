// Package grpcdrv calls gRPC methods whose types are known only at run time:
// from the server's reflection service or from .proto files compiled in
// process. The request is encoded once, from JSON, and sent as raw bytes on
// every call, so the hot path does no protobuf work; a request whose
// values vary (Options.Vary) is rendered as JSON and encoded for each
// request number instead. Calls go through grpc-go, or, for load's event
// loop, over package h2wire's HTTP/2 (Caller.Wire).
package grpcdrv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jhump/protoreflect/grpcreflect"
	"github.com/tandem-bench/tandem/driver/internal/vary"
	"github.com/tandem-bench/tandem/driver/quickack"
	"github.com/tandem-bench/tandem/load"
	"github.com/tandem-bench/tandem/protofiles"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// Options describes one gRPC call.
type Options struct {
	// Addr is host:port.
	Addr string
	// Method is package.Service/Method (a leading slash is allowed).
	Method string
	// Request is the request message in protobuf's JSON form; empty means {}.
	Request []byte
	// Proto lists .proto files to compile instead of asking the server's
	// reflection service; ImportPaths are searched for them and their imports.
	Proto, ImportPaths []string
	// Metadata is sent with every call.
	Metadata map[string]string
	// QuickACK makes the client acknowledge every segment at once (see
	// package quickack); for diagnosis, not for load.
	QuickACK bool
	// Connections, if positive, is how many connections the Conns of all
	// Dials share, handed out in turn (gRPC carries each call as a stream,
	// many at once on one connection); zero: each Dial its own.
	Connections int
	// Vary, if set, holds the parts rendered for each request number: the
	// request (protobuf's JSON form, in place of Request) and metadata
	// (over Metadata).
	Vary *vary.Parts
}

// Caller calls one method. It resolves the method's descriptor once, on the
// first successful Dial, and encodes the request then.
type Caller struct {
	opts    Options
	service string
	method  string
	path    string
	md      metadata.MD

	mu      sync.Mutex
	desc    protoreflect.MethodDescriptor
	frame   []byte
	stream  bool
	shared  []*sharedConn // with Options.Connections
	turn    int
	dialing sync.Mutex // held while a shared connection is chosen or opened
}

// sharedConn is a connection that several Conns use.
type sharedConn struct {
	cc   *grpc.ClientConn
	refs int
}

// New checks opts and returns a Caller. With Proto files it compiles them
// now, so a proto that does not compile or lacks the method fails here.
func New(ctx context.Context, opts Options) (*Caller, error) {
	full := strings.TrimPrefix(opts.Method, "/")
	svc, m, ok := strings.Cut(full, "/")
	if !ok || svc == "" || m == "" {
		return nil, fmt.Errorf("method %q: want package.Service/Method", opts.Method)
	}
	if !opts.Vary.Varies() {
		opts.Vary = nil
	}
	c := &Caller{opts: opts, service: svc, method: m, path: "/" + full, md: metadata.New(opts.Metadata)}
	if len(opts.Proto) > 0 {
		md, err := compile(ctx, opts.Proto, opts.ImportPaths, svc, m)
		if err != nil {
			return nil, err
		}
		if err := c.setDesc(md); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func compile(ctx context.Context, files, importPaths []string, svc, method string) (protoreflect.MethodDescriptor, error) {
	compiled, err := protofiles.Compile(ctx, files, importPaths)
	if err != nil {
		return nil, fmt.Errorf("compile %s: %w", strings.Join(files, ", "), err)
	}
	return protofiles.Method(compiled, svc, method)
}

// setDesc encodes the request for method md once.
func (c *Caller) setDesc(md protoreflect.MethodDescriptor) error {
	if md.IsStreamingClient() {
		return fmt.Errorf("method %s is client-streaming: only unary and server-streaming calls are supported", md.FullName())
	}
	req := dynamicpb.NewMessage(md.Input())
	body := c.opts.Request
	switch v := c.opts.Vary; {
	case v != nil && v.Body != nil && v.Body.UsesSlots():
		// a flow's capture has no value yet: each request is checked as
		// it is rendered and encoded, and none is fixed
		body = nil
	case v != nil && v.Body != nil:
		// request 0, so that a request that does not fit the method's type
		// fails here rather than every request
		q := v.NewRequest()
		if err := q.Render(0); err != nil {
			return err
		}
		body = q.Body
	}
	if len(body) == 0 {
		body = []byte("{}")
	}
	if err := protojson.Unmarshal(body, req); err != nil {
		return fmt.Errorf("request for %s: %w", md.FullName(), err)
	}
	frame, err := proto.MarshalOptions{Deterministic: true}.Marshal(req)
	if err != nil {
		return fmt.Errorf("encode request: %w", err)
	}
	c.mu.Lock()
	if c.desc == nil { // a concurrent Dial may have resolved it first
		c.desc, c.frame, c.stream = md, frame, md.IsStreamingServer()
	}
	c.mu.Unlock()
	return nil
}

func (c *Caller) resolve(ctx context.Context, cc *grpc.ClientConn) error {
	c.mu.Lock()
	done := c.desc != nil
	c.mu.Unlock()
	if done {
		return nil
	}
	rc := grpcreflect.NewClientAuto(ctx, cc)
	defer rc.Reset()
	sd, err := rc.ResolveService(c.service)
	if err != nil {
		if status.Code(err) == codes.Unimplemented {
			return &NoReflectionError{Err: err}
		}
		return fmt.Errorf("reflection: service %s: %w", c.service, err)
	}
	md := sd.FindMethodByName(c.method)
	if md == nil {
		return fmt.Errorf("reflection: service %s has no method %s", c.service, c.method)
	}
	return c.setDesc(md.UnwrapMethod())
}

// NoReflectionError is a server that answered but does not serve gRPC
// reflection, for a call given no .proto files.
type NoReflectionError struct{ Err error }

func (e *NoReflectionError) Error() string {
	return "the server does not serve gRPC reflection: give the service's .proto files (proto: in a study, --proto in tandem load)"
}

func (e *NoReflectionError) Unwrap() error { return e.Err }

// Dial opens a connection (its own TCP connection) and waits until it is
// ready; on the first Dial it also resolves the method by reflection.
func (c *Caller) Dial(ctx context.Context) (load.Conn, error) {
	return c.DialConn(ctx)
}

// DialConn is Dial with the concrete type, which can also Ask.
func (c *Caller) DialConn(ctx context.Context) (*Conn, error) {
	if c.opts.Connections <= 0 {
		cc, err := c.dial(ctx)
		if err != nil {
			return nil, err
		}
		return c.conn(cc, nil), nil
	}
	c.dialing.Lock() // one at a time: never more than Connections
	defer c.dialing.Unlock()
	c.mu.Lock()
	if len(c.shared) < c.opts.Connections {
		c.mu.Unlock()
		cc, err := c.dial(ctx)
		if err != nil {
			return nil, err
		}
		sh := &sharedConn{cc: cc, refs: 1}
		c.mu.Lock()
		c.shared = append(c.shared, sh)
		c.mu.Unlock()
		return c.conn(cc, sh), nil
	}
	sh := c.shared[c.turn%len(c.shared)]
	c.turn++
	sh.refs++
	c.mu.Unlock()
	return c.conn(sh.cc, sh), nil
}

// conn is a Conn over cc (shared by others if sh is not nil).
func (c *Caller) conn(cc *grpc.ClientConn, sh *sharedConn) *Conn {
	c.mu.Lock()
	defer c.mu.Unlock()
	cn := &Conn{c: c, cc: cc, sh: sh, frame: &frame{data: c.frame}, stream: c.stream, out: c.desc.Output()}
	if v := c.opts.Vary; v != nil {
		cn.vary = v.NewRequest()
		if v.Body != nil {
			cn.msg = dynamicpb.NewMessage(c.desc.Input())
		}
	}
	return cn
}

// Beside returns a Conn of c's method over other's connection, when both
// go to one address the same way: a mix's or a flow's methods on one
// channel, which carries each call as a stream of its own. It resolves c's
// method over that connection if it must. ok is false when they go apart.
// The Conn does not close the connection: other does.
func (c *Caller) Beside(ctx context.Context, other *Conn) (cn *Conn, ok bool, err error) {
	if c.opts.Addr != other.c.opts.Addr || c.opts.QuickACK != other.c.opts.QuickACK {
		return nil, false, nil
	}
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	if err := c.resolve(ctx, other.cc); err != nil {
		return nil, false, err
	}
	cn = c.conn(other.cc, nil)
	cn.borrowed = true
	return cn, true, nil
}

// release drops a Conn's hold on a shared connection, closing it with the
// last.
func (c *Caller) release(sh *sharedConn) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if sh.refs--; sh.refs > 0 {
		return nil
	}
	if i := slices.Index(c.shared, sh); i >= 0 {
		c.shared = slices.Delete(c.shared, i, i+1)
	}
	return sh.cc.Close()
}

// dial opens a connection and waits until it is ready; the first also
// resolves the method by reflection.
func (c *Caller) dial(ctx context.Context) (*grpc.ClientConn, error) {
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	cc, err := dialReady(ctx, c.opts.Addr, c.opts.QuickACK)
	if err != nil {
		return nil, err
	}
	if err := c.resolve(ctx, cc); err != nil {
		cc.Close()
		return nil, err
	}
	return cc, nil
}

// dialReady opens a connection to addr and waits until it is ready.
func dialReady(ctx context.Context, addr string, quickACK bool) (*grpc.ClientConn, error) {
	dialOpts := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	if quickACK {
		dialOpts = append(dialOpts, grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			return quickack.Dial(ctx, "tcp", addr)
		}))
	}
	cc, err := grpc.NewClient("passthrough:///"+addr, dialOpts...)
	if err != nil {
		return nil, fmt.Errorf("grpc %s: %w", addr, err)
	}
	cc.Connect()
	for {
		s := cc.GetState()
		if s == connectivity.Ready {
			return cc, nil
		}
		if s == connectivity.TransientFailure {
			cc.Close()
			return nil, fmt.Errorf("grpc %s: connection failed", addr)
		}
		if !cc.WaitForStateChange(ctx, s) {
			cc.Close()
			return nil, fmt.Errorf("grpc %s: %w", addr, ctx.Err())
		}
	}
}

// Conn is one connection to the server.
type Conn struct {
	c      *Caller
	cc     *grpc.ClientConn
	sh     *sharedConn // nil: cc is this Conn's own
	closed bool
	// borrowed: cc is another Conn's (Beside), which closes it
	borrowed bool
	frame    *frame
	reply    frame
	stream   bool
	out      protoreflect.MessageDescriptor // the answer's type
	// vary renders the parts that vary (Options.Vary), msg decodes the
	// request rendered, md is the metadata of the request rendered last.
	vary *vary.Request
	msg  *dynamicpb.Message
	md   metadata.MD
}

// dialTimeout bounds the wait for a connection to become ready.
const dialTimeout = 10 * time.Second

var (
	streamDesc = &grpc.StreamDesc{ServerStreams: true}
	rawCall    = grpc.ForceCodecV2(rawCodec{})
)

// Do sends request number i; for a server-streaming method the units are
// the messages received.
func (cn *Conn) Do(ctx context.Context, i uint64, deadline time.Time) load.Result {
	if cn.vary != nil {
		if err := cn.render(i); err != nil {
			return load.Result{Status: load.StatusRequest}
		}
	}
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	return cn.do(ctx, nil)
}

// render renders request i's parts that vary: its metadata, and its
// request encoded. The JSON's buffer and the message are the Conn's own,
// reused; the encoded frame is new each time, since grpc-go may still
// hold the last one after its call returns (a server that answers before
// it has read the request).
func (cn *Conn) render(i uint64) error {
	if err := cn.vary.Render(i); err != nil {
		return err
	}
	v := cn.c.opts.Vary
	if len(v.Headers) > 0 {
		cn.md = cn.c.md.Copy()
		for k, h := range v.Headers {
			cn.md.Set(h.Name, string(cn.vary.Headers[k]))
		}
	}
	if v.Body == nil {
		return nil
	}
	proto.Reset(cn.msg)
	if err := protojson.Unmarshal(cn.vary.Body, cn.msg); err != nil {
		return fmt.Errorf("request %d for %s: %w", i, cn.c.desc.FullName(), err)
	}
	data, err := proto.MarshalOptions{Deterministic: true}.Marshal(cn.msg)
	if err != nil {
		return fmt.Errorf("request %d: encode: %w", i, err)
	}
	cn.frame.data = data
	return nil
}

func (cn *Conn) do(ctx context.Context, each func([]byte)) load.Result {
	res, _ := cn.call(ctx, each)
	return res
}

// call is do that also returns the call's error, whose status a failed
// answer carries (StatusJSON).
func (cn *Conn) call(ctx context.Context, each func([]byte)) (load.Result, error) {
	switch {
	case cn.md != nil:
		ctx = metadata.NewOutgoingContext(ctx, cn.md)
	case len(cn.c.md) > 0:
		ctx = metadata.NewOutgoingContext(ctx, cn.c.md)
	}
	if !cn.stream {
		cn.reply.keep = each != nil
		if err := cn.cc.Invoke(ctx, cn.c.path, cn.frame, &cn.reply, rawCall); err != nil {
			return load.Result{Status: Status(err)}, err
		}
		if each != nil {
			each(cn.reply.data)
		}
		return load.Result{Units: 1}, nil
	}
	start := time.Now()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st, err := cn.cc.NewStream(ctx, streamDesc, cn.c.path, rawCall)
	if err != nil {
		return load.Result{Status: Status(err)}, err
	}
	if err := st.SendMsg(cn.frame); err != nil && err != io.EOF {
		return load.Result{Status: Status(err)}, err
	}
	if err := st.CloseSend(); err != nil {
		return load.Result{Status: Status(err)}, err
	}
	var n int64
	var first time.Duration
	cn.reply.keep = each != nil
	for {
		err := st.RecvMsg(&cn.reply)
		if err == io.EOF {
			return load.Result{Units: n, First: first}, nil
		}
		if err != nil {
			return load.Result{Status: Status(err), Units: n, First: first}, err
		}
		if n == 0 {
			first = time.Since(start)
		}
		n++
		if each != nil {
			each(cn.reply.data)
		}
	}
}

// Ask sends the request once (request number 0, when its parts vary) and
// returns every answer message in protobuf's JSON form (one per streamed
// message); a call that failed with a status returns that status as its
// one answer (StatusJSON).
func (cn *Conn) Ask(ctx context.Context) ([][]byte, load.Result) {
	if cn.vary != nil {
		if err := cn.render(0); err != nil {
			return nil, load.Result{Status: load.StatusRequest}
		}
	}
	var answers [][]byte
	var decodeErr error
	res, err := cn.call(ctx, func(b []byte) {
		js, err := DecodeJSON(cn.out, b)
		if err != nil {
			decodeErr = err
			return
		}
		answers = append(answers, js)
	})
	if decodeErr != nil && res.Status == "" {
		res.Status = "protocol"
	}
	if js := StatusJSON(err); js != nil {
		return [][]byte{js}, res
	}
	return answers, res
}

// Keep sends request number i and keeps its answer in a: the message in
// protobuf's JSON form (of a stream, the last). gRPC answers have no
// headers here: a's are left absent.
func (cn *Conn) Keep(ctx context.Context, i uint64, deadline time.Time, a *vary.Answer) load.Result {
	if cn.vary != nil {
		if err := cn.render(i); err != nil {
			return load.Result{Status: load.StatusRequest}
		}
	}
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	var decodeErr error
	a.Body = a.Body[:0]
	res := cn.do(ctx, func(b []byte) {
		js, err := DecodeJSON(cn.out, b)
		if err != nil {
			decodeErr = err
			return
		}
		a.Body = append(a.Body[:0], js...)
	})
	if decodeErr != nil && res.Status == "" {
		res.Status = "protocol"
	}
	for k := range a.Headers {
		a.KeepHeader(k, nil, false)
	}
	return res
}

// Vary is the Conn's rendering of the parts that vary (nil: none).
func (cn *Conn) Vary() *vary.Request { return cn.vary }

// DecodeJSON decodes a message of type md from the wire and returns it in
// protobuf's JSON form, with field names as in the .proto file and unset
// fields shown.
func DecodeJSON(md protoreflect.MessageDescriptor, wire []byte) ([]byte, error) {
	msg := dynamicpb.NewMessage(md)
	if err := proto.Unmarshal(wire, msg); err != nil {
		return nil, fmt.Errorf("decode %s: %w", md.FullName(), err)
	}
	return protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}.Marshal(msg)
}

// Streaming reports whether the method is server-streaming; it is known
// once the method is resolved (New with .proto files, or the first Dial).
func (c *Caller) Streaming() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stream
}

// Raw returns the answer messages' bytes as they came from the wire.
func (cn *Conn) Raw(ctx context.Context) ([][]byte, load.Result) {
	var answers [][]byte
	res := cn.do(ctx, func(b []byte) { answers = append(answers, b) })
	return answers, res
}

// Close closes the connection.
func (cn *Conn) Close() error {
	if cn.closed {
		return nil // a shared connection is released once
	}
	cn.closed = true
	if cn.borrowed {
		return nil
	}
	if cn.sh != nil {
		return cn.c.release(cn.sh)
	}
	return cn.cc.Close()
}

// codeNames are the canonical upper-case names of the gRPC status codes.
var codeNames = map[codes.Code]string{}

func init() {
	for c := codes.OK; c <= codes.Unauthenticated; c++ {
		var b strings.Builder
		for i, r := range c.String() {
			if i > 0 && r >= 'A' && r <= 'Z' {
				b.WriteByte('_')
			}
			b.WriteRune(r)
		}
		codeNames[c] = "grpc:" + strings.ToUpper(b.String())
	}
}

// Status maps a call's error to tandem's status string: timeout for a
// deadline, grpc:CODE otherwise (grpc:NOT_FOUND, grpc:UNAVAILABLE, …).
func Status(err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return "timeout"
	}
	return codeStatus(status.Code(err))
}

// codeStatus is Status of a call that ended with code.
func codeStatus(code codes.Code) string {
	if code == codes.DeadlineExceeded {
		return "timeout"
	}
	if n, ok := codeNames[code]; ok {
		return n
	}
	return fmt.Sprintf("grpc:%d", code)
}

// frame is an encoded message. Replies are not kept unless asked for.
type frame struct {
	data []byte
	keep bool
}

// rawCodec passes frames through as they are.
type rawCodec struct{}

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	f, ok := v.(*frame)
	if !ok {
		return nil, fmt.Errorf("raw codec: cannot marshal %T", v)
	}
	return mem.BufferSlice{mem.SliceBuffer(f.data)}, nil
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	f, ok := v.(*frame)
	if !ok {
		return fmt.Errorf("raw codec: cannot unmarshal into %T", v)
	}
	if f.keep {
		f.data = data.Materialize()
	}
	return nil
}

func (rawCodec) Name() string { return "proto" }

// EncodeRequest encodes a request for the Caller's method from protobuf's
// JSON form (empty means {}); the method must be resolved (see Streaming).
func (c *Caller) EncodeRequest(js []byte) ([]byte, error) {
	c.mu.Lock()
	md := c.desc
	c.mu.Unlock()
	if md == nil {
		return nil, errors.New("method not resolved yet")
	}
	if len(js) == 0 {
		js = []byte("{}")
	}
	req := dynamicpb.NewMessage(md.Input())
	if err := protojson.Unmarshal(js, req); err != nil {
		return nil, fmt.Errorf("request for %s: %w", md.FullName(), err)
	}
	return proto.MarshalOptions{Deterministic: true}.Marshal(req)
}

// Messages sends an encoded request (see EncodeRequest) once and returns
// the answer messages decoded, at most limit of them; more make the status
// "too-large". A message that does not decode makes the status "protocol".
// A call that failed with a gRPC status also returns it as JSON
// (StatusJSON).
func (cn *Conn) Messages(ctx context.Context, request []byte, limit int) ([]*dynamicpb.Message, load.Result, []byte) {
	var msgs []*dynamicpb.Message
	bad := ""
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	saved := cn.frame
	cn.frame = &frame{data: request}
	defer func() { cn.frame = saved }()
	res, err := cn.call(ctx, func(b []byte) {
		if bad != "" {
			return
		}
		if len(msgs) >= limit {
			bad = "too-large"
			cancel()
			return
		}
		m := dynamicpb.NewMessage(cn.out)
		if err := proto.Unmarshal(b, m); err != nil {
			bad = "protocol"
			cancel()
			return
		}
		msgs = append(msgs, m)
	})
	if bad != "" {
		res.Status = bad
		return msgs, res, nil
	}
	if res.Status != "" {
		return msgs, res, StatusJSON(err)
	}
	return msgs, res, nil
}
