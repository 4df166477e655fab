package load

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
)

// TransportStatus classifies a transport failure: timeout, refused, reset,
// eof, tls or transport.
func TransportStatus(err error) string {
	var ne net.Error
	var rh tls.RecordHeaderError
	var ua x509.UnknownAuthorityError
	var hn x509.HostnameError
	var ci x509.CertificateInvalidError
	var ve *tls.CertificateVerificationError
	switch {
	case errors.As(err, &rh), errors.As(err, &ua), errors.As(err, &hn), errors.As(err, &ci), errors.As(err, &ve),
		strings.Contains(err.Error(), "tls: "):
		return "tls"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return "reset"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "eof"
	}
	return "transport"
}

// StatusRequest is the status of a request that could not be made: its
// values could not be rendered (a feeder's file unreadable, a value that
// does not fit the request). It is not sent.
const StatusRequest = "request"
