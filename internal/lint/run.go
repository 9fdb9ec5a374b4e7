package lint

import (
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/limitctl/limitctl/internal/exitcode"
	"github.com/limitctl/limitctl/internal/tableprint"
	"github.com/limitctl/limitctl/scripts"
)

// Stdin is the name a script read from standard input ("-") goes by.
const Stdin = "<stdin>"

// Request is one lint run: the files to check ("-" for standard input, read from In), the
// rules turned off and back on for it, and whether warnings fail it.
type Request struct {
	Files           []string
	In              io.Reader
	Disable, Enable []string
	Strict          bool
	Now             func() time.Time // times each file's check (time.Now when nil)
}

// File is one script a run read.
type File struct {
	Name    string // as the diagnostics name it: the path given, or <stdin>
	Source  []byte
	Elapsed time.Duration // how long linting it took
}

// Report is what a lint run found, as lint prints it: its diagnostics are the JSON
// (lint -o json) and the rows of its Table; Summary and Err say it in one line.
type Report struct {
	Files       []File       `json:"-"`
	Diagnostics []Diagnostic `json:"diagnostics"`
	Strict      bool         `json:"-"`
	Off         []string     `json:"-"` // the rules turned off for some file, sorted
}

// Check refuses rules that do not exist in Disable and Enable (a usage error), before any file
// is read.
func (req Request) Check() error {
	if _, err := (Config{}).With(req.Disable, req.Enable); err != nil {
		return exitcode.Usagef("%v", err)
	}
	return nil
}

// Run reads every file first (a missing file is reported before any output), resolves each
// file's rules (the project file found from its directory, standard input's from the working
// directory, then Disable and Enable) and lints them. Bad rules and unreadable files are usage
// errors.
func Run(req Request) (Report, error) {
	if req.Now == nil {
		req.Now = time.Now
	}
	if err := req.Check(); err != nil {
		return Report{}, err // flag errors first, whatever the files
	}
	files, err := read(req)
	if err != nil {
		return Report{}, err
	}
	rep := Report{Files: files, Diagnostics: []Diagnostic{}, Strict: req.Strict}
	projects := map[string]Config{}
	off := map[string]bool{}
	for i, f := range files {
		dir := "."
		if f.Name != Stdin {
			dir = filepath.Dir(f.Name)
		}
		project, ok := projects[dir]
		if !ok {
			if project, err = FindConfig(dir); err != nil {
				return Report{}, exitcode.Usagef("%v", err)
			}
			projects[dir] = project
		}
		cfg, err := project.With(req.Disable, req.Enable)
		if err != nil {
			return Report{}, exitcode.Usagef("%v", err)
		}
		begin := req.Now()
		rep.Diagnostics = append(rep.Diagnostics, LintWith(f.Name, f.Source, cfg)...)
		rep.Files[i].Elapsed = req.Now().Sub(begin)
		for r := range cfg.Disabled {
			off[r] = true
		}
	}
	rep.Off = slices.Sorted(maps.Keys(off))
	return rep, nil
}

func read(req Request) ([]File, error) {
	var files []File
	stdinUsed := false
	for _, path := range req.Files {
		if path == "-" {
			if stdinUsed {
				return nil, exitcode.Usagef("standard input (-) given twice")
			}
			stdinUsed = true
			b, err := io.ReadAll(req.In)
			if err != nil {
				return nil, fmt.Errorf("reading standard input: %w", err)
			}
			files = append(files, File{Name: Stdin, Source: b})
			continue
		}
		src, err := scripts.ReadFile(path)
		if err != nil {
			return nil, err
		}
		files = append(files, File{Name: path, Source: []byte(src)})
	}
	return files, nil
}

// Counts are the errors and warnings found.
func (r Report) Counts() (errors, warnings int) {
	for _, d := range r.Diagnostics {
		if d.Severity == SeverityError {
			errors++
		} else {
			warnings++
		}
	}
	return errors, warnings
}

// Lines are the findings as compilers print them, one `file:line:col: severity: rule: message`
// line each, fitted to LineWidth (the long explanation is in Message); with explain the whole
// message follows each line, indented and wrapped. shortened reports whether a line left part
// of its explanation to --explain.
func (r Report) Lines(explain bool) (lines []string, shortened bool) {
	for _, d := range r.Diagnostics {
		line := d.Fit(LineWidth)
		shortened = shortened || line != d.String()
		lines = append(lines, line)
		if explain {
			lines = append(lines, strings.Join(d.Explanation(LineWidth), "\n"))
		}
	}
	return lines, shortened && !explain
}

// Summary is the run in one line: "2 file(s): 1 error(s), 0 warning(s) (off: missing-expire)",
// pointing to --explain when a line was shortened.
func (r Report) Summary(shortened bool) string {
	errs, warns := r.Counts()
	note := ""
	if len(r.Off) > 0 {
		note = fmt.Sprintf(" (off: %s)", strings.Join(r.Off, ", "))
	}
	if shortened {
		note += "; --explain says why"
	}
	return fmt.Sprintf("%d file(s): %d error(s), %d warning(s)%s", len(r.Files), errs, warns, note)
}

// Err is the check's outcome, to return once the report has been printed: any error (with
// Strict, any warning) fails it (exit 3).
func (r Report) Err() error {
	if !HasErrors(r.Diagnostics, r.Strict) {
		return nil
	}
	errs, warns := r.Counts()
	if errs == 0 {
		return exitcode.CheckFailedf("lint: %d warning(s) (--strict)", warns)
	}
	return exitcode.CheckFailedf("lint: %d error(s), %d warning(s)", errs, warns)
}

// Table is a diagnostic per line: the file (whole), position and severity always show; on a
// narrow terminal the message is cut, then the rule goes.
func (r Report) Table() tableprint.Tabular {
	type d = Diagnostic
	return tableprint.Table[Diagnostic]{Rows: r.Diagnostics, Columns: []tableprint.Column[Diagnostic]{
		{Header: "file", Human: func(x d) string { return x.File }, Whole: true},
		{Header: "line", Human: func(x d) string { return strconv.Itoa(x.Line) }},
		{Header: "col", Human: func(x d) string { return strconv.Itoa(x.Col) }},
		{Header: "severity", Human: func(x d) string { return x.Severity }},
		{Header: "rule", Human: func(x d) string { return x.Rule }, Priority: 1},
		{Header: "message", Human: func(x d) string { return x.Message }, MinWidth: 30},
	}}
}
