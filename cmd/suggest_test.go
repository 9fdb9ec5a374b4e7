package cmd

import (
	"strings"
	"testing"

	"github.com/limitctl/limitctl/internal/redistest"
)

// A typo gets what was meant, on the error's one line, exit 2: commands as cobra suggests
// them, flags the same way (one edit, or two for longer names; a swap of two letters is one).
func TestTyposGetSuggestions(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"hamer"}, `unknown command "hamer" for limitctl; did you mean hammer?`},
		{[]string{"scripts", "lst"}, `unknown command "lst" for limitctl scripts; did you mean list?`},
		{[]string{"hammer", "--worker", "3"}, "unknown flag: --worker; did you mean --workers?"},
		{[]string{"inspect", "--stael", "1m"}, "unknown flag: --stael; did you mean --stale?"},
		{[]string{"purge", "x", "--dryrun"}, "unknown flag: --dryrun; did you mean --dry-run?"},
		{[]string{"--adr", "x", "version"}, "unknown flag: --adr; did you mean --addr?"},
	} {
		r := run(t, tc.args...).wantExit(t, ExitUsage)
		r.wantOneLineError(t, tc.want)
	}
	// Nothing near: no guess.
	r := run(t, "frobnicate").wantExit(t, ExitUsage)
	if strings.Contains(r.errOut, "did you mean") {
		t.Errorf("a suggestion for frobnicate: %s", r.errOut)
	}
}

// The first error a newcomer without a local Redis sees says that 127.0.0.1:6379 was only the
// default and how to name their server; a server they named is not called the default.
func TestConnectionErrorsSayTheAddressWasTheDefault(t *testing.T) {
	r := run(t, "--timeout", "1s", "scripts", "load").wantExit(t, ExitError)
	if !strings.Contains(r.errOut, "127.0.0.1:6379") {
		t.Skip("a Redis answers on 127.0.0.1:6379 here: the default cannot fail")
	}
	r.wantOneLineError(t, "cannot connect to 127.0.0.1:6379 (the default: no --addr host:port, --url redis://... or REDIS_URL was given)")
	closed := "127.0.0.1:" + itoa(redistest.FreePort(t)) // nothing listens there
	for _, named := range []result{
		run(t, "--addr", closed, "scripts", "load"),
		runEnv(t, map[string]string{"REDIS_URL": "redis://" + closed}, "scripts", "load"),
	} {
		named.wantExit(t, ExitError).wantOneLineError(t, "cannot connect to "+closed+":")
		if strings.Contains(named.errOut, "default") {
			t.Errorf("a named server called the default: %s", named.errOut)
		}
	}
}
