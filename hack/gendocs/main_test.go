package main

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// manText reads a man page with roff's escaped hyphens turned back into plain ones.
func manText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(string(b), `\-`, "-")
}

// TestManPageForEveryCommand walks the command tree and wants, for every command a user can
// run, a page that names it and lists each of its flags, inherited ones included; and no page
// for anything else.
func TestManPageForEveryCommand(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1767225600") // 2026-01-01
	out := t.TempDir()
	if err := generate(newRoot(), out, "1.2.3", nil); err != nil {
		t.Fatal(err)
	}

	var want []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		name := strings.ReplaceAll(c.CommandPath(), " ", "-")
		want = append(want, name+".1")
		t.Run(name, func(t *testing.T) {
			page := manText(t, filepath.Join(out, "manpages", name+".1"))
			if !strings.Contains(page, `.TH "`+strings.ToUpper(name)+`" "1" "Jan 2026" "limitctl 1.2.3" "limitctl manual"`) {
				t.Errorf("no .TH header for %s:\n%.300s", name, page)
			}
			if !strings.Contains(page, name+" - "+c.Short) {
				t.Errorf("NAME section does not read %q", name+" - "+c.Short)
			}
			for _, flags := range []*pflag.FlagSet{c.NonInheritedFlags(), c.InheritedFlags()} {
				flags.VisitAll(func(f *pflag.Flag) {
					if !f.Hidden && !strings.Contains(page, `\fB--`+f.Name+`\fP`) {
						t.Errorf("flag --%s missing", f.Name)
					}
				})
			}
			if strings.Contains(page, "Auto generated") {
				t.Errorf("page carries cobra's auto-generated tag")
			}
		})
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() {
				walk(sub)
			}
		}
	}
	walk(newRoot())

	for _, must := range []string{"limitctl.1", "limitctl-hammer.1", "limitctl-scripts-show.1", "limitctl-inspect.1",
		"limitctl-purge.1", "limitctl-reset.1", "limitctl-lint.1", "limitctl-version.1", "limitctl-completion-zsh.1"} {
		if !contains(want, must) {
			t.Errorf("the command tree has no %s", must)
		}
	}
	entries, err := os.ReadDir(filepath.Join(out, "manpages"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	sort.Strings(want)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("pages\n%v\nwant\n%v", got, want)
	}
}

// TestManPagePlainText: help text is plain, not markdown, so what markdown would swallow stays.
func TestManPagePlainText(t *testing.T) {
	out := t.TempDir()
	if err := generate(newRoot(), out, "", nil); err != nil {
		t.Fatal(err)
	}
	hammer := manText(t, filepath.Join(out, "manpages", "limitctl-hammer.1"))
	for _, s := range []string{"'{burst} {limit} {window_s}'", "lua.overshoot==0"} {
		if !strings.Contains(hammer, s) {
			t.Errorf("hammer page lost %q", s)
		}
	}
	inspect := manText(t, filepath.Join(out, "manpages", "limitctl-inspect.1"))
	if !strings.Contains(inspect, "window_log") || !strings.Contains(inspect, "*, ? or [") {
		t.Errorf("inspect page mangled its description")
	}
}

func TestCompletionScripts(t *testing.T) {
	out := t.TempDir()
	if err := generate(newRoot(), out, "", nil); err != nil {
		t.Fatal(err)
	}
	for name, mark := range map[string]string{
		"limitctl.bash": "__start_limitctl",
		"_limitctl":     "#compdef limitctl",
		"limitctl.fish": "complete -c limitctl",
		"limitctl.ps1":  "Register-ArgumentCompleter -CommandName 'limitctl'",
	} {
		b, err := os.ReadFile(filepath.Join(out, "completions", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b, []byte(mark)) || !bytes.Contains(b, []byte("__complete")) {
			t.Errorf("%s lacks %q or the __complete call", name, mark)
		}
	}
}

// TestReproducible: the same commit and SOURCE_DATE_EPOCH give the same bytes, and a second run
// leaves no stale file behind.
func TestReproducible(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1767225600")
	a, b := t.TempDir(), t.TempDir()
	stale := filepath.Join(b, "manpages", "limitctl-removed.1")
	if err := os.MkdirAll(filepath.Dir(stale), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stale, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{a, b} {
		if err := generate(newRoot(), dir, "1.2.3", nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale page survived: %v", err)
	}
	for _, sub := range []string{"manpages", "completions"} {
		entries, err := os.ReadDir(filepath.Join(a, sub))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			x, _ := os.ReadFile(filepath.Join(a, sub, e.Name()))
			y, err := os.ReadFile(filepath.Join(b, sub, e.Name()))
			if err != nil || !bytes.Equal(x, y) {
				t.Errorf("%s/%s differs between two runs", sub, e.Name())
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// TestManPageDate: -date (the release passes the commit's time) wins over SOURCE_DATE_EPOCH.
func TestManPageDate(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1767225600") // Jan 2026
	out := t.TempDir()
	date := time.Date(2026, time.March, 15, 12, 0, 0, 0, time.UTC)
	if err := generate(newRoot(), out, "", &date); err != nil {
		t.Fatal(err)
	}
	if page := manText(t, filepath.Join(out, "manpages", "limitctl.1")); !strings.Contains(page, `.TH "LIMITCTL" "1" "Mar 2026" "limitctl"`) {
		t.Errorf("header not dated Mar 2026:\n%.200s", page)
	}
}
