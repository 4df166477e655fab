package redact

import "testing"

func TestURLs(t *testing.T) {
	cases := []struct{ in, want string }{
		{"amqp://guest:guest@127.0.0.1:5672/", "amqp://guest:xxx@127.0.0.1:5672/"},
		{"amqps://u:p%40ss@broker/vhost", "amqps://u:xxx@broker/vhost"},
		{"dial amqp://a:one@h/ and http://b:two@h:8080/x failed", "dial amqp://a:xxx@h/ and http://b:xxx@h:8080/x failed"},
		{"amqp://guest@127.0.0.1:5672/", "amqp://guest@127.0.0.1:5672/"},
		{"http://127.0.0.1:8080/ping", "http://127.0.0.1:8080/ping"},
		{"no url: user:password@host", "no url: user:password@host"},
		{"", ""},
	}
	for _, c := range cases {
		if got := URLs(c.in); got != c.want {
			t.Errorf("URLs(%q) = %q; want %q", c.in, got, c.want)
		}
	}
}
