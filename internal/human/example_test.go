package human_test

import (
	"fmt"

	"github.com/tandem-bench/tandem/internal/human"
)

// Figures keep three significant digits, whatever their size.
func Example() {
	fmt.Println(human.Duration(40_312_000), human.Number(1234.5), human.Bytes(1536), human.Printable("a\x1b[2Jb"))
	// Output: 40.3ms 1,235 1.50 KiB a\x1b[2Jb
}
