package tableprint

import (
	"errors"
	"testing"

	"github.com/limitctl/limitctl/internal/exitcode"
)

func TestParseFormatDefaultsByTerminalAndKeepsWhatTheCommandWrites(t *testing.T) {
	cases := []struct {
		name     Format
		terminal bool
		extra    []Format
		want     Format
	}{
		{"", true, nil, FormatTable},
		{"", false, nil, FormatTSV},
		{FormatJSON, true, nil, FormatJSON},
		{FormatTable, false, nil, FormatTable},
		{FormatSARIF, false, LintFormats, FormatSARIF},
		{FormatTSV, false, LintFormats, FormatTSV},
	}
	for _, c := range cases {
		got, err := ParseFormat(c.name, c.terminal, c.extra...)
		if err != nil || got != c.want {
			t.Errorf("ParseFormat(%q, %v, %v) = %q, %v; want %q", c.name, c.terminal, c.extra, got, err, c.want)
		}
	}
}

func TestParseFormatRefusesInOneLineNamingWhatIsWanted(t *testing.T) {
	cases := []struct {
		name  Format
		extra []Format
		want  string
	}{
		{"yaml", nil, `unknown output "yaml": want table, json or tsv`},
		{FormatSARIF, nil, `unknown output "sarif": want table, json or tsv (sarif and github are lint's)`},
		{"yaml", LintFormats, `unknown output "yaml": want table, json, tsv, sarif or github`},
	}
	for _, c := range cases {
		_, err := ParseFormat(c.name, true, c.extra...)
		var usage *exitcode.UsageError
		if !errors.As(err, &usage) || err.Error() != c.want {
			t.Errorf("ParseFormat(%q, %v) = %v; want the usage error %q", c.name, c.extra, err, c.want)
		}
	}
}
