package cmd

import (
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/limitctl/limitctl/internal/lint"
	"github.com/limitctl/limitctl/internal/scriptcache"
)

type lintOptions struct {
	files  []string
	strict bool
}

func newLintCmd(f *Factory) *cobra.Command {
	opts := &lintOptions{}
	c := &cobra.Command{
		Use:   "lint FILE.lua... (- for standard input)",
		Short: "Static checks of Redis Lua scripts for the mistakes that break limiters",
		Long: `Parses each script and reports, as file:line:col: severity: rule: message,
what goes wrong with limiter scripts in production:

` + lintRuleList() + `
Suppress a rule on one line with a comment on the line before: -- limitctl:ignore rule-name
Exits 3 when any error is found (with --strict, any warning too).

Output: the diagnostic lines (on a terminal or piped, so editors and CI annotate them),
-o json, -o tsv (one diagnostic per line, tab-separated) or -o table (aligned columns).`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return &usageError{Msg: "want at least one FILE.lua (or - for standard input)", Command: c.CommandPath()}
			}
			return nil
		},
		ValidArgsFunction: luaFiles,
		RunE: func(c *cobra.Command, args []string) error {
			opts.files = args
			return runLint(f, opts)
		},
	}
	c.Flags().BoolVar(&opts.strict, "strict", false, "exit 3 on warnings too")
	return c
}

func lintRuleList() string {
	s := ""
	for _, r := range lint.Rules() {
		s += fmt.Sprintf("  %-17s %-8s %s\n", r.Name, r.Severity, r.Description)
	}
	return s
}

// lintSources reads every file (or standard input for "-") before linting any, so a missing
// file is reported before any output.
func lintSources(in io.Reader, files []string) (names []string, sources [][]byte, err error) {
	stdinUsed := false
	for _, path := range files {
		if path == "-" {
			if stdinUsed {
				return nil, nil, usagef("standard input (-) given twice")
			}
			stdinUsed = true
			b, err := io.ReadAll(in)
			if err != nil {
				return nil, nil, fmt.Errorf("reading standard input: %w", err)
			}
			names, sources = append(names, "<stdin>"), append(sources, b)
			continue
		}
		src, err := scriptcache.ReadFile(path)
		if err != nil {
			return nil, nil, err
		}
		names, sources = append(names, path), append(sources, []byte(src))
	}
	return names, sources, nil
}

func runLint(f *Factory, opts *lintOptions) error {
	names, sources, err := lintSources(f.IO.In, opts.files)
	if err != nil {
		return err
	}
	diags := []lint.Diagnostic{}
	for i := range names {
		diags = append(diags, lint.Lint(names[i], sources[i])...)
	}
	errs, warns := 0, 0
	for _, d := range diags {
		if d.Severity == lint.SeverityError {
			errs++
		} else {
			warns++
		}
	}
	switch f.Output {
	case "json":
		if err := writeJSON(f.IO.Out, struct {
			SchemaVersion int               `json:"schema_version"`
			Diagnostics   []lint.Diagnostic `json:"diagnostics"`
		}{SchemaVersion, diags}); err != nil {
			return err
		}
	case "tsv", "table":
		r := report{header: []string{"file", "line", "col", "severity", "rule", "message"}}
		for _, d := range diags {
			r.rows = append(r.rows, []string{d.File, strconv.Itoa(d.Line), strconv.Itoa(d.Col), d.Severity, d.Rule, d.Message})
		}
		if err := writeReport(f.IO.Out, f.Output, r); err != nil {
			return err
		}
	default:
		for _, d := range diags {
			fmt.Fprintln(f.IO.Out, d.String())
		}
	}
	if f.Output != "json" && f.IO.StderrTTY {
		fmt.Fprintf(f.IO.ErrOut, "%d file(s): %d error(s), %d warning(s)\n", len(names), errs, warns)
	}
	if lint.HasErrors(diags, opts.strict) {
		if errs == 0 {
			return checkFailedf("lint: %d warning(s) (--strict)", warns)
		}
		return checkFailedf("lint: %d error(s), %d warning(s)", errs, warns)
	}
	return nil
}
