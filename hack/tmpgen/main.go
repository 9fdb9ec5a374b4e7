package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/limitctl/limitctl/internal/corpus"
)

func main() {
	for _, l := range corpus.Correct(1) {
		if l.Name == os.Args[1] {
			os.WriteFile("/tmp/c.lua", []byte(l.Source), 0o644)
			fmt.Println("'" + strings.Join(l.Flags("/tmp/c.lua"), "' '") + "'")
		}
	}
}
