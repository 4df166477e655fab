package sample

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/tandem-bench/tandem/sample/ledgerpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Version is the sample service's version, reported by Info and getinfo.
const Version = "1.0.0"

type ledgerService struct {
	ledgerpb.UnimplementedLedgerServer
	s *Server
}

// badInput is the status for a malformed request: INVALID_ARGUMENT in build
// a, INTERNAL in build b (a planted difference).
func (l *ledgerService) badInput(format string, args ...any) error {
	code := codes.InvalidArgument
	if l.s.opts.Build == BuildB {
		code = codes.Internal
	}
	return status.Errorf(code, format, args...)
}

// view is the block as this build shows it: build b sends prev_hash in
// reversed byte order (a planted difference).
func (l *ledgerService) view(b *ledgerpb.Block) *ledgerpb.Block {
	if l.s.opts.Build != BuildB {
		return b
	}
	c := &ledgerpb.Block{Height: b.Height, Hash: b.Hash, Time: b.Time, Txs: b.Txs, PrevHash: slices.Clone(b.PrevHash)}
	slices.Reverse(c.PrevHash)
	return c
}

func (l *ledgerService) Ping(context.Context, *ledgerpb.PingRequest) (*ledgerpb.PingResponse, error) {
	return &ledgerpb.PingResponse{}, nil
}

func (l *ledgerService) Info(context.Context, *ledgerpb.InfoRequest) (*ledgerpb.InfoResponse, error) {
	o := l.s.opts
	return &ledgerpb.InfoResponse{
		Build: string(o.Build), Version: Version, Chain: "sample", Height: uint64(o.Blocks),
		Indexed: l.s.Indexed(), Seed: o.Seed,
	}, nil
}

func (l *ledgerService) GetBlock(_ context.Context, r *ledgerpb.BlockRequest) (*ledgerpb.Block, error) {
	b, ok := l.s.current().block(r.Height)
	if !ok {
		return nil, status.Errorf(codes.NotFound, "no block at height %d", r.Height)
	}
	return l.view(b), nil
}

func (l *ledgerService) GetTransaction(_ context.Context, r *ledgerpb.TxRequest) (*ledgerpb.Transaction, error) {
	if len(r.Txid) != 32 {
		return nil, l.badInput("txid has %d bytes, want 32", len(r.Txid))
	}
	tx, ok := l.s.current().tx(r.Txid)
	if !ok {
		return nil, status.Error(codes.NotFound, "no such transaction")
	}
	return tx, nil
}

func (l *ledgerService) GetBalance(_ context.Context, r *ledgerpb.BalanceRequest) (*ledgerpb.Balance, error) {
	if !validAddress(r.Address) {
		return nil, l.badInput("malformed address %q", r.Address)
	}
	a, _ := l.s.current().account(r.Address)
	return &ledgerpb.Balance{Address: r.Address, Balance: a.balance, TxCount: l.txCount(a)}, nil
}

// txCount is how this build counts an address's transactions: build b
// counts join rows, so an address paid twice by one transaction counts
// twice (a planted difference).
func (l *ledgerService) txCount(a account) uint64 {
	if l.s.opts.Build == BuildB {
		return a.rows
	}
	return a.txs
}

func (l *ledgerService) GetBlockRange(r *ledgerpb.BlockRange, stream grpc.ServerStreamingServer[ledgerpb.Block]) error {
	if r.Start > r.End {
		return l.badInput("start %d after end %d", r.Start, r.End)
	}
	st := l.s.current()
	for h := r.Start; h <= r.End; h++ {
		b, ok := st.block(h)
		if !ok {
			return status.Errorf(codes.NotFound, "no block at height %d", h)
		}
		if err := stream.Send(l.view(b)); err != nil {
			return err
		}
	}
	return nil
}

func validAddress(a string) bool {
	if len(a) != 9 || !strings.HasPrefix(a, "tz1") {
		return false
	}
	for _, c := range a[3:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func methodName(full string) string {
	if i := strings.LastIndexByte(full, '/'); i >= 0 {
		return full[i+1:]
	}
	return full
}

func (m *metrics) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	start := time.Now()
	resp, err := h(ctx, req)
	m.observe("grpc", methodName(info.FullMethod), status.Code(err).String(), start)
	return resp, err
}

func (m *metrics) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	start := time.Now()
	err := h(srv, ss)
	m.observe("grpc", methodName(info.FullMethod), status.Code(err).String(), start)
	return err
}
