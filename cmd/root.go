// Package cmd holds limitctl's commands: each parses its flags into an options struct, builds
// what it needs through the Factory, calls one internal function and prints the result.
package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"

	"github.com/limitctl/limitctl/internal/redisconn"
)

// Execute runs limitctl with args and returns the process exit code. SIGINT and SIGTERM cancel
// the context; long commands stop, report what they did, and exit 130.
func Execute(ctx context.Context, build Build, args []string, streams *IOStreams) int {
	redis.SetLogger(redisconn.QuietLogger{})
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	f := NewFactory(streams, build)
	defer f.Close()
	root := NewRootCmd(f)
	root.SetArgs(args)
	c, err := root.ExecuteContextC(ctx)
	var usage *usageError
	if errors.As(err, &usage) && usage.command == "" && c != nil {
		usage.command = c.CommandPath()
	}
	return exitCode(err, streams.ErrOut, f.secrets())
}

// NewRootCmd builds the command tree on a factory.
func NewRootCmd(f *Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "limitctl",
		Short: "Operate and load-test Redis-backed rate limiters",
		Long: `limitctl operates and load-tests Redis-backed rate limiters.

It inspects and purges live limiter keys, proves under heavy concurrency that a limiter
script never admits more than its limit (hammer), lints Lua scripts for the known
mistakes, and manages the atomic scripts it ships (scripts).`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(c *cobra.Command, args []string) error {
			f.Conn.DBSet = c.Flags().Changed("db")
			warnPasswordFlag(c, f)
			if f.Getenv("NO_COLOR") != "" {
				f.NoColor = true
			}
			if _, err := f.Format(); err != nil {
				return err
			}
			return nil
		},
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &usageError{msg: err.Error(), command: c.CommandPath()}
	})
	pf := root.PersistentFlags()
	pf.StringVarP(&f.Conn.URL, "url", "u", "", "Redis URL: redis://[user:password@]host:port[/db], rediss://..., unix:///path (env REDIS_URL)")
	pf.StringArrayVar(&f.Conn.Addrs, "addr", nil, "Redis host:port (repeat for a cluster's seed nodes)")
	pf.BoolVar(&f.Conn.Cluster, "cluster", false, "treat the target as a Redis Cluster")
	pf.StringVar(&f.Conn.Username, "username", "", "ACL username")
	pf.StringVar(&f.Conn.Password, "password", "", "password (prefer env REDISCLI_AUTH or --password-file: flags show in ps)")
	pf.StringVar(&f.Conn.PasswordFile, "password-file", "", "read the password from this file")
	pf.IntVar(&f.Conn.DB, "db", 0, "database number (not with a cluster)")
	pf.BoolVar(&f.Conn.TLS, "tls", false, "connect with TLS")
	pf.StringVar(&f.Conn.TLSCA, "tls-ca", "", "CA certificate (PEM) to verify the server")
	pf.StringVar(&f.Conn.TLSCert, "tls-cert", "", "client certificate (PEM)")
	pf.StringVar(&f.Conn.TLSKey, "tls-key", "", "client private key (PEM)")
	pf.BoolVar(&f.Conn.TLSInsecure, "tls-insecure", false, "skip verification of the server's certificate (unsafe)")
	pf.DurationVar(&f.Conn.Timeout, "timeout", redisconn.DefaultTimeout, "bound on connecting and on every Redis call")
	pf.StringVarP(&f.Output, "output", "o", "", "output format: table, json or tsv (default table on a terminal, tsv when piped)")
	pf.BoolVar(&f.NoColor, "no-color", false, "no colour in output (also env NO_COLOR)")

	root.AddCommand(
		newScriptsCmd(f),
		newLintCmd(f),
		newHammerCmd(f),
		newInspectCmd(f),
		newPurgeCmd(f),
		newVersionCmd(f),
	)
	root.RegisterFlagCompletionFunc("output", fixedCompletion("table", "json", "tsv"))
	// cobra's completion command, added here rather than at Execute so that it writes to the
	// factory's streams and the man pages and tests see the whole tree.
	root.SetIn(f.IO.In)
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	root.InitDefaultCompletionCmd()
	documentCompletionCmd(root)
	return root
}

// noArgs and the like report wrong argument counts as usage errors.
func noArgs(c *cobra.Command, args []string) error {
	if len(args) > 0 {
		if c.HasSubCommands() {
			return &usageError{msg: fmt.Sprintf("unknown command %q for %s", args[0], c.CommandPath()), command: c.CommandPath()}
		}
		return &usageError{msg: "unexpected argument " + args[0], command: c.CommandPath()}
	}
	return nil
}

func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) != n {
			return &usageError{msg: "want " + what, command: c.CommandPath()}
		}
		return nil
	}
}
