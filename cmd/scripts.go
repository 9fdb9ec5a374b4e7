package cmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/limitctl/limitctl/internal/scriptcache"
	"github.com/limitctl/limitctl/internal/tableprint"
)

func newScriptsCmd(f *Factory) *cobra.Command {
	c := &cobra.Command{
		Use:   "scripts",
		Short: "List, show, load and check the Lua scripts limitctl ships",
		Long: `The limiter scripts run atomically inside Redis: loaded once (SCRIPT LOAD) and called by
SHA1 (EVALSHA). The SHA1 printed here is of the exact bytes embedded in the binary.`,
		Example: `  limitctl scripts list
  limitctl scripts show concurrency_acquire
  limitctl scripts load --addr 10.0.0.5:6379
  limitctl scripts status --url redis://cache:6379`,
		Args: noArgs,
		RunE: func(c *cobra.Command, args []string) error { return c.Help() },
	}
	c.AddCommand(newScriptsListCmd(f, nil), newScriptsShowCmd(f, nil), newScriptsLoadCmd(f, nil), newScriptsStatusCmd(f, nil))
	return c
}

func newScriptsListCmd(f *Factory, runF func(*Factory) error) *cobra.Command {
	if runF == nil {
		runF = func(f *Factory) error {
			format, err := f.Format()
			if err != nil {
				return err
			}
			return printResult(f, format, scriptcache.List())
		}
	}
	return &cobra.Command{
		Use:   "list",
		Short: "Name, SHA1, KEYS/ARGV contract and purpose of every script (no server needed)",
		Example: `  limitctl scripts list
  limitctl scripts list -o json | jq -r '.scripts[] | .name + " " + .sha1'`,
		Args:              noArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE:              func(c *cobra.Command, args []string) error { return runF(f) },
	}
}

func newScriptsShowCmd(f *Factory, runF func(*Factory, string) error) *cobra.Command {
	if runF == nil {
		runF = runScriptsShow
	}
	return &cobra.Command{
		Use:   "show NAME",
		Short: "Print the exact source of a script",
		Example: `  limitctl scripts show concurrency_acquire
  limitctl scripts show token_bucket > token_bucket.lua`,
		Args:              exactArgs(1, "one script name (see 'limitctl scripts list')"),
		ValidArgsFunction: completeOneScriptName,
		RunE:              func(c *cobra.Command, args []string) error { return runF(f, args[0]) },
	}
}

// runScriptsShow prints the source as it is, or the JSON of it.
func runScriptsShow(f *Factory, name string) error {
	s, err := scriptcache.Show(name)
	if err != nil {
		return err
	}
	if f.Output == tableprint.FormatJSON {
		return writeJSON(f.IO.Out, s)
	}
	_, err = fmt.Fprint(f.IO.Out, s.Source)
	return err
}

type scriptsLoadOptions struct {
	names     []string
	files     []string
	functions bool
}

func newScriptsLoadCmd(f *Factory, runF func(context.Context, *Factory, *scriptsLoadOptions) error) *cobra.Command {
	if runF == nil {
		runF = runScriptsLoad
	}
	opts := &scriptsLoadOptions{}
	c := &cobra.Command{
		Use:   "load [NAME...] [--file F.lua...] [--functions]",
		Short: "SCRIPT LOAD the scripts on the server (every node of a cluster, replicas too)",
		Long: `Loads the named scripts (all shipped scripts when none is named) and any --file scripts with
SCRIPT LOAD on every master and replica (Redis 7 does not replicate SCRIPT LOAD, so a replica
promoted by a failover would answer NOSCRIPT), checks that the SHA1 Redis answers equals the one computed here,
and says whether each was already cached. --functions loads the limitctl Functions library
instead (FUNCTION LOAD REPLACE), which survives restarts and failovers.`,
		Example: `  limitctl scripts load
  limitctl scripts load concurrency_acquire --addr 10.0.0.5:6379
  limitctl scripts load --file limiter/acquire.lua --url rediss://cache:6380
  limitctl scripts load --functions --addr 10.0.0.5:7000 --cluster`,
		ValidArgsFunction: completeScriptNames,
		RunE: func(c *cobra.Command, args []string) error {
			opts.names = args
			if opts.functions && (len(args) > 0 || len(opts.files) > 0) {
				return usagef("--functions loads the whole limitctl library; drop the script names and --file")
			}
			return runF(c.Context(), f, opts)
		},
	}
	c.Flags().StringArrayVar(&opts.files, "file", nil, "a Lua script file to load as well (repeatable)")
	c.Flags().BoolVar(&opts.functions, "functions", false, "load the limitctl Functions library (FUNCTION LOAD REPLACE) instead")
	c.RegisterFlagCompletionFunc("file", luaFiles)
	return c
}

func runScriptsLoad(ctx context.Context, f *Factory, o *scriptsLoadOptions) error {
	format, err := f.Format()
	if err != nil {
		return err
	}
	var selected []scriptcache.Source
	if !o.functions {
		if selected, err = scriptcache.Select(o.names, o.files); err != nil {
			return err
		}
	}
	rdb, _, err := f.Client(ctx)
	if err != nil {
		return err
	}
	load := func() (scriptcache.LoadReport, error) { return scriptcache.Load(ctx, rdb, selected) }
	if o.functions {
		load = func() (scriptcache.LoadReport, error) { return scriptcache.LoadLibrary(ctx, rdb) }
	}
	r, err := load()
	if err != nil {
		return err
	}
	return printResult(f, format, r)
}

type scriptsStatusOptions struct {
	names, files []string
}

func newScriptsStatusCmd(f *Factory, runF func(context.Context, *Factory, *scriptsStatusOptions) error) *cobra.Command {
	if runF == nil {
		runF = runScriptsStatus
	}
	opts := &scriptsStatusOptions{}
	c := &cobra.Command{
		Use:   "status [NAME...] [--file F.lua...]",
		Short: "SCRIPT EXISTS for every script on every node, replicas too; exit 3 if any is missing",
		Long: `Asks every node (masters and replicas) whether each script is in its script cache. The cache
is lost on restart, failover and SCRIPT FLUSH; limitctl's strategies reload on NOSCRIPT, but a
client that only sends EVALSHA does not. Exits 3 when any script is missing anywhere.`,
		Example: `  limitctl scripts status
  limitctl scripts status concurrency_acquire --addr 10.0.0.5:7000 --cluster
  limitctl scripts status --file limiter/acquire.lua -o json`,
		ValidArgsFunction: completeScriptNames,
		RunE: func(c *cobra.Command, args []string) error {
			opts.names = args
			return runF(c.Context(), f, opts)
		},
	}
	c.Flags().StringArrayVar(&opts.files, "file", nil, "a Lua script file to check as well (repeatable)")
	c.RegisterFlagCompletionFunc("file", luaFiles)
	return c
}

func runScriptsStatus(ctx context.Context, f *Factory, o *scriptsStatusOptions) error {
	format, err := f.Format()
	if err != nil {
		return err
	}
	selected, err := scriptcache.Select(o.names, o.files)
	if err != nil {
		return err
	}
	rdb, _, err := f.Client(ctx)
	if err != nil {
		return err
	}
	r, err := scriptcache.Status(ctx, rdb, selected)
	if err != nil {
		return err
	}
	if err := printResult(f, format, r); err != nil {
		return err
	}
	return r.Err()
}
