package scriptcache

import (
	"strconv"
	"strings"

	"github.com/limitctl/limitctl/internal/exitcode"
	"github.com/limitctl/limitctl/internal/human"
	"github.com/limitctl/limitctl/internal/tableprint"
	"github.com/limitctl/limitctl/scripts"
)

// The results of the scripts commands: each is what its command prints as JSON, and its Table
// the same rows for table and tsv.

// Listing is every shipped script with its contract (scripts list).
type Listing struct {
	Scripts []scripts.Script `json:"scripts"`
}

// List is the shipped scripts; it needs no server.
func List() Listing { return Listing{Scripts: scripts.All()} }

// Table: the name and the whole SHA1 always show (it is what EVALSHA takes). On a narrower
// terminal the description goes first (cut, then dropped), then ARGV, then KEYS, each whole;
// -o json and scripts show have them all.
func (l Listing) Table() tableprint.Tabular {
	type s = scripts.Script
	return tableprint.Table[scripts.Script]{Rows: l.Scripts, Columns: []tableprint.Column[s]{
		{Header: "name", Human: func(x s) string { return x.Name }, Whole: true},
		{Header: "sha1", Human: func(x s) string { return x.SHA1() }, Whole: true},
		{Header: "keys", Human: func(x s) string { return strings.Join(x.Keys, ",") }, Whole: true, Priority: 1},
		{Header: "argv", Human: func(x s) string { return strings.Join(x.Args, ",") }, Whole: true, Priority: 2},
		{Header: "description", Human: func(x s) string { return x.Description }, MinWidth: 24, Priority: 3},
	}}
}

// Shown is one shipped script's exact source (scripts show).
type Shown struct {
	Name   string `json:"name"`
	SHA1   string `json:"sha1"`
	Source string `json:"source"`
}

// Show is the shipped script named name; an unknown name is a usage error.
func Show(name string) (Shown, error) {
	s, err := scripts.Lookup(name)
	if err != nil {
		return Shown{}, exitcode.Usagef("%v", err)
	}
	return Shown{Name: s.Name, SHA1: s.SHA1(), Source: s.Source}, nil
}

// LoadReport is what scripts load loaded, per script and node.
type LoadReport struct {
	Loaded []Loaded `json:"loaded"`
}

// Table: name, SHA1 and node always show, whole; on a narrow terminal whether it was cached
// before goes.
func (r LoadReport) Table() tableprint.Tabular {
	type l = Loaded
	return tableprint.Table[Loaded]{Rows: r.Loaded, Columns: []tableprint.Column[l]{
		{Header: "name", Human: func(x l) string { return x.Name }, Whole: true},
		{Header: "sha1", Human: func(x l) string { return x.SHA1 }, Whole: true},
		{Header: "node", Human: func(x l) string { return x.Node }, Whole: true},
		{Header: "cached before", Human: func(x l) string { return human.YesNo(x.CachedBefore) }, Priority: 1},
	}}
}

// StatusReport is every node's script cache (scripts status).
type StatusReport struct {
	Nodes   []NodeStatus `json:"nodes"`
	Missing int          `json:"missing"`
}

// Err is the check's outcome, to return once the report has been printed: a script missing
// anywhere fails it (exit 3).
func (r StatusReport) Err() error {
	if r.Missing > 0 {
		return exitcode.CheckFailedf("%d script(s) missing from the script cache (load them with 'limitctl scripts load')", r.Missing)
	}
	return nil
}

// statusRow is one script on one node: a line of the status table.
type statusRow struct {
	node   NodeStatus
	script ScriptStatus
}

// Table is a line per script and node: node, script and whether it is cached always show; on a
// narrow terminal the SHA1 goes (whole: it is never cut), then the role.
func (r StatusReport) Table() tableprint.Tabular {
	var rows []statusRow
	for _, n := range r.Nodes {
		for _, s := range n.Scripts {
			rows = append(rows, statusRow{n, s})
		}
	}
	return tableprint.Table[statusRow]{Rows: rows, Totals: true, Columns: []tableprint.Column[statusRow]{
		{Header: "node", Human: func(r statusRow) string { return r.node.Node }, Whole: true},
		{Header: "role", Human: func(r statusRow) string { return r.node.Role }, Priority: 1},
		{Header: "name", Human: func(r statusRow) string { return r.script.Name }, Whole: true},
		{Header: "sha1", Human: func(r statusRow) string { return r.script.SHA1 }, Whole: true, Priority: 2},
		{Header: "cached", Human: func(r statusRow) string { return human.YesNo(r.script.Cached) }, Total: strconv.Itoa(r.Missing) + " missing"},
	}}
}
