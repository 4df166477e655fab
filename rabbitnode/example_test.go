package rabbitnode_test

import (
	"context"
	"fmt"
	"log"

	"github.com/tandem-bench/tandem/rabbitnode"
)

// Start a private node, use its URL, stop it.
func ExampleStart() {
	node, err := rabbitnode.Start(context.Background(), rabbitnode.Options{CPUs: []int{1}})
	if err != nil {
		log.Fatal(err) // rabbitnode.ErrNotInstalled without the Debian package
	}
	defer node.Stop()
	fmt.Println("broker at", node.URL)
}
