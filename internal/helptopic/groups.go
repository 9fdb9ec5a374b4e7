package helptopic

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/limitctl/limitctl/internal/human"
)

// A Group is a group of a command's flags as its --help lists them (hey's and gh's way): the
// flags' names on a line or two, under the topic that explains each (limitctl help TOPIC lists
// them with their usage). Flags nil is the inherited flags no other group names (the
// connection's), named alone.
type Group struct {
	Name, Topic string
	Flags       []string
}

// Groups are a command's flag groups over its own flags and those it inherits.
type Groups struct {
	List             []Group
	Local, Inherited *pflag.FlagSet
}

// flags are the flags of group g, in its order (the inherited ones in the order they were
// defined), without the hidden.
func (gs Groups) flags(g Group) []*pflag.Flag {
	var out []*pflag.Flag
	if g.Flags != nil {
		for _, name := range g.Flags {
			if f := gs.Local.Lookup(name); f != nil && !f.Hidden {
				out = append(out, f)
			} else if f := gs.Inherited.Lookup(name); f != nil && !f.Hidden {
				out = append(out, f)
			}
		}
		return out
	}
	gs.Inherited.VisitAll(func(f *pflag.Flag) {
		if !f.Hidden && f.Name != "help" && !slices.ContainsFunc(gs.List, func(o Group) bool { return slices.Contains(o.Flags, f.Name) }) {
			out = append(out, f)
		}
	})
	return out
}

// Lines are the groups as --help lists them: each group's name, its topic, and its flags'
// names (with their values' names, but the inherited), wrapped at Width.
func (gs Groups) Lines() []string {
	var lines []string
	for _, g := range gs.List {
		flags := gs.flags(g)
		if len(flags) == 0 {
			continue
		}
		pieces := []human.Piece{{Text: fmt.Sprintf("%s [%s]:", g.Name, g.Topic), Sep: "  "}}
		for _, f := range flags {
			pieces = append(pieces, human.Piece{Text: token(f, g.Flags != nil), Sep: "  "})
		}
		lines = append(lines, human.Lay(pieces, Width, 4)...)
	}
	return lines
}

// Usage is the flags of every group whose topic is topic, each group under a heading with its
// flags' usage, as pflag writes it at Width.
func (gs Groups) Usage(topic string) string {
	var b strings.Builder
	for _, g := range gs.List {
		set := pflag.NewFlagSet(g.Name, pflag.ContinueOnError)
		set.SortFlags = false
		for _, f := range gs.flags(g) {
			set.AddFlag(f)
		}
		if g.Topic == topic && set.HasFlags() {
			fmt.Fprintf(&b, "%s flags:\n%s\n", g.Name, set.FlagUsagesWrapped(Width))
		}
	}
	return b.String()
}

// Missing are the command's own visible flags that no group names.
func (gs Groups) Missing() []string {
	var missing []string
	gs.Local.VisitAll(func(f *pflag.Flag) {
		if !f.Hidden && f.Name != "help" && !slices.ContainsFunc(gs.List, func(g Group) bool { return slices.Contains(g.Flags, f.Name) }) {
			missing = append(missing, f.Name)
		}
	})
	return missing
}

// token is a flag as a group's line names it: "-f, --limiter-file FILE", "--limit N" (its
// value's name only with value).
func token(f *pflag.Flag, value bool) string {
	t := "--" + f.Name
	if f.Shorthand != "" {
		t = "-" + f.Shorthand + ", " + t
	}
	name, _ := pflag.UnquoteUsage(f)
	switch name {
	case "duration":
		name = "D"
	case "int", "uint":
		name = "N"
	case "float":
		name = "X"
	case "string", "stringArray", "strings":
		name = "S"
	}
	if value && name != "" {
		t += " " + name
	}
	return t
}
