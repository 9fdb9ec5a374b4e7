package scripts_test

import (
	"strings"
	"testing"

	"github.com/limitctl/limitctl/internal/lint"
	"github.com/limitctl/limitctl/scripts"
)

func TestShippedScriptsLintClean(t *testing.T) {
	for _, s := range scripts.All() {
		if diags := lint.Lint(s.Name+".lua", []byte(s.Source)); len(diags) != 0 {
			for _, d := range diags {
				t.Errorf("%s", d)
			}
		}
	}
}

// The library is linted as Redis 7 loads it: each registered function on its own, with its
// KEYS and ARGV parameters.
func TestFunctionsLibraryLintsClean(t *testing.T) {
	for _, d := range lint.Lint("limitctl-library.lua", []byte(scripts.FunctionsLibrary())) {
		t.Errorf("%s", d)
	}
}

func TestFunctionsLibraryCarriesEveryLimiterScriptUnchanged(t *testing.T) {
	lib := scripts.FunctionsLibrary()
	if !strings.HasPrefix(lib, "#!lua name=limitctl\n") {
		t.Fatalf("library does not start with its shebang:\n%s", lib[:40])
	}
	for _, s := range scripts.All() {
		registered := strings.Contains(lib, "redis.register_function('"+s.FunctionName()+"'")
		if registered != s.Limiter {
			t.Errorf("%s: registered=%v, want %v (limiter scripts only)", s.Name, registered, s.Limiter)
		}
		if s.Limiter && !strings.Contains(lib, s.Source) {
			t.Errorf("%s: the library does not hold the script's exact source", s.Name)
		}
	}
}

func TestLookupOfAnUnknownScriptNamesTheKnownOnes(t *testing.T) {
	_, err := scripts.Lookup("leaky_bucket")
	if err == nil || !strings.Contains(err.Error(), "concurrency_acquire") {
		t.Fatalf("Lookup(leaky_bucket) = %v, want an error listing the known scripts", err)
	}
}
