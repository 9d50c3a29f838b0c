package checkkit_test

import (
	"fmt"

	"github.com/kverify/kverify/props/checkkit"
)

// A check's core returns an error that names the broken guarantee, so the
// same check can fail a test, fill kverify's table or kill a mutant.
func ExampleBroke() {
	err := checkkit.Broke("Fair", "Gets returned %v, the model's FIFO head is %v", []string{"b"}, []string{"a"})
	fmt.Println(err)
	// Output:
	// broke Fair: Gets returned [b], the model's FIFO head is [a]
}
