package grpcdrv

import (
	"context"
	"errors"
	"testing"

	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// A failed call's status as JSON: its code by name, its message, and each
// detail decoded where its type is linked in, else its type and bytes.
func TestStatusJSON(t *testing.T) {
	known, err := anypb.New(wrapperspb.String("retry later"))
	if err != nil {
		t.Fatal(err)
	}
	unknown := &anypb.Any{TypeUrl: "type.googleapis.com/acme.Unknown", Value: []byte{1, 2}}
	withDetails := status.FromProto(&spb.Status{Code: int32(codes.Unavailable), Message: "busy", Details: []*anypb.Any{known, unknown}}).Err()
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"code and message", status.Error(codes.NotFound, "no block at height 7"), `{"code":"NOT_FOUND","message":"no block at height 7"}`},
		{"details", withDetails, `{"code":"UNAVAILABLE","message":"busy","details":[{"@type":"type.googleapis.com/google.protobuf.StringValue","value":"retry later"},{"@type":"type.googleapis.com/acme.Unknown","value":"AQI="}]}`},
		{"no status", context.Canceled, ""},
		{"none", nil, ""},
		{"wrapped", errors.New("plain"), ""},
	} {
		if got := string(StatusJSON(c.err)); got != c.want {
			t.Errorf("%s: %s; want %s", c.name, got, c.want)
		}
	}
}
