package amqpconf

import "testing"

func TestResolve(t *testing.T) {
	cases := []struct {
		name    string
		resolve func(string) (string, error)
		in      string
		want    string
		err     string
	}{
		{"queue type default", QueueType, "", Classic, ""},
		{"classic", QueueType, "classic", Classic, ""},
		{"quorum", QueueType, "quorum", Quorum, ""},
		{"stream", QueueType, "stream", "", `queue type "stream": want classic or quorum`},
		{"ack default", Ack, "", AckEach, ""},
		{"each", Ack, "each", AckEach, ""},
		{"multiple", Ack, "multiple", AckMultiple, ""},
		{"auto", Ack, "auto", AckAuto, ""},
		{"none", Ack, "none", "", `ack "none": want each, multiple or auto`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.resolve(c.in)
			errStr := ""
			if err != nil {
				errStr = err.Error()
			}
			if got != c.want || errStr != c.err {
				t.Errorf("(%q) = %q, %q; want %q, %q", c.in, got, errStr, c.want, c.err)
			}
		})
	}
}

func TestCounts(t *testing.T) {
	cases := []struct {
		name string
		f    func(int) int
		in   int
		want int
	}{
		{"prefetch default", Prefetch, 0, 1},
		{"prefetch negative", Prefetch, -3, 1},
		{"prefetch", Prefetch, 512, 512},
		{"size default", Size, 0, 1024},
		{"size", Size, 8, 8},
		{"batch of a window of one", AckBatch, 1, 1},
		{"batch of half the window", AckBatch, 512, 256},
	}
	for _, c := range cases {
		if got := c.f(c.in); got != c.want {
			t.Errorf("%s: f(%d) = %d; want %d", c.name, c.in, got, c.want)
		}
	}
}
