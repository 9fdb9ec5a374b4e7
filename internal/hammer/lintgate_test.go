package hammer

import (
	"errors"
	"strings"
	"testing"

	"github.com/limitctl/limitctl/internal/contract"
	"github.com/limitctl/limitctl/internal/exitcode"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/lint"
)

// The lint gate before a custom script's run: a script the linter cannot parse only warns
// (Redis decides when it loads it), a real defect blocks unless --no-lint.
func TestLintGateWarnsOnUnparsedAndBlocksOnDefects(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		noLint    bool
		blocks    bool
		notice    string
	}{
		{"unparsed", "local x = = 1\nreturn redis.call('INCR', KEYS[1])\n", false, false, "could not check"},
		{"global write", "count = redis.call('INCR', KEYS[1])\nredis.call('PEXPIRE', KEYS[1], 1000)\nreturn count\n", false, true, "global-write"},
		{"global write, --no-lint", "count = redis.call('INCR', KEYS[1])\nredis.call('PEXPIRE', KEYS[1], 1000)\nreturn count\n", true, false, "global-write"},
		{"shebang", "#!lua flags=no-writes\nreturn redis.call('GET', KEYS[1])\n", false, false, ""},
		{"warnings are one line", "redis.call('SET', KEYS[1], ARGV[1])\nredis.call('SET', KEYS[2], ARGV[1])\nreturn redis.call('GET', KEYS[1]) + ARGV[2]\n", false, false,
			"lint: 3 warnings in "},
		// The hammer answers TIME itself (the virtual clock): no finding.
		{"time read", "#!lua flags=no-writes\nreturn redis.call('TIME')\n", false, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var notices []string
			c, err := contract.Compile(contract.Spec{Keys: "{key}", ReadsTime: lint.ReadsTime([]byte(tc.src))}, limiter.DefaultContract(limiter.FixedWindow))
			if err != nil {
				t.Fatal(err)
			}
			err = lintScript(Options{Script: t.TempDir() + "/s.lua", ScriptSource: tc.src, NoLint: tc.noLint, Limiter: limiter.FixedWindow, Contract: c},
				func(s string) { notices = append(notices, s) })
			if (err != nil) != tc.blocks {
				t.Fatalf("blocked: %v (%v), want %v; notices %q", err != nil, err, tc.blocks, notices)
			}
			// A refusal has an exit code of its own (not 3, a proven failure) and says how to go on.
			var refusal *exitcode.LintRefusedError
			if err != nil && (!errors.As(err, &refusal) || !strings.Contains(err.Error(), "global-write (line 1)") ||
				!strings.Contains(err.Error(), "'-- limitctl:ignore global-write'") || !strings.Contains(err.Error(), "--no-lint")) {
				t.Errorf("refusal %T %q: want a LintRefusedError naming the rule, its line, the suppression and --no-lint", err, err)
			}
			// (a long finding is wrapped over several notices: read them as one text)
			if tc.notice != "" && !strings.Contains(strings.Join(strings.Fields(strings.Join(notices, " ")), " "), tc.notice) {
				t.Errorf("notices %q lack %q", notices, tc.notice)
			}
			if tc.name == "warnings are one line" && (len(notices) != 1 || !strings.Contains(notices[0], "(missing-expire, argv-number); limitctl lint ")) {
				t.Errorf("warnings: %q, want one line naming the rules and the command that lists them", notices)
			}
			if tc.notice == "" && len(notices) != 0 {
				t.Errorf("a clean shebang script got notices %q", notices)
			}
		})
	}
}
