// Package cmd holds limitctl's commands: each parses its flags into an options struct and hands
// it to its run function (runF, which a test swaps to check the parsing without a server); the
// run builds what it needs through the Factory, calls its room's function (keys.InspectPatterns,
// hammer.Run, lint.Run, scriptcache.Status, ...) and prints what that returns: the domain type,
// as JSON or as its table (printResult), with the exit code its error carries (exitCode).
package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/limitctl/limitctl/internal/embedded"
	"github.com/limitctl/limitctl/internal/helptopic"
	"github.com/limitctl/limitctl/internal/human"
	"github.com/limitctl/limitctl/internal/iostreams"
	"github.com/limitctl/limitctl/internal/redisconn"
	"github.com/limitctl/limitctl/internal/tableprint"
)

// Execute runs limitctl with args and returns the process exit code. SIGINT, SIGTERM and SIGHUP
// (the terminal closed) cancel the context; long commands stop, report what they did where
// they still can, stop any throw-away server, and exit 130. A second signal (say, Ctrl-C again
// while the hammer deletes its keys) exits 130 at once.
func Execute(ctx context.Context, build Build, args []string, streams *IOStreams) int {
	redis.SetLogger(redisconn.QuietLogger{})
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(signals)
	finished := make(chan struct{})
	defer close(finished)
	go func() {
		select {
		case <-signals:
			cancel()
		case <-finished:
			return
		}
		select {
		case <-signals:
			fmt.Fprintln(streams.ErrOut, "limitctl: interrupted again: exiting at once")
			embedded.StopAll()
			exitNow(ExitInterrupted)
		case <-finished:
		}
	}()
	f := NewFactory(streams, build)
	defer f.Close()
	return runRoot(ctx, f, NewRootCmd(f), args)
}

// exitNow ends the process on a second signal, without waiting for clean-up.
var exitNow = os.Exit

// runRoot executes the command tree and maps its outcome to the exit code, in one place: the
// error's one line on stderr and, under -o json, a JSON error object on stdout when the command
// printed no report of its own.
func runRoot(ctx context.Context, f *Factory, root *cobra.Command, args []string) int {
	out, wrote := iostreams.TrackOut(f.IO.Out)
	stdout := f.IO.Out
	f.IO.Out = out
	defer func() { f.IO.Out = stdout }()
	root.SetArgs(args)
	c, err := root.ExecuteContextC(ctx)
	var usage *usageError
	if errors.As(err, &usage) && usage.Command == "" && c != nil {
		usage.Command = c.CommandPath()
	}
	if err != nil && f.Output == tableprint.FormatJSON && !wrote() {
		writeJSONError(stdout, err, f.secrets())
	}
	return exitCode(err, f.IO.ErrOut, f.IO.ErrTerminalWidth(), f.secrets())
}

// NewRootCmd builds the command tree on a factory.
func NewRootCmd(f *Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "limitctl",
		Short: "Operate and load-test Redis-backed rate limiters",
		Long: `limitctl operates and load-tests Redis-backed rate limiters.

It inspects, purges and resets live limiter keys, proves under heavy concurrency that a limiter
script never admits more than its limit (hammer), lints Lua scripts for the known
mistakes, and manages the atomic scripts it ships (scripts).`,
		Example: `  limitctl hammer
  limitctl inspect 'rl:*' --stale 10m --addr 10.0.0.5:6379
  limitctl purge 'rl:conc:*' --older-than 10m --dry-run
  limitctl lint limiter/acquire.lua
  limitctl scripts list`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(c *cobra.Command, args []string) error {
			f.Conn.DBSet = c.Flags().Changed("db")
			warnPasswordFlag(c, f)
			if f.Getenv("NO_COLOR") != "" {
				f.IO.NoColor = true
			}
			if _, err := f.Format(commandOutputs(c)...); err != nil {
				return err
			}
			return nil
		},
	}
	// cobra's own complaints (a bad flag, a stray argument) become usage errors here, so that
	// no exit code depends on the wording of cobra's messages.
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		msg := err.Error()
		var unknown *pflag.NotExistError
		if errors.As(err, &unknown) && unknown.GetSpecifiedShortnames() == "" {
			msg += human.DidYouMean(flagSuggestions(c, unknown.GetSpecifiedName()), "--")
		}
		return &usageError{Msg: msg, Command: c.CommandPath()}
	})
	// --redis URL is what users of other Redis tools type first: the same flag as --url.
	root.SetGlobalNormalizationFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		if name == "redis" {
			name = "url"
		}
		return pflag.NormalizedName(name)
	})
	root.Args = noArgs
	root.RunE = func(c *cobra.Command, args []string) error { return c.Help() }
	root.SetHelpTemplate(helpTemplate)
	pf := root.PersistentFlags()
	pf.SortFlags = false // listed as defined: the target first, the output last
	f.Conn.Bind(pf)
	pf.VarP(&f.Output, "output", "o", "output `FORMAT`: "+tableprint.SayFormats(tableprint.Formats...)+" (default table on a terminal, tsv when piped)")
	pf.BoolVar(&f.IO.NoColor, "no-color", false, "no colour in output (also env NO_COLOR)")

	hammer := newHammerCmd(f, nil)
	root.AddCommand(
		newScriptsCmd(f),
		newLintCmd(f, nil),
		hammer,
		newJudgeCmd(f, nil),
		newInspectCmd(f, nil),
		newPurgeCmd(f, nil),
		newResetCmd(f, nil),
		newVersionCmd(f, nil),
	)
	root.SetHelpCommand(helptopic.Command())
	addHelpTopics(root, hammer, hammerFlagGroups)
	root.RegisterFlagCompletionFunc("output", func(c *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
		return tableprint.FormatNames(append(slices.Clone(tableprint.Formats), commandOutputs(c)...)...), cobra.ShellCompDirectiveNoFileComp
	})
	// cobra's completion command, added here rather than at Execute so that it writes to the
	// factory's streams and the man pages and tests see the whole tree.
	root.SetIn(f.IO.In)
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	root.InitDefaultCompletionCmd()
	documentCompletionCmd(root)
	usageArgs(root)
	return root
}

