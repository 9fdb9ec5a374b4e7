package cmd

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/limitctl/limitctl/internal/helptopic"
)

// linesWithin fails t for each line of text wider than width columns.
func linesWithin(t *testing.T, what, text string, width int) {
	t.Helper()
	for i, line := range strings.Split(text, "\n") {
		if n := utf8.RuneCountInString(line); n > width {
			t.Errorf("%s: line %d is %d columns, more than %d:\n%s", what, i+1, n, width, line)
		}
	}
}

// hammer --help fits two 80x24 screens: its flags in groups, a line or two each, under the topic
// that explains them, and the prose within 25 lines.
func TestHammerHelpFitsTwoScreens(t *testing.T) {
	help := run(t, "hammer", "--help").wantExit(t, ExitOK).out
	if lines := strings.Count(strings.TrimRight(help, "\n"), "\n") + 1; lines > 2*24 {
		t.Errorf("hammer --help is %d lines, more than two 80x24 screens:\n%s", lines, help)
	}
	linesWithin(t, "hammer --help", help, 80)
	_, details, _ := strings.Cut(help, "\nDetails:\n")
	if lines := strings.Count(strings.TrimRight(details, "\n"), "\n") + 1; details == "" || lines > 25 {
		t.Errorf("hammer's Long is %d lines, want 1 to 25:\n%s", lines, details)
	}
	for _, topic := range helptopic.Topics {
		if !strings.Contains(help, "["+topic.Name+"]") && !strings.Contains(details, topic.Name) {
			t.Errorf("hammer --help does not point at topic %s", topic.Name)
		}
	}
}

// Every visible flag of hammer is in exactly one group, and every group names a topic that
// exists and flags that do.
func TestEveryHammerFlagIsInAGroup(t *testing.T) {
	streams, _, _, _ := TestStreams()
	root := NewRootCmd(NewFactory(streams, Build{}))
	hammer, _, err := root.Find([]string{"hammer"})
	if err != nil {
		t.Fatal(err)
	}
	groups := flagGroups(hammer, hammerFlagGroups)
	if missing := groups.Missing(); len(missing) > 0 {
		t.Errorf("flags in no group of hammer --help: %v", missing)
	}
	seen := map[string]string{}
	for _, g := range hammerFlagGroups {
		if !slices.ContainsFunc(helptopic.Topics, func(tp helptopic.Topic) bool { return tp.Name == g.Topic }) {
			t.Errorf("group %s names topic %s, which does not exist", g.Name, g.Topic)
		}
		for _, name := range g.Flags {
			if hammer.Flags().Lookup(name) == nil {
				t.Errorf("group %s names --%s, which hammer does not have", g.Name, name)
			}
			if other, twice := seen[name]; twice {
				t.Errorf("--%s is in %s and in %s", name, other, g.Name)
			}
			seen[name] = g.Name
		}
	}
}

// Each help topic (limitctl help TOPIC) is its explanation, fitting 80 columns, with the usage of
// every flag whose group it explains; limitctl --help lists them.
func TestEveryHelpTopicExplainsItsFlags(t *testing.T) {
	root := run(t, "--help").wantExit(t, ExitOK).out
	for _, name := range []string{"limiter-file", "contract", "evidence", "http", "records", "exit-codes", "connections"} {
		t.Run(name, func(t *testing.T) {
			text := run(t, "help", name).wantExit(t, ExitOK).out
			if len(text) < 500 || strings.Contains(text, "Usage:") || strings.Contains(text, "{{") {
				t.Errorf("help %s is not a topic's text:\n%s", name, text)
			}
			linesWithin(t, "help "+name, text, 80)
			if !strings.Contains(root, name) {
				t.Errorf("limitctl --help does not list topic %s", name)
			}
			for _, g := range hammerFlagGroups {
				if g.Topic != name {
					continue
				}
				for _, flag := range g.Flags {
					if !strings.Contains(text, "--"+flag+" ") {
						t.Errorf("help %s does not explain --%s", name, flag)
					}
				}
			}
		})
	}
	// The generated parts are filled in: every placeholder, every metric, every file field.
	for name, want := range map[string]string{"contract": "{prev_window_index}", "exit-codes": "false_rejects", "limiter-file": "script.release-keys"} {
		if text := run(t, "help", name).out; !strings.Contains(text, want) {
			t.Errorf("help %s lacks %s", name, want)
		}
	}
}

// limitctl help NAME is a command's help or a topic; a name that is neither is one line and exit
// 2, so a script that asks for a topic can tell it does not exist.
func TestHelpOfAnUnknownNameIsAUsageError(t *testing.T) {
	r := run(t, "help", "nosuch").wantExit(t, ExitUsage)
	if !strings.Contains(r.errOut, `unknown help topic "nosuch"`) || strings.Count(strings.TrimSpace(r.errOut), "\n") > 0 || r.out != "" {
		t.Errorf("stdout %q, stderr %q", r.out, r.errOut)
	}
	if out := run(t, "help", "hammer", "report").wantExit(t, ExitOK).out; !strings.Contains(out, "--run-id") {
		t.Errorf("help hammer report:\n%s", out)
	}
}
