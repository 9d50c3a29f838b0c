// Command corpus2raw prints the raw bytes of a single-[]byte Go fuzz corpus
// file ("go test fuzz v1"), for libFuzzer seed corpora.
package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: corpus2raw FILE")
		os.Exit(2)
	}
	data, err := decode(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "corpus2raw:", err)
		os.Exit(1)
	}
	os.Stdout.Write(data)
}

func decode(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() || sc.Text() != "go test fuzz v1" {
		return nil, fmt.Errorf("%s: not a go fuzz corpus file", path)
	}
	if !sc.Scan() {
		return nil, fmt.Errorf("%s: no value", path)
	}
	line := strings.TrimSpace(sc.Text())
	lit, ok := strings.CutPrefix(line, "[]byte(")
	if !ok || !strings.HasSuffix(lit, ")") {
		return nil, fmt.Errorf("%s: want one []byte value, got %q", path, line)
	}
	s, err := strconv.Unquote(strings.TrimSuffix(lit, ")"))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return []byte(s), nil
}
