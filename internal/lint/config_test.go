package lint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDisabledRulesReportNothing(t *testing.T) {
	src := []byte("redis.call('INCR', KEYS[1])\nreturn redis.call('TIME')")
	cfg, err := Config{}.With([]string{RuleMissingExpire}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := brief(LintWith("t.lua", src, cfg)); len(got) != 1 || got[0] != "2:8 nondeterministic" {
		t.Errorf("with missing-expire disabled got %q", got)
	}
	back, err := cfg.With(nil, []string{RuleMissingExpire})
	if err != nil {
		t.Fatal(err)
	}
	if got := brief(LintWith("t.lua", src, back)); len(got) != 2 {
		t.Errorf("--enable should bring missing-expire back, got %q", got)
	}
}

func TestConfigRejectsWhatItCannotHonour(t *testing.T) {
	for _, tt := range []struct {
		name             string
		disable, enable  []string
		wantErrSubstring string
	}{
		{"an unknown rule", []string{"missing-ttl"}, nil, `unknown rule "missing-ttl"`},
		{"syntax", []string{RuleSyntax}, nil, "syntax cannot be disabled"},
		{"both ways", []string{RuleReplyKey}, []string{RuleReplyKey}, "both disabled and enabled"},
		{"an unknown rule to enable", nil, []string{"nope"}, `unknown rule "nope"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Config{}.With(tt.disable, tt.enable)
			if err == nil || !strings.Contains(err.Error(), tt.wantErrSubstring) {
				t.Errorf("err = %v, want one saying %q", err, tt.wantErrSubstring)
			}
		})
	}
}

func TestParseConfig(t *testing.T) {
	cfg, err := ParseConfig([]byte("lint:\n  disable: [missing-expire, reply-key]\n"))
	if err != nil || !cfg.Disabled[RuleMissingExpire] || !cfg.Disabled[RuleReplyKey] || len(cfg.Disabled) != 2 {
		t.Errorf("got %+v, %v", cfg, err)
	}
	if cfg, err := ParseConfig(nil); err != nil || len(cfg.Disabled) != 0 {
		t.Errorf("an empty file: got %+v, %v", cfg, err)
	}
	for _, bad := range []string{"lint:\n  disabled: [missing-expire]\n", "lint:\n  disable: [no-such-rule]\n", "lint: [\n", "lint:\n  disable: [syntax]\n"} {
		if _, err := ParseConfig([]byte(bad)); err == nil {
			t.Errorf("ParseConfig(%q) accepted it", bad)
		}
	}
}

func TestFindConfigWalksUpToTheRepositoryRoot(t *testing.T) {
	outside := t.TempDir()
	repo := filepath.Join(outside, "repo")
	scripts := filepath.Join(repo, "queue", "lua")
	if err := os.MkdirAll(scripts, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(repo, ".git"), 0o755)
	// Above the repository root: never read.
	os.WriteFile(filepath.Join(outside, ConfigFile), []byte("lint:\n  disable: [reply-key]\n"), 0o644)

	cfg, err := FindConfig(scripts)
	if err != nil || len(cfg.Disabled) != 0 || cfg.Source != "" {
		t.Fatalf("without a project file in the repository: %+v, %v", cfg, err)
	}
	path := filepath.Join(repo, ConfigFile)
	os.WriteFile(path, []byte("lint:\n  disable: [missing-expire]\n"), 0o644)
	cfg, err = FindConfig(scripts)
	if err != nil || !cfg.Disabled[RuleMissingExpire] || cfg.Disabled[RuleReplyKey] || cfg.Source != path {
		t.Fatalf("got %+v, %v; want missing-expire off from %s", cfg, err, path)
	}
	os.WriteFile(path, []byte("lint:\n  disable: [missing-expiry]\n"), 0o644)
	if _, err := FindConfig(scripts); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("a bad project file: err = %v, want one naming %s", err, path)
	}
}

func TestGateLetsRedisJudgeWhatTheParserRejects(t *testing.T) {
	unparsed := Lint("t.lua", []byte("return 1 +"))
	if !Unparsed(unparsed) {
		t.Fatalf("want a syntax diagnostic, got %v", unparsed)
	}
	report, block := Gate(unparsed)
	if block || len(report) != 1 || report[0].Severity != SeverityWarning || !strings.Contains(report[0].Message, "Redis decides") {
		t.Errorf("a syntax error must be a warning that does not block: %v, block=%v", report, block)
	}
	shebang := Lint("t.lua", []byte("#!lua flags=no-writes\nreturn redis.call('GET', KEYS[1])"))
	if report, block := Gate(shebang); block || len(report) != 0 {
		t.Errorf("a Redis 7 shebang script: %v, block=%v", report, block)
	}
	defect := Lint("t.lua", []byte("count = 1"))
	if Unparsed(defect) {
		t.Error("a parsed file is not unparsed")
	}
	if _, block := Gate(defect); !block {
		t.Error("a real error must block")
	}
	warned := Lint("t.lua", []byte("return redis.call('TIME')"))
	if _, block := Gate(warned); block {
		t.Error("a warning must not block")
	}
}
