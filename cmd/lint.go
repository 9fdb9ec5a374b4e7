package cmd

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/limitctl/limitctl/internal/buildinfo"
	"github.com/limitctl/limitctl/internal/ciformat"
	"github.com/limitctl/limitctl/internal/lint"
	"github.com/limitctl/limitctl/internal/outfile"
	"github.com/limitctl/limitctl/internal/tableprint"
)

type lintOptions struct {
	lint  lint.Request
	junit string
	// explain prints each finding's whole explanation under its line.
	explain bool
}

func newLintCmd(f *Factory, runF func(*Factory, *lintOptions) error) *cobra.Command {
	if runF == nil {
		runF = runLint
	}
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
		Args: minimumArgs(1, "at least one FILE.lua (or - for standard input)"),
		Example: `  limitctl lint scripts/*.lua
  limitctl lint --disable missing-expire,reply-key queue/*.lua
  limitctl lint --enable missing-expire limiter.lua   # even where .limitctl.yaml turns it off
  limitctl lint -o json --strict limiter.lua
  limitctl lint -o sarif scripts/*.lua > lint.sarif   # upload with github/codeql-action/upload-sarif
  limitctl lint -o github --junit lint.xml scripts/*.lua`,
		ValidArgsFunction: luaFiles,
		Annotations:       map[string]string{outputsAnnotation: strings.Join(tableprint.FormatNames(tableprint.LintFormats...), " ")},
		RunE: func(c *cobra.Command, args []string) error {
			opts.lint.Files, opts.lint.In, opts.lint.Now = args, f.IO.In, f.Now
			if err := cmp.Or(opts.lint.Check(), outfile.CheckFlag("--junit", opts.junit)); err != nil {
				return err // the rules' error first
			}
			return runF(f, opts)
		},
	}
	c.Flags().BoolVar(&opts.lint.Strict, "strict", false, "exit 3 on warnings too")
	c.Flags().StringSliceVar(&opts.lint.Disable, "disable", nil, "rules to turn off for this run (repeat or comma-separate)")
	c.Flags().StringSliceVar(&opts.lint.Enable, "enable", nil, "rules to turn back on that "+lint.ConfigFile+" turns off")
	c.Flags().StringVar(&opts.junit, "junit", "", "also write a JUnit XML report to this file (a test case per file, a failure per error)")
	c.Flags().BoolVar(&opts.explain, "explain", false, "print each finding's whole explanation under its line (-o json always carries it)")
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

func lintRuleList() string {
	s := ""
	for _, r := range lint.Rules() {
		s += fmt.Sprintf("  %-17s %-8s %s\n", r.Name, r.Severity, r.Description)
	}
	return s
}

// runLint prints the diagnostics in the format asked for: the diagnostic lines unless -o says
// otherwise, the CI formats too, and the one-line count on stderr for a person or a CI log.
func runLint(f *Factory, o *lintOptions) error {
	started := f.Now()
	rep, err := lint.Run(o.lint)
	if err != nil {
		return err
	}
	ci := ciformat.LintRun{Files: rep.Files, Diagnostics: rep.Diagnostics, Strict: rep.Strict,
		Version: buildinfo.Resolve(f.Build).Version, Started: started}
	if ci.WorkDir, err = os.Getwd(); err != nil {
		return err
	}
	shortened := false // a diagnostic line gave its explanation to --explain
	printLines := func(w io.Writer) {
		var lines []string
		lines, shortened = rep.Lines(o.explain)
		for _, line := range lines {
			fmt.Fprintln(w, line)
		}
	}
	switch f.Output {
	case tableprint.FormatJSON, tableprint.FormatTSV, tableprint.FormatTable:
		err = writeResult(f.IO.Out, f.IO.TerminalWidth(), f.Output, rep)
	case tableprint.FormatSARIF:
		var log []byte
		if log, err = ciformat.LintSARIF(ci); err == nil {
			_, err = f.IO.Out.Write(log)
		}
		printLines(f.IO.ErrOut) // stdout is the log for the upload; the job's log still shows these
	case tableprint.FormatGitHub:
		_, err = f.IO.Out.Write(ciformat.GitHubAnnotations(ci.WorkDir, rep.Diagnostics))
	default:
		printLines(f.IO.Out)
	}
	if err != nil {
		return err
	}
	// The count on a terminal, and in a CI log whenever stdout is a CI format.
	if f.Output != tableprint.FormatJSON && (f.IO.StderrTTY || slices.Contains(tableprint.LintFormats, f.Output)) {
		fmt.Fprintln(f.IO.ErrOut, rep.Summary(shortened))
	}
	if o.junit == "" {
		return rep.Err()
	}
	report, err := ciformat.LintJUnit(ci)
	return checkOutcome(f, rep.Err(), writeCI(f, ciformat.Files{JUnit: o.junit}, report, nil, err))
}
