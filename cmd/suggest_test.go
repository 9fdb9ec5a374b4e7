package cmd

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"

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

// Every command's help shows how it is called: examples, for each command and subcommand.
func TestEveryCommandHasExamples(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" || strings.HasPrefix(c.Name(), "__") || c.IsAdditionalHelpTopicCommand() {
			return
		}
		if strings.TrimSpace(c.Example) == "" {
			t.Errorf("%s --help has no examples", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	streams, _, _, _ := TestStreams()
	walk(NewRootCmd(NewFactory(streams, Build{})))
}

// hammer --help leads with what it is, its usage, examples and flags; the prose follows under
// Details instead of pushing the flags off the screen.
func TestHammerHelpLeadsWithUsageAndFlags(t *testing.T) {
	help := run(t, "hammer", "--help").wantExit(t, ExitOK).out
	usage, examples, flags := strings.Index(help, "Usage:"), strings.Index(help, "Examples:"), strings.Index(help, "\nFlags")
	details, prose := strings.Index(help, "\nDetails:\n"), strings.Index(help, "Drives a limiter from many workers")
	if !(usage >= 0 && usage < examples && examples < flags && flags < details && details < prose) {
		t.Errorf("want Usage, Examples, Flags, then Details with the prose (at %d %d %d %d %d):\n%s", usage, examples, flags, details, prose, help)
	}
	if lines := strings.Count(help[:usage], "\n"); lines > 3 {
		t.Errorf("%d lines before Usage:\n%s", lines, help)
	}
}
