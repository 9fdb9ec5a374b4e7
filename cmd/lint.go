package cmd

import (
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/limitctl/limitctl/internal/ciformat"
	"github.com/limitctl/limitctl/internal/lint"
	"github.com/limitctl/limitctl/internal/scriptcache"
	"github.com/limitctl/limitctl/internal/tableprint"
)

type lintOptions struct {
	files   []string
	strict  bool
	disable []string
	enable  []string
	junit   string
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
-o json, -o tsv (one diagnostic per line, tab-separated) or -o table (aligned columns).
For CI: -o sarif (a SARIF 2.1.0 log for GitHub code scanning; the diagnostic lines go to
stderr), -o github (GitHub Actions ::error/::warning annotations), and --junit F.xml (a test
case per file, a failure per error) beside any of them.`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return &usageError{Msg: "want at least one FILE.lua (or - for standard input)", Command: c.CommandPath()}
			}
			return nil
		},
		Example: `  limitctl lint scripts/*.lua
  limitctl lint --disable missing-expire,reply-key queue/*.lua
  limitctl lint --enable missing-expire limiter.lua   # even where .limitctl.yaml turns it off
  limitctl lint -o json --strict limiter.lua
  limitctl lint -o sarif scripts/*.lua > lint.sarif   # upload with github/codeql-action/upload-sarif
  limitctl lint -o github --junit lint.xml scripts/*.lua`,
		ValidArgsFunction: luaFiles,
		Annotations:       map[string]string{outputsAnnotation: strings.Join(lintOutputs, " ")},
		RunE: func(c *cobra.Command, args []string) error {
			opts.files = args
			return runLint(f, opts)
		},
	}
	c.Flags().BoolVar(&opts.strict, "strict", false, "exit 3 on warnings too")
	c.Flags().StringSliceVar(&opts.disable, "disable", nil, "rules to turn off for this run (repeat or comma-separate)")
	c.Flags().StringSliceVar(&opts.enable, "enable", nil, "rules to turn back on that "+lint.ConfigFile+" turns off")
	c.Flags().StringVar(&opts.junit, "junit", "", "also write a JUnit XML report to this file (a test case per file, a failure per error)")
	c.MarkFlagFilename("junit", "xml")
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
	if opts.junit != "" {
		if err := checkWritable(opts.junit); err != nil {
			return usagef("--junit: %v", err)
		}
	}
	started := f.Now()
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
	ci := ciformat.LintRun{Strict: opts.strict, Version: resolveVersion(f.Build).Version, Started: started}
	for i := range names {
		begin := f.Now()
		diags = append(diags, lint.LintWith(names[i], sources[i], configs[i])...)
		ci.Files = append(ci.Files, ciformat.LintedFile{Name: names[i], Source: sources[i], Elapsed: f.Now().Sub(begin)})
		for r := range configs[i].Disabled {
			off[r] = true
		}
	}
	ci.Diagnostics = diags
	if ci.WorkDir, err = os.Getwd(); err != nil {
		return err
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
	case "sarif":
		log, err := ciformat.LintSARIF(ci)
		if err != nil {
			return err
		}
		if _, err := f.IO.Out.Write(log); err != nil {
			return err
		}
		for _, d := range diags { // stdout is the log for the upload; the job's log still shows these
			fmt.Fprintln(f.IO.ErrOut, d.String())
		}
	case "github":
		if _, err := f.IO.Out.Write(ciformat.GitHubAnnotations(ci.WorkDir, diags)); err != nil {
			return err
		}
	default:
		for _, d := range diags {
			fmt.Fprintln(f.IO.Out, d.String())
		}
	}
	// The count on a terminal, and in a CI log whenever stdout is a CI format.
	if f.Output != "json" && (f.IO.StderrTTY || slices.Contains(lintOutputs, f.Output)) {
		note := ""
		if len(off) > 0 {
			note = fmt.Sprintf(" (off: %s)", strings.Join(slices.Sorted(maps.Keys(off)), ", "))
		}
		fmt.Fprintf(f.IO.ErrOut, "%d file(s): %d error(s), %d warning(s)%s\n", len(names), errs, warns, note)
	}
	var outcome error
	if lint.HasErrors(diags, opts.strict) {
		outcome = checkFailedf("lint: %d error(s), %d warning(s)", errs, warns)
		if errs == 0 {
			outcome = checkFailedf("lint: %d warning(s) (--strict)", warns)
		}
	}
	if opts.junit == "" {
		return outcome
	}
	report, err := ciformat.LintJUnit(ci)
	return checkOutcome(f, outcome, writeJUnit(f, opts.junit, report, err))
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
