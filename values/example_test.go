package values_test

import (
	"context"
	"fmt"
	"time"

	"github.com/tandem-bench/tandem/values"
)

// A set of values, a request path and a JSON body compiled once, then
// rendered request by request into one buffer.
func Example() {
	set, err := values.Open(context.Background(), 42, map[string]values.Spec{
		"n":     values.Seq{From: 1},
		"key":   values.Zipf{N: 1000, S: 0.99},
		"op":    values.Choice{Values: []any{"get", "put"}, Weights: []float64{9, 1}},
		"users": values.File{Path: "testdata/users.csv", Format: values.CSV, Order: values.Sequential},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer set.Close()
	path, err := set.Compile("/users/${users.name}?key=${key}", values.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	body, err := set.CompileJSON(map[string]any{"id": "${n}", "op": "${op}", "user": "${users.id}", "note": "plan ${users.plan}"})
	if err != nil {
		fmt.Println(err)
		return
	}
	r := set.NewRenderer() // one per goroutine
	var buf []byte
	for i := range uint64(6) {
		buf, _ = path.Append(buf[:0], r, i, time.Time{})
		buf = append(buf, ' ')
		buf, _ = body.Append(buf, r, i, time.Time{})
		fmt.Println(string(buf))
	}
	d, _ := set.Digest(context.Background(), 1000)
	fmt.Println(d.Requests, len(d.SHA256))
	// Output:
	// /users/Ada?key=61 {"id":1,"note":"plan pro","op":"get","user":"1"}
	// /users/Lin%2C%20Jr.?key=0 {"id":2,"note":"plan free","op":"get","user":"2"}
	// /users/Grace?key=853 {"id":3,"note":"plan pro","op":"get","user":"3"}
	// /users/Ada?key=4 {"id":4,"note":"plan pro","op":"get","user":"1"}
	// /users/Lin%2C%20Jr.?key=35 {"id":5,"note":"plan free","op":"get","user":"2"}
	// /users/Grace?key=5 {"id":6,"note":"plan pro","op":"get","user":"3"}
	// 1000 64
}

// ParseSpec reads a source as a study file writes it.
func ExampleParseSpec() {
	for _, v := range []any{
		map[string]any{"zipf": map[string]any{"n": int64(1000), "s": 0.99}},
		map[string]any{"csv": "users.csv", "order": "once"},
		map[string]any{"hex": int64(0)},
	} {
		spec, err := values.ParseSpec(v)
		fmt.Printf("%+v %v\n", spec, err)
	}
	// Output:
	// {N:1000 S:0.99} <nil>
	// {Path:users.csv Format:csv Order:once} <nil>
	// <nil> hex: want a length from 1 to 1048576; got 0
}
