package cmd

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"

	"github.com/limitctl/limitctl/internal/redisconn"
	"github.com/limitctl/limitctl/internal/tableprint"
	"github.com/limitctl/limitctl/scripts"
)

func newScriptsCmd(f *Factory) *cobra.Command {
	c := &cobra.Command{
		Use:   "scripts",
		Short: "List, show, load and check the Lua scripts limitctl ships",
		Long: `The limiter scripts run atomically inside Redis: loaded once (SCRIPT LOAD) and called by
SHA1 (EVALSHA). The SHA1 printed here is of the exact bytes embedded in the binary.`,
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

// scriptsListTable: on a narrow terminal the description and SHA1 are cut, then the contract goes.
func scriptsListTable(list []scriptJSON) tableprint.Table[scriptJSON] {
	return tableprint.Table[scriptJSON]{Rows: list, Columns: []tableprint.Column[scriptJSON]{
		{Header: "name", Human: func(s scriptJSON) string { return s.Name }},
		{Header: "sha1", Human: func(s scriptJSON) string { return s.SHA1 }, MinWidth: shortSHA1, Priority: 3},
		{Header: "keys", Human: func(s scriptJSON) string { return strings.Join(s.Keys, ",") }, MinWidth: 12, Priority: 2},
		{Header: "argv", Human: func(s scriptJSON) string { return strings.Join(s.Args, ",") }, MinWidth: 12, Priority: 2},
		{Header: "description", Human: func(s scriptJSON) string { return s.Description }, MinWidth: 24, Priority: 1},
	}}
}

// shortSHA1 is how much of a SHA1 a narrow table keeps: enough to tell scripts apart by eye.
const shortSHA1 = 12

func newScriptsListCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:               "list",
		Short:             "Name, SHA1, KEYS/ARGV contract and purpose of every script (no server needed)",
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
		Use:               "show NAME",
		Short:             "Print the exact source of a script",
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

// scriptSource is a script to load or check: a shipped one or a --file.
type scriptSource struct {
	name, source string
}

// selectScripts resolves NAME arguments and --file paths; no names and no files means every
// shipped script.
func selectScripts(names, files []string) ([]scriptSource, error) {
	var out []scriptSource
	for _, n := range names {
		s, err := scripts.Lookup(n)
		if err != nil {
			return nil, usagef("%v", err)
		}
		out = append(out, scriptSource{s.Name, s.Source})
	}
	for _, path := range files {
		src, err := readScriptFile(path)
		if err != nil {
			return nil, err
		}
		out = append(out, scriptSource{strings.TrimSuffix(filepath.Base(path), ".lua"), src})
	}
	if len(names) == 0 && len(files) == 0 {
		for _, s := range scripts.All() {
			out = append(out, scriptSource{s.Name, s.Source})
		}
	}
	return out, nil
}

// readScriptFile reads a Lua script given on the command line ("-" is standard input is not
// offered here: scripts are loaded by name). Binary or empty files are refused before Redis sees them.
func readScriptFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", usagef("cannot read script %s: %v", path, unwrapPathError(err))
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return "", usagef("script %s is empty", path)
	}
	if bytes.IndexByte(b, 0) >= 0 || !utf8.Valid(b) {
		return "", usagef("%s is not a Lua script: it holds binary data", path)
	}
	return string(b), nil
}

