package grpcdrv

import (
	"context"
	"io"

	"github.com/tandem-bench/tandem/load"
	"google.golang.org/grpc"
)

// RawConn calls any method of a server with its messages as bytes, as
// they were recorded: no descriptor is needed, none is resolved. It is
// safe for concurrent use.
type RawConn struct{ cc *grpc.ClientConn }

// DialRaw opens a connection to addr (host:port) and waits until it is
// ready.
func DialRaw(ctx context.Context, addr string) (*RawConn, error) {
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	cc, err := dialReady(ctx, addr, false)
	if err != nil {
		return nil, err
	}
	return &RawConn{cc: cc}, nil
}

// anyMethod streams both ways: on the wire every kind of method is one
// stream of messages each way, so a unary or streaming method alike takes
// the requests and gives its answers.
var anyMethod = &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}

// Call sends requests (encoded messages) to method (package.Service/Method)
// and returns the answer messages as they came, at most limit of them
// (more make the status "too-large").
func (r *RawConn) Call(ctx context.Context, method string, requests [][]byte, limit int) ([][]byte, load.Result) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st, err := r.cc.NewStream(ctx, anyMethod, "/"+method, rawCall)
	if err != nil {
		return nil, load.Result{Status: Status(err)}
	}
	for _, m := range requests {
		if err := st.SendMsg(&frame{data: m}); err == io.EOF {
			break // the server ended the call: its status comes with the answers
		} else if err != nil {
			return nil, load.Result{Status: Status(err)}
		}
	}
	if err := st.CloseSend(); err != nil {
		return nil, load.Result{Status: Status(err)}
	}
	var answers [][]byte
	for {
		f := &frame{keep: true}
		err := st.RecvMsg(f)
		if err == io.EOF {
			return answers, load.Result{Units: int64(len(answers))}
		}
		if err != nil {
			return answers, load.Result{Status: Status(err), Units: int64(len(answers))}
		}
		if len(answers) == limit {
			return answers, load.Result{Status: "too-large", Units: int64(len(answers))}
		}
		answers = append(answers, f.data)
	}
}

// Close closes the connection.
func (r *RawConn) Close() error { return r.cc.Close() }
