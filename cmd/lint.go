package cmd

import (
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/limitctl/limitctl/internal/lint"
	"github.com/limitctl/limitctl/internal/scriptcache"
	"github.com/limitctl/limitctl/internal/tableprint"
)

type lintOptions struct {
	files   []string
	strict  bool
	disable []string
	enable  []string
}

func newLintCmd(f *Factory) *cobra.Command {
	opts := &lintOptions{}
	c := &cobra.Command{
		Use:   "lint FILE.lua... (- for standard input)",
		Short: "Static checks of Redis Lua scripts for the mistakes that break limiters",
		Long: `Parses each script and reports, as file:line:col: severity: rule: message,
what goes wrong with limiter scripts in production:

` + lintRuleList() + `
Scripts may start with a Redis 7 shebang (#!lua flags=no-writes); a file starting with
#!lua name=mylib is a Function library, and each function it registers is checked on its own,
its first two parameters standing for KEYS and ARGV. server.call (Valkey) is redis.call.

Suppress a rule on one line with a comment on the line before: -- limitctl:ignore rule-name
(a syntax error cannot be suppressed). Turn rules off for a whole project in ` + lint.ConfigFile + `,
found in the linted file's directory or a parent up to the repository root (the directory
holding .git); standard input uses the current directory:

  lint:
    disable: [missing-expire]   # a queue keeps its data on purpose

--disable RULE turns a rule off for this run, --enable RULE turns one back on that the project
file turned off. syntax cannot be disabled.
Exits 3 when any error is found (with --strict, any warning too).

Output: the diagnostic lines (on a terminal or piped, so editors and CI annotate them),
-o json, -o tsv (one diagnostic per line, tab-separated) or -o table (aligned columns).`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return &usageError{Msg: "want at least one FILE.lua (or - for standard input)", Command: c.CommandPath()}
			}
			return nil
		},
		Example: `  limitctl lint scripts/*.lua
  limitctl lint --disable missing-expire,reply-key queue/*.lua
  limitctl lint --enable missing-expire limiter.lua   # even where .limitctl.yaml turns it off
  limitctl lint -o json --strict limiter.lua`,
		ValidArgsFunction: luaFiles,
		RunE: func(c *cobra.Command, args []string) error {
			opts.files = args
			return runLint(f, opts)
		},
	}
	c.Flags().BoolVar(&opts.strict, "strict", false, "exit 3 on warnings too")
	c.Flags().StringSliceVar(&opts.disable, "disable", nil, "rules to turn off for this run (repeat or comma-separate)")
	c.Flags().StringSliceVar(&opts.enable, "enable", nil, "rules to turn back on that "+lint.ConfigFile+" turns off")
	c.RegisterFlagCompletionFunc("disable", ruleNames)
	c.RegisterFlagCompletionFunc("enable", ruleNames)
	return c
}

func ruleNames(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	var names []string
	for _, r := range lint.Rules() {
		if r.Name != lint.RuleSyntax { // never off, so never offered
			names = append(names, r.Name+"\t"+r.Severity)
		}
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}

// lintConfigs resolves each file's rules: the project file found from its directory
// (standard input: the working directory), then --disable and --enable. Directories are
// looked up once.
func lintConfigs(opts *lintOptions, names []string) ([]lint.Config, error) {
	byDir := map[string]lint.Config{}
	configs := make([]lint.Config, len(names))
	for i, name := range names {
		dir := "."
		if name != "<stdin>" {
			dir = filepath.Dir(name)
		}
		project, ok := byDir[dir]
		if !ok {
			var err error
			if project, err = lint.FindConfig(dir); err != nil {
				return nil, usagef("%v", err)
			}
			byDir[dir] = project
		}
		cfg, err := project.With(opts.disable, opts.enable)
		if err != nil {
			return nil, usagef("%v", err)
		}
		configs[i] = cfg
	}
	return configs, nil
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
	// Flag errors first, whatever the files.
	if _, err := (lint.Config{}).With(opts.disable, opts.enable); err != nil {
		return usagef("%v", err)
	}
	names, sources, err := lintSources(f.IO.In, opts.files)
	if err != nil {
		return err
	}
	configs, err := lintConfigs(opts, names)
	if err != nil {
		return err
	}
	diags := []lint.Diagnostic{}
	off := map[string]bool{}
	for i := range names {
		diags = append(diags, lint.LintWith(names[i], sources[i], configs[i])...)
		for r := range configs[i].Disabled {
			off[r] = true
		}
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
		if err := printReport(f.IO.Out, f.IO.TerminalWidth(), f.Output, report{table: lintTable(diags)}); err != nil {
			return err
		}
	default:
		for _, d := range diags {
			fmt.Fprintln(f.IO.Out, d.String())
		}
	}
	if f.Output != "json" && f.IO.StderrTTY {
		note := ""
		if len(off) > 0 {
			note = fmt.Sprintf(" (off: %s)", strings.Join(slices.Sorted(maps.Keys(off)), ", "))
		}
		fmt.Fprintf(f.IO.ErrOut, "%d file(s): %d error(s), %d warning(s)%s\n", len(names), errs, warns, note)
	}
	if lint.HasErrors(diags, opts.strict) {
		if errs == 0 {
			return checkFailedf("lint: %d warning(s) (--strict)", warns)
		}
		return checkFailedf("lint: %d error(s), %d warning(s)", errs, warns)
	}
	return nil
}

// lintTable: on a narrow terminal the file name and the message are cut, then the rule goes.
func lintTable(diags []lint.Diagnostic) tableprint.Table[lint.Diagnostic] {
	type d = lint.Diagnostic
	return tableprint.Table[lint.Diagnostic]{Rows: diags, Columns: []tableprint.Column[lint.Diagnostic]{
		{Header: "file", Human: func(x d) string { return x.File }, MinWidth: 12, Cut: tableprint.CutMiddle},
		{Header: "line", Human: func(x d) string { return strconv.Itoa(x.Line) }},
		{Header: "col", Human: func(x d) string { return strconv.Itoa(x.Col) }},
		{Header: "severity", Human: func(x d) string { return x.Severity }},
		{Header: "rule", Human: func(x d) string { return x.Rule }, Priority: 1},
		{Header: "message", Human: func(x d) string { return x.Message }, MinWidth: 30},
	}}
}
