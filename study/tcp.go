package study

// ProtoTCP is the protocol key of a plain TCP call.
const ProtoTCP = "tcp"

// TCPCall is a request over plain TCP with one answer per request: a line
// protocol (Redis inline commands, memcached text) or a length-prefixed
// binary one.
type TCPCall struct {
	Send         string `yaml:"send,required" doc:"The request's bytes as text; in YAML double quotes, \\r\\n ends a line; case variables, the call's values and ${env.NAME} allowed."`
	Until        string `yaml:"until" doc:"An answer ends with this text (read up to and including it); default \"\\r\\n\", one line."`
	LengthPrefix int    `yaml:"length_prefix" doc:"Instead of until: an answer starts with its length in this many bytes, big-endian (1, 2 or 4)."`
	ErrorPrefix  string `yaml:"error_prefix" doc:"An answer that starts with this text is a failed request (status tcp:error), e.g. \"-\" for a Redis error."`
}

func (c *TCPCall) fields() []requestField {
	return []requestField{{key: "send", text: &c.Send, part: partBody}}
}
func (c *TCPCall) settings() []requestField { return nil }

func (c *TCPCall) check(v *validator, path string) {
	switch {
	case c.Send == "":
		v.errorf(path+".send", "the request's bytes", "nothing to send")
	case c.LengthPrefix != 0 && c.Until != "":
		v.errorf(path+".length_prefix", "until or length_prefix, not both", "both until and a length prefix")
	case c.LengthPrefix != 0 && c.LengthPrefix != 1 && c.LengthPrefix != 2 && c.LengthPrefix != 4:
		v.errorf(path+".length_prefix", "1, 2 or 4", "a length prefix of %d bytes", c.LengthPrefix)
	}
}

func (c *TCPCall) endpoints() []string { return []string{ProtoTCP} }
