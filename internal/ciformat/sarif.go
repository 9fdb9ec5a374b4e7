package ciformat

import (
	"bytes"
	"cmp"
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/limitctl/limitctl/internal/lint"
)

// The SARIF log is written from these types rather than with github.com/owenrumney/go-sarif:
// its 2.1.0 types always serialise the "unset" sentinels (artifactLocation.index -1, rank -1,
// byteOffset -1...), which Microsoft's SARIF multitool reports as warnings (SARIF2004), and
// every optional array as []. These carry exactly what code scanning reads.
type (
	sarifLog struct {
		Schema  string     `json:"$schema"`
		Version string     `json:"version"`
		Runs    []sarifRun `json:"runs"`
	}
	sarifRun struct {
		Tool               sarifTool                   `json:"tool"`
		Invocations        []sarifInvocation           `json:"invocations"`
		OriginalURIBaseIDs map[string]sarifArtifactLoc `json:"originalUriBaseIds,omitempty"`
		Results            []sarifResult               `json:"results"` // [] when clean: code scanning then closes earlier alerts
		ColumnKind         string                      `json:"columnKind"`
	}
	// sarifInvocation says where lint ran: code scanning takes it as the checkout path that
	// resolves an absolute file: URI (a file named outside the working directory).
	sarifInvocation struct {
		ExecutionSuccessful bool             `json:"executionSuccessful"`
		WorkingDirectory    sarifArtifactLoc `json:"workingDirectory"`
	}
	sarifTool struct {
		Driver sarifDriver `json:"driver"`
	}
	sarifDriver struct {
		Name           string      `json:"name"`
		Version        string      `json:"version,omitempty"`
		InformationURI string      `json:"informationUri"`
		Rules          []sarifRule `json:"rules"`
	}
	sarifRule struct {
		ID                   string              `json:"id"`
		Name                 string              `json:"name"`
		ShortDescription     sarifText           `json:"shortDescription"`
		FullDescription      sarifText           `json:"fullDescription"`
		Help                 sarifHelp           `json:"help"`
		HelpURI              string              `json:"helpUri"`
		DefaultConfiguration sarifRuleConfig     `json:"defaultConfiguration"`
		Properties           map[string][]string `json:"properties"`
	}
	sarifText struct {
		Text string `json:"text"`
	}
	sarifHelp struct {
		Text     string `json:"text"`
		Markdown string `json:"markdown"`
	}
	sarifRuleConfig struct {
		Level string `json:"level"`
	}
	sarifResult struct {
		RuleID    string          `json:"ruleId"`
		RuleIndex int             `json:"ruleIndex"`
		Level     string          `json:"level"`
		Message   sarifText       `json:"message"`
		Locations []sarifLocation `json:"locations"`
	}
	sarifLocation struct {
		PhysicalLocation sarifPhysical `json:"physicalLocation"`
	}
	sarifPhysical struct {
		ArtifactLocation sarifArtifactLoc `json:"artifactLocation"`
		Region           sarifRegion      `json:"region"`
	}
	sarifArtifactLoc struct {
		URI       string `json:"uri"`
		URIBaseID string `json:"uriBaseId,omitempty"`
	}
	sarifRegion struct {
		StartLine   int `json:"startLine"`
		StartColumn int `json:"startColumn"`
	}
)

const (
	sarifSchema = "https://json.schemastore.org/sarif-2.1.0.json"
	// srcRoot is the base of every relative URI: the working directory lint ran in.
	srcRoot = "%SRCROOT%"
	// InformationURI is where limitctl and its rules are documented.
	InformationURI = "https://github.com/limitctl/limitctl"
	// LintHelpAnchor is the README section that documents the rules.
	LintHelpAnchor = "#lint-what-redis-would-refuse-and-what-hurts-later"
)

