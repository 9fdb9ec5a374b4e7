package cmd

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/limitctl/limitctl/internal/scriptcache"
	"github.com/limitctl/limitctl/internal/tableprint"
	"github.com/limitctl/limitctl/scripts"
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
	c.AddCommand(newScriptsListCmd(f), newScriptsShowCmd(f), newScriptsLoadCmd(f), newScriptsStatusCmd(f))
	return c
}

type scriptJSON struct {
	Name        string   `json:"name"`
	SHA1        string   `json:"sha1"`
	Keys        []string `json:"keys"`
	Args        []string `json:"args"`
	Description string   `json:"description"`
}

// scriptsListTable: the name and the whole SHA1 always show (it is what EVALSHA takes). On a
// narrower terminal the description goes first (cut, then dropped), then ARGV, then KEYS,
// each whole; -o json and scripts show have them all.
func scriptsListTable(list []scriptJSON) tableprint.Table[scriptJSON] {
	return tableprint.Table[scriptJSON]{Rows: list, Columns: []tableprint.Column[scriptJSON]{
		{Header: "name", Human: func(s scriptJSON) string { return s.Name }, Whole: true},
		{Header: "sha1", Human: func(s scriptJSON) string { return s.SHA1 }, Whole: true},
		{Header: "keys", Human: func(s scriptJSON) string { return strings.Join(s.Keys, ",") }, Whole: true, Priority: 1},
		{Header: "argv", Human: func(s scriptJSON) string { return strings.Join(s.Args, ",") }, Whole: true, Priority: 2},
		{Header: "description", Human: func(s scriptJSON) string { return s.Description }, MinWidth: 24, Priority: 3},
	}}
}

func newScriptsListCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "Name, SHA1, KEYS/ARGV contract and purpose of every script (no server needed)",
		Example: `  limitctl scripts list
  limitctl scripts list -o json | jq -r '.scripts[] | .name + " " + .sha1'`,
		Args:              noArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(c *cobra.Command, args []string) error {
			format, err := f.Format()
			if err != nil {
				return err
			}
			list := []scriptJSON{}
			for _, s := range scripts.All() {
				list = append(list, scriptJSON{Name: s.Name, SHA1: s.SHA1(), Keys: s.Keys, Args: s.Args, Description: s.Description})
			}
			r := report{table: scriptsListTable(list), json: struct {
				SchemaVersion int          `json:"schema_version"`
				Scripts       []scriptJSON `json:"scripts"`
			}{SchemaVersion, list}}
			return printReport(f.IO.Out, f.IO.TerminalWidth(), format, r)
		},
	}
}

func newScriptsShowCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "show NAME",
		Short: "Print the exact source of a script",
		Example: `  limitctl scripts show concurrency_acquire
  limitctl scripts show token_bucket > token_bucket.lua`,
		Args:              exactArgs(1, "one script name (see 'limitctl scripts list')"),
		ValidArgsFunction: completeOneScriptName,
		RunE: func(c *cobra.Command, args []string) error {
			s, err := scripts.Lookup(args[0])
			if err != nil {
				return usagef("%v", err)
			}
			if f.Output == "json" {
				return writeJSON(f.IO.Out, struct {
					SchemaVersion int    `json:"schema_version"`
					Name          string `json:"name"`
					SHA1          string `json:"sha1"`
					Source        string `json:"source"`
				}{SchemaVersion, s.Name, s.SHA1(), s.Source})
			}
			_, err = fmt.Fprint(f.IO.Out, s.Source)
			return err
		},
	}
}

type scriptsLoadOptions struct {
	names     []string
	files     []string
	functions bool
}

func newScriptsLoadCmd(f *Factory) *cobra.Command {
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
			return runScriptsLoad(c.Context(), f, opts)
		},
	}
	c.Flags().StringArrayVar(&opts.files, "file", nil, "a Lua script file to load as well (repeatable)")
	c.Flags().BoolVar(&opts.functions, "functions", false, "load the limitctl Functions library (FUNCTION LOAD REPLACE) instead")
	c.RegisterFlagCompletionFunc("file", luaFiles)
	return c
}