// usageArgs makes every command's argument check (cobra's own validators included, as in the
// completion commands) report a usage error.
func usageArgs(c *cobra.Command) {
	if check := c.Args; check != nil {
		c.Args = func(c *cobra.Command, args []string) error {
			err := check(c, args)
			var usage *usageError
			if err != nil && !errors.As(err, &usage) {
				return &usageError{Msg: err.Error(), Command: c.CommandPath()}
			}
			return err
		}
	}
	for _, sub := range c.Commands() {
		usageArgs(sub)
	}
}

// noArgs and the like report wrong argument counts as usage errors.
func noArgs(c *cobra.Command, args []string) error {
	if len(args) > 0 {
		if c.HasSubCommands() {
			if c.SuggestionsMinimumDistance <= 0 {
				c.SuggestionsMinimumDistance = 2 // cobra's own default, set where it suggests
			}
			return &usageError{Msg: fmt.Sprintf("unknown command %q for %s%s", args[0], c.CommandPath(), human.DidYouMean(c.SuggestionsFor(args[0]), "")),
				Command: c.CommandPath()}
		}
		return &usageError{Msg: "unexpected argument " + args[0], Command: c.CommandPath()}
	}
	return nil
}

// helpTemplate leads with what a command is, how it is called, examples and flags (cobra's usage
// block); the long explanation comes after, under Details, so a flag is found without scrolling
// past prose. A help topic (limitctl help contract) is its text alone.
const helpTemplate = `{{with .Short}}{{.}}

{{end}}{{if or .Runnable .HasSubCommands}}{{.UsageString}}
Details:
{{end}}{{with .Long}}{{. | trimTrailingWhitespaces}}
{{end}}`

// flagSuggestions are the visible flags of c (its own and inherited) that name is a typo of or
// the start of (human.Near), as cobra suggests commands.
func flagSuggestions(c *cobra.Command, name string) []string {
	var names []string
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	})
	return human.Near(name, names)
}

// minimumArgs wants at least n arguments: "want " + what otherwise.
func minimumArgs(n int, what string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) < n {
			return &usageError{Msg: "want " + what, Command: c.CommandPath()}
		}
		return nil
	}
}

// exactArgs wants exactly n arguments: "want " + what otherwise.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) != n {
			return &usageError{Msg: "want " + what, Command: c.CommandPath()}
		}
		return nil
	}
}

// outputsAnnotation lists, on a command, the -o formats only it writes.
const outputsAnnotation = "limitctl/outputs"

// commandOutputs are the -o formats c writes besides tableprint.Formats.
func commandOutputs(c *cobra.Command) []tableprint.Format {
	var formats []tableprint.Format
	for _, name := range strings.Fields(c.Annotations[outputsAnnotation]) {
		formats = append(formats, tableprint.Format(name))
	}
	return formats
}
