package lint

import (
	"os"
	"testing"
)

// BenchmarkLint100Files lints 100 files cycled from the corpus in testdata/lint
// per iteration: ns/op is the time of one `limitctl lint` over 100 scripts
// (without reading them from disk).
//
//	go test -run '^$' -bench Lint100Files -benchmem ./internal/lint/
func BenchmarkLint100Files(b *testing.B) {
	paths := fixtures(b)
	srcs := make([][]byte, 100)
	for i := range srcs {
		src, err := os.ReadFile(paths[i%len(paths)])
		if err != nil {
			b.Fatal(err)
		}
		srcs[i] = src
	}
	b.ResetTimer()
	for b.Loop() {
		for _, src := range srcs {
			Lint("bench.lua", src)
		}
	}
}
