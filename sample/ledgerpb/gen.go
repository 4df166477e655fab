// Package ledgerpb holds the sample service's protocol: ledger.proto and the
// Go code generated from it.
package ledgerpb

//go:generate protoc --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative ledger.proto
