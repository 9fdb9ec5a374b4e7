package tableprint

import (
	"slices"
	"strings"

	"github.com/limitctl/limitctl/internal/exitcode"
)

// Format is an -o name: one of Formats, or a format only one command writes (LintFormats).
type Format string

// The formats every command prints, and lint's own for CI (internal/ciformat writes those).
const (
	FormatTable  Format = "table"
	FormatJSON   Format = "json"
	FormatTSV    Format = "tsv"
	FormatSARIF  Format = "sarif"
	FormatGitHub Format = "github"
)

// Formats are the formats every command prints, in the order help and completion list them.
var Formats = []Format{FormatTable, FormatJSON, FormatTSV}

// LintFormats are lint's formats for CI: a SARIF log for code scanning and GitHub Actions
// annotations.
var LintFormats = []Format{FormatSARIF, FormatGitHub}

// Set stores the flag's value; ParseFormat checks it against what the running command writes.
func (f *Format) Set(s string) error { *f = Format(s); return nil }

func (f *Format) String() string { return string(*f) }

// Type is the flag's type as help shows it.
func (f *Format) Type() string { return "string" }

// ParseFormat resolves -o: name when given, else table on a terminal and tsv when piped. extra
// are the formats only the running command writes; anything else is a usage error in one line.
func ParseFormat(name Format, terminal bool, extra ...Format) (Format, error) {
	switch {
	case slices.Contains(Formats, name), slices.Contains(extra, name):
		return name, nil
	case name == "" && terminal:
		return FormatTable, nil
	case name == "":
		return FormatTSV, nil
	case len(extra) > 0:
		return "", exitcode.Usagef("unknown output %q: want %s", name, SayFormats(append(slices.Clone(Formats), extra...)...))
	case slices.Contains(LintFormats, name):
		return "", exitcode.Usagef("unknown output %q: want %s (%s are lint's)", name, SayFormats(Formats...),
			strings.Join(FormatNames(LintFormats...), " and "))
	}
	return "", exitcode.Usagef("unknown output %q: want %s", name, SayFormats(Formats...))
}

// SayFormats lists formats for a person: "table, json or tsv".
func SayFormats(formats ...Format) string {
	names := FormatNames(formats...)
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// FormatNames are formats as strings, as completion offers them.
func FormatNames(formats ...Format) []string {
	names := make([]string, len(formats))
	for i, f := range formats {
		names[i] = string(f)
	}
	return names
}