func unwrapPathError(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

type loadedJSON struct {
	Name         string `json:"name"`
	SHA1         string `json:"sha1"`
	Node         string `json:"node"`
	CachedBefore bool   `json:"cached_before"`
}

func scriptsLoadTable(loaded []loadedJSON) tableprint.Table[loadedJSON] {
	return tableprint.Table[loadedJSON]{Rows: loaded, Columns: []tableprint.Column[loadedJSON]{
		{Header: "name", Human: func(l loadedJSON) string { return l.Name }, MinWidth: 16},
		{Header: "sha1", Human: func(l loadedJSON) string { return l.SHA1 }, MinWidth: shortSHA1, Priority: 1},
		{Header: "node", Human: func(l loadedJSON) string { return l.Node }, MinWidth: 16, Cut: tableprint.CutMiddle},
		{Header: "cached before", Human: func(l loadedJSON) string { return yesNo(l.CachedBefore) }},
	}}
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
	var selected []scriptSource
	if !opts.functions {
		if selected, err = selectScripts(opts.names, opts.files); err != nil {
			return err
		}
	}
	rdb, _, err := f.Client(ctx)
	if err != nil {
		return err
	}
	// Scripts go to replicas too: Redis 7 does not replicate SCRIPT LOAD, and a replica promoted
	// by a failover would otherwise answer NOSCRIPT. Functions replicate, so masters suffice.
	nodes, release, err := redisconn.AllNodes(ctx, rdb)
	if opts.functions {
		nodes, err = redisconn.Masters(ctx, rdb)
	}
	defer release()
	if err != nil {
		return err
	}
	loaded := []loadedJSON{}
	for _, node := range nodes {
		addr := redisconn.NodeAddr(node)
		if opts.functions {
			row, err := loadFunctions(ctx, node)
			if err != nil {
				return fmt.Errorf("%s: %w", addr, err)
			}
			loaded = append(loaded, row)
			continue
		}
		for _, s := range selected {
			want := scripts.SHA1(s.source)
			exists, err := node.ScriptExists(ctx, want).Result()
			if err != nil {
				return fmt.Errorf("%s: SCRIPT EXISTS: %w", addr, err)
			}
			got, err := node.ScriptLoad(ctx, s.source).Result()
			if err != nil {
				return fmt.Errorf("%s: Redis rejected script %s: %s", addr, s.name, oneLine(err.Error()))
			}
			if got != want {
				return fmt.Errorf("%s: script %s: Redis answered SHA1 %s, expected %s", addr, s.name, got, want)
			}
			loaded = append(loaded, loadedJSON{Name: s.name, SHA1: got, Node: addr, CachedBefore: len(exists) > 0 && exists[0]})
		}
	}
	r := report{table: scriptsLoadTable(loaded), json: struct {
		SchemaVersion int          `json:"schema_version"`
		Loaded        []loadedJSON `json:"loaded"`
	}{SchemaVersion, loaded}}
	return printReport(f.IO.Out, f.IO.TerminalWidth(), format, r)
}

// loadFunctions replaces the limitctl Functions library on one node.
func loadFunctions(ctx context.Context, node *redis.Client) (loadedJSON, error) {
	lib := scripts.FunctionsLibrary()
	before, err := node.FunctionList(ctx, redis.FunctionListQuery{LibraryNamePattern: scripts.LibraryName, WithCode: true}).Result()
	if err != nil {
		return loadedJSON{}, fmt.Errorf("FUNCTION LIST: %w", err)
	}
	cached := len(before) == 1 && before[0].Code == lib
	name, err := node.FunctionLoadReplace(ctx, lib).Result()
	if err != nil {
		return loadedJSON{}, fmt.Errorf("FUNCTION LOAD: %w", err)
	}
	if name != scripts.LibraryName {
		return loadedJSON{}, fmt.Errorf("FUNCTION LOAD answered library %q, expected %q", name, scripts.LibraryName)
	}
	return loadedJSON{Name: scripts.LibraryName, SHA1: scripts.SHA1(lib), Node: redisconn.NodeAddr(node), CachedBefore: cached}, nil
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

type statusScriptJSON struct {
	Name   string `json:"name"`
	SHA1   string `json:"sha1"`
	Cached bool   `json:"cached"`
}

type statusNodeJSON struct {
	Node    string             `json:"node"`
	Role    string             `json:"role"`
	Scripts []statusScriptJSON `json:"scripts"`
}

// statusRow is one script on one node: a line of the scripts status table.
type statusRow struct {
	node   statusNodeJSON
	script statusScriptJSON
}

// scriptsStatusTable: on a narrow terminal the SHA1 is cut to its first characters, then the
// role goes; node, script and whether it is cached always show.
func scriptsStatusTable(nodes []statusNodeJSON, missing int) tableprint.Table[statusRow] {
	var rows []statusRow
	for _, n := range nodes {
		for _, s := range n.Scripts {
			rows = append(rows, statusRow{n, s})
		}
	}
	return tableprint.Table[statusRow]{Rows: rows, Totals: true, Columns: []tableprint.Column[statusRow]{
		{Header: "node", Human: func(r statusRow) string { return r.node.Node }, MinWidth: 16, Cut: tableprint.CutMiddle},
		{Header: "role", Human: func(r statusRow) string { return r.node.Role }, Priority: 2},
		{Header: "name", Human: func(r statusRow) string { return r.script.Name }, MinWidth: 16},
		{Header: "sha1", Human: func(r statusRow) string { return r.script.SHA1 }, MinWidth: shortSHA1, Priority: 1},
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
	selected, err := selectScripts(names, files)
	if err != nil {
		return err
	}
	rdb, _, err := f.Client(ctx)
	if err != nil {
		return err
	}
	nodes, release, err := redisconn.AllNodes(ctx, rdb)
	defer release()
	if err != nil {
		return err
	}
	shas := make([]string, len(selected))
	for i, s := range selected {
		shas[i] = scripts.SHA1(s.source)
	}
	var out []statusNodeJSON
	missing := 0
	for _, node := range nodes {
		addr := redisconn.NodeAddr(node)
		role, err := redisconn.Role(ctx, node)
		if err != nil {
			return fmt.Errorf("%s: ROLE: %w", addr, err)
		}
		exists, err := node.ScriptExists(ctx, shas...).Result()
		if err != nil {
			return fmt.Errorf("%s: SCRIPT EXISTS: %w", addr, err)
		}
		n := statusNodeJSON{Node: addr, Role: role, Scripts: []statusScriptJSON{}}
		for i, s := range selected {
			cached := i < len(exists) && exists[i]
			if !cached {
				missing++
			}
			n.Scripts = append(n.Scripts, statusScriptJSON{Name: s.name, SHA1: shas[i], Cached: cached})
		}
		out = append(out, n)
	}
	r := report{table: scriptsStatusTable(out, missing), json: struct {
		SchemaVersion int              `json:"schema_version"`
		Nodes         []statusNodeJSON `json:"nodes"`
		Missing       int              `json:"missing"`
	}{SchemaVersion, out, missing}}
	if err := printReport(f.IO.Out, f.IO.TerminalWidth(), format, r); err != nil {
		return err
	}
	if missing > 0 {
		return checkFailedf("%d script(s) missing from the script cache (load them with 'limitctl scripts load')", missing)
	}
	return nil
}