func runScriptsLoad(ctx context.Context, f *Factory, opts *scriptsLoadOptions) error {
	format, err := f.Format()
	if err != nil {
		return err
	}
	var selected []scriptcache.Source
	if !opts.functions {
		if selected, err = scriptcache.Select(opts.names, opts.files); err != nil {
			return err
		}
	}
	rdb, _, err := f.Client(ctx)
	if err != nil {
		return err
	}
	var loaded []scriptcache.Loaded
	if opts.functions {
		loaded, err = scriptcache.LoadLibrary(ctx, rdb)
	} else {
		loaded, err = scriptcache.Load(ctx, rdb, selected)
	}
	if err != nil {
		return err
	}
	r := report{table: scriptsLoadTable(loaded), json: struct {
		SchemaVersion int                  `json:"schema_version"`
		Loaded        []scriptcache.Loaded `json:"loaded"`
	}{SchemaVersion, loaded}}
	return printReport(f.IO.Out, f.IO.TerminalWidth(), format, r)
}

func scriptsLoadTable(loaded []scriptcache.Loaded) tableprint.Table[scriptcache.Loaded] {
	type l = scriptcache.Loaded
	return tableprint.Table[scriptcache.Loaded]{Rows: loaded, Columns: []tableprint.Column[l]{
		{Header: "name", Human: func(x l) string { return x.Name }, Whole: true},
		{Header: "sha1", Human: func(x l) string { return x.SHA1 }, Whole: true},
		{Header: "node", Human: func(x l) string { return x.Node }, Whole: true},
		{Header: "cached before", Human: func(x l) string { return yesNo(x.CachedBefore) }, Priority: 1},
	}}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// statusRow is one script on one node: a line of the scripts status table.
type statusRow struct {
	node   scriptcache.NodeStatus
	script scriptcache.ScriptStatus
}

// scriptsStatusTable: node, script and whether it is cached always show; on a narrow terminal
// the SHA1 goes (whole: it is never cut), then the role.
func scriptsStatusTable(nodes []scriptcache.NodeStatus, missing int) tableprint.Table[statusRow] {
	var rows []statusRow
	for _, n := range nodes {
		for _, s := range n.Scripts {
			rows = append(rows, statusRow{n, s})
		}
	}
	return tableprint.Table[statusRow]{Rows: rows, Totals: true, Columns: []tableprint.Column[statusRow]{
		{Header: "node", Human: func(r statusRow) string { return r.node.Node }, Whole: true},
		{Header: "role", Human: func(r statusRow) string { return r.node.Role }, Priority: 1},
		{Header: "name", Human: func(r statusRow) string { return r.script.Name }, Whole: true},
		{Header: "sha1", Human: func(r statusRow) string { return r.script.SHA1 }, Whole: true, Priority: 2},
		{Header: "cached", Human: func(r statusRow) string { return yesNo(r.script.Cached) }, Total: strconv.Itoa(missing) + " missing"},
	}}
}

func newScriptsStatusCmd(f *Factory) *cobra.Command {
	var files []string
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
			return runScriptsStatus(c.Context(), f, args, files)
		},
	}
	c.Flags().StringArrayVar(&files, "file", nil, "a Lua script file to check as well (repeatable)")
	c.RegisterFlagCompletionFunc("file", luaFiles)
	return c
}

func runScriptsStatus(ctx context.Context, f *Factory, names, files []string) error {
	format, err := f.Format()
	if err != nil {
		return err
	}
	selected, err := scriptcache.Select(names, files)
	if err != nil {
		return err
	}
	rdb, _, err := f.Client(ctx)
	if err != nil {
		return err
	}
	nodes, missing, err := scriptcache.Status(ctx, rdb, selected)
	if err != nil {
		return err
	}
	r := report{table: scriptsStatusTable(nodes, missing), json: struct {
		SchemaVersion int                      `json:"schema_version"`
		Nodes         []scriptcache.NodeStatus `json:"nodes"`
		Missing       int                      `json:"missing"`
	}{SchemaVersion, nodes, missing}}
	if err := printReport(f.IO.Out, f.IO.TerminalWidth(), format, r); err != nil {
		return err
	}
	if missing > 0 {
		return checkFailedf("%d script(s) missing from the script cache (load them with 'limitctl scripts load')", missing)
	}
	return nil
}
