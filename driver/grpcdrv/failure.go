package grpcdrv

import (
	"encoding/base64"
	"encoding/json"
	"strings"

	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
)

// StatusJSON is a failed call's gRPC status as JSON, the content a compat
// case compares when two targets fail alike: {"code": "NOT_FOUND",
// "message": …, "details": […]}, each detail in protobuf's JSON form when
// its type is linked into the binary, else {"@type": …, "value": base64}.
// It is nil for an error that carries no status (a context's end).
func StatusJSON(err error) []byte {
	st, ok := status.FromError(err)
	if !ok || err == nil {
		return nil
	}
	out := struct {
		Code    string            `json:"code"`
		Message string            `json:"message"`
		Details []json.RawMessage `json:"details,omitempty"`
	}{Code: st.Code().String(), Message: st.Message()}
	if name, ok := codeNames[st.Code()]; ok {
		out.Code = strings.TrimPrefix(name, "grpc:")
	}
	for _, d := range st.Proto().GetDetails() {
		js, err := protojson.Marshal(d)
		if err != nil {
			js, _ = json.Marshal(map[string]string{"@type": d.GetTypeUrl(), "value": base64.StdEncoding.EncodeToString(d.GetValue())})
		}
		out.Details = append(out.Details, js)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil
	}
	return b
}