// LintSARIF is the run as a SARIF 2.1.0 log for code scanning: one run whose tool lists every
// lint rule with its help, and one result per diagnostic with its level, message and location
// (startLine, and startColumn in code points, lint counting bytes). URIs are relative to the
// working directory (%SRCROOT%), which code scanning resolves against the repository.
func LintSARIF(r LintRun) ([]byte, error) {
	rules := lint.Rules()
	index := map[string]int{}
	driver := sarifDriver{Name: "limitctl", Version: toolVersion(r.Version), InformationURI: InformationURI}
	for i, rule := range rules {
		index[rule.Name] = i
		driver.Rules = append(driver.Rules, sarifRuleOf(rule))
	}
	sources := map[string][]byte{}
	for _, f := range r.Files {
		sources[f.Name] = f.Source
	}
	run := sarifRun{Tool: sarifTool{Driver: driver}, Results: []sarifResult{}, ColumnKind: "unicodeCodePoints",
		Invocations: []sarifInvocation{{ExecutionSuccessful: true, WorkingDirectory: sarifArtifactLoc{URI: dirURI(r.WorkDir)}}}}
	for _, d := range r.Diagnostics {
		uri, relative := fileURI(r.WorkDir, d.File)
		loc := sarifArtifactLoc{URI: uri}
		if relative {
			loc.URIBaseID = srcRoot
			run.OriginalURIBaseIDs = map[string]sarifArtifactLoc{srcRoot: {URI: dirURI(r.WorkDir)}}
		}
		run.Results = append(run.Results, sarifResult{
			RuleID: d.Rule, RuleIndex: index[d.Rule], Level: d.Severity, Message: sarifText{d.Message},
			Locations: []sarifLocation{{PhysicalLocation: sarifPhysical{
				ArtifactLocation: loc,
				Region:           sarifRegion{StartLine: d.Line, StartColumn: codePointColumn(sources[d.File], d.Line, d.Col)},
			}}},
		})
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	err := enc.Encode(sarifLog{Schema: sarifSchema, Version: "2.1.0", Runs: []sarifRun{run}})
	return b.Bytes(), err
}

// sarifRuleOf describes a lint rule: its description in full and, shortened at its first
// semicolon, as the short one; the help adds how to silence it.
func sarifRuleOf(rule lint.Rule) sarifRule {
	short, _, _ := strings.Cut(rule.Description, ";")
	help := rule.Description + "."
	markdown := "**" + rule.Name + "** (" + rule.Severity + "): " + rule.Description + "."
	if rule.Name != lint.RuleSyntax { // a file that does not parse cannot be excused
		silence := "Suppress it on one line with the comment `-- limitctl:ignore " + rule.Name +
			"` on the line before, or for a project with `lint: {disable: [" + rule.Name + "]}` in " + lint.ConfigFile + "."
		help += "\n\n" + strings.ReplaceAll(silence, "`", "")
		markdown += "\n\n" + silence
	}
	return sarifRule{
		ID:               rule.Name,
		ShortDescription: sarifText{capitalize(short)}, FullDescription: sarifText{capitalize(rule.Description) + "."},
		Help:    sarifHelp{Text: capitalize(help), Markdown: markdown},
		HelpURI: InformationURI + LintHelpAnchor, DefaultConfiguration: sarifRuleConfig{Level: rule.Severity},
		Properties: map[string][]string{"tags": {"redis", "lua"}},
	}
}

// codePointColumn turns lint's 1-based byte column into SARIF's 1-based code-point column on
// that line of src (the same for ASCII; unchanged when the line is not in src).
func codePointColumn(src []byte, line, col int) int {
	for i := 1; i < line; i++ {
		nl := bytes.IndexByte(src, '\n')
		if nl < 0 {
			return col
		}
		src = src[nl+1:]
	}
	if col-1 > len(src) {
		return col
	}
	return utf8.RuneCount(src[:col-1]) + 1
}

// toolVersion is limitctl's version as SARIF compares versions, starting with a digit: v0.3.0
// is 0.3.0, and a build without one (dev) sorts before every release as 0.0.0-dev.
func toolVersion(v string) string {
	v = strings.TrimPrefix(v, "v")
	if v == "" || v[0] < '0' || v[0] > '9' {
		return "0.0.0-" + cmp.Or(v, "unknown")
	}
	return v
}

func capitalize(s string) string {
	r, size := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[size:]
}
