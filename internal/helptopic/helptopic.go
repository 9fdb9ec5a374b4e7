// Package helptopic holds limitctl's help topics (limitctl help TOPIC, as gh's): one
// explanation per topic, which the commands' --help, the README and the docs point at instead
// of repeating it. The prose is in one text file per topic; the lists that code already holds
// (placeholders, metrics, the limiter file's fields, the flags a topic explains) are filled in
// from it, so they cannot drift.
package helptopic

import (
	"embed"
	"fmt"
	"strings"
	"text/template"

	"github.com/limitctl/limitctl/internal/bench/verdict"
	"github.com/limitctl/limitctl/internal/contract"
	"github.com/limitctl/limitctl/internal/human"
	"github.com/limitctl/limitctl/internal/limiterfile"
)

// Width is the columns a topic's text fits: an 80-column terminal's.
const Width = 80

//go:embed *.txt
var texts embed.FS

// A Topic is one help topic: its name (limitctl help NAME) and what it explains, in a line.
type Topic struct{ Name, Short string }

// Topics are the help topics in the order limitctl --help lists them.
var Topics = []Topic{
	{"limiter-file", "The limiter under test in a YAML file: hammer -f, --print-limiter"},
	{"contract", "How your own script is called: templates, replies, release, set-up"},
	{"evidence", "How a verdict is proven: overshoot, refusals with room, leaks, power"},
	{"http", "Driving a limiter as it is deployed, over HTTP"},
	{"records", "Judging what a load tool recorded: judge, hammer --record"},
	{"exit-codes", "Exit codes, assertions, JSON errors and the CI formats"},
	{"connections", "Reaching Redis, and the hammer's load and connections"},
}

// Text is topic name's explanation, with flags (the flags it explains, under a heading of
// their group, as --help lists them) after it; "" for a topic that does not exist.
func Text(name, flags string) string {
	src, err := texts.ReadFile(name + ".txt")
	if err != nil {
		return ""
	}
	t := template.Must(template.New(name).Parse(string(src)))
	var b strings.Builder
	if err := t.Execute(&b, vars{}); err != nil {
		panic(fmt.Sprintf("helptopic %s: %v", name, err)) // the texts are the binary's own
	}
	text := strings.TrimRight(b.String(), "\n")
	if flags = strings.TrimRight(flags, "\n"); flags != "" {
		text += "\n\n" + flags
	}
	return text
}

// vars are the generated parts a topic's text may name.
type vars struct{}

// Placeholders are the contract's placeholders, wrapped.
func (vars) Placeholders() string {
	return human.Wrap("{"+strings.Join(contract.Placeholders(), "} {")+"}", Width)
}

// Metrics are the metrics an assertion may name, wrapped.
func (vars) Metrics() string { return human.Wrap(strings.Join(verdict.MetricNames(), ", "), Width) }

// Schema is the limiter file's fields, each with the flags it stands for.
func (vars) Schema() string {
	var b strings.Builder
	for _, f := range limiterfile.Fields() {
		fmt.Fprintf(&b, "  %-22s --%s\n", f.Path, strings.Join(f.Flags, ", --"))
	}
	return strings.TrimRight(b.String(), "\n")
}
