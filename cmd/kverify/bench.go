package main

import (
	"fmt"
	"os"
)

func bench(args []string) int {
	fmt.Fprintln(os.Stderr, "kverify bench: not yet implemented")
	return 2
}
