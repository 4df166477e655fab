package driver

import (
	"context"
	"errors"
	"net/url"

	"github.com/tandem-bench/tandem/driver/tcpdrv"
	"github.com/tandem-bench/tandem/study"
)

// tcp is the plain TCP protocol.
func tcp() protocol {
	return protocol{key: study.ProtoTCP, new: newTCP, schemes: []string{"tcp"}, fromURL: tcpFromURL,
		form: "tcp://HOST:PORT with --data REQUEST (an answer ends at \\r\\n), e.g. --data $'PING\\r\\n'"}
}

func newTCP(_ context.Context, call *study.Call, endpoint string, o Options) (Caller, error) {
	t := call.TCP
	until := []byte(t.Until)
	if t.LengthPrefix == 0 && t.Until == "" {
		until = []byte("\r\n")
	}
	c, err := tcpdrv.New(tcpdrv.Options{Addr: endpoint, Send: []byte(t.Send), Until: until, LengthPrefix: t.LengthPrefix,
		ErrorPrefix: []byte(t.ErrorPrefix), Timeout: o.Timeout, MaxAnswer: o.MaxAnswer, QuickACK: o.QuickACK, Vary: o.vary})
	if err != nil {
		return nil, err
	}
	return asker[*tcpdrv.Conn]{c, c.DialConn}, nil
}

func tcpFromURL(u *url.URL, o URLOptions) (*study.Call, string, error) {
	if len(o.Body) == 0 {
		return nil, "", errors.New("a tcp:// target needs --data, the request's bytes")
	}
	return &study.Call{TCP: &study.TCPCall{Send: string(o.Body)}}, u.Host, nil
}
