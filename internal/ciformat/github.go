package ciformat

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/limitctl/limitctl/internal/lint"
)

// GitHubAnnotations are lint's diagnostics as GitHub Actions workflow commands, one line each:
//
//	::error file=scripts/acquire.lua,line=3,col=5,title=global-write::x is a global ...
//
// The runner turns each into an annotation on the file's line (warnings as ::warning). Paths are
// relative to wd, the checkout a job runs in.
func GitHubAnnotations(wd string, diags []lint.Diagnostic) []byte {
	var b bytes.Buffer
	for _, d := range diags {
		command := "error"
		if d.Severity == lint.SeverityWarning {
			command = "warning"
		}
		path, _ := relPath(wd, d.File)
		fmt.Fprintf(&b, "::%s file=%s,line=%d,col=%d,title=%s::%s\n", command,
			escapeProperty(path), d.Line, d.Col, escapeProperty(d.Rule), escapeData(d.Message))
	}
	return b.Bytes()
}

// The runner unescapes a command's message and its property values (as the actions toolkit's
// escapeData and escapeProperty escape them): %, CR and LF in both, and in a property also : and
// , which would end the value. One pass each: the %25 written for a % is not escaped again.
var (
	dataEscaper     = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	propertyEscaper = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
)

func escapeData(s string) string     { return dataEscaper.Replace(s) }
func escapeProperty(s string) string { return propertyEscaper.Replace(s) }
