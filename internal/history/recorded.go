package history

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/limitctl/limitctl/internal/contract"
	"github.com/limitctl/limitctl/internal/human"
)

// Recorded is what a hammer Result judged from records (limitctl judge) read: the files with what
// each held, and whose clock each strategy's limiter decided on.
type Recorded struct {
	Files []File
	// Clocks are each strategy's limiter's clock by name: server (a clock the records do not
	// show, each admit judged between its request's start and end: every HTTP record) unless
	// a hammer --record file says otherwise.
	Clocks map[string]contract.Clock
}

// Clock is the named strategy's clock.
func (r *Recorded) Clock(name string) contract.Clock {
	if c, ok := r.Clocks[name]; ok {
		return c
	}
	return contract.ServerClock
}

// FileJSON is a file as the JSON gives it.
type FileJSON struct {
	File       string `json:"file"`
	Format     string `json:"format"`
	Lines      int64  `json:"lines"`
	Records    int64  `json:"records"`
	NotJudged  int64  `json:"not_judged"`
	Bad        int64  `json:"bad_lines"`
	Duplicates int64  `json:"duplicates"`
	Truncated  bool   `json:"truncated"`
	FirstLate  int64  `json:"first_late_line,omitempty"`
}

// JSON is each file read, as the JSON gives it.
func (r *Recorded) JSON() []FileJSON {
	out := make([]FileJSON, len(r.Files))
	for i, f := range r.Files {
		s := f.Stats
		out[i] = FileJSON{File: f.Name, Format: formatName(f), Lines: s.Lines, Records: s.Records,
			NotJudged: s.NotJudged(), Bad: s.Bad, Duplicates: s.Duplicates, Truncated: s.Truncated > 0, FirstLate: s.FirstLate}
	}
	return out
}

func formatName(f File) string {
	if f.Format == FormatVegeta && f.CSV {
		return "vegeta-csv"
	}
	return string(f.Format)
}

// Lines say what each file held that was not judged, under the run's shape line.
func (r *Recorded) Lines() []string {
	var out []string
	for _, f := range r.Files {
		s := f.Stats
		parts := []string{fmt.Sprintf("%s %s", human.Count(s.Records), human.Plural(s.Records, "record", "records"))}
		if n := s.NotJudged(); n > 0 {
			var why []string
			for _, c := range []struct {
				n    int64
				what string
			}{{s.StartUnknown, "start unknown"}, {s.EndUnknown, "end unknown"}, {s.StatusUnknown, "status unknown"},
				{s.Backwards, "end before start"}, {s.Late, "out of time order"}} {
				if c.n > 0 {
					why = append(why, human.Count(c.n)+" "+c.what)
				}
			}
			late := ""
			if s.FirstLate > 0 {
				late = fmt.Sprintf(", the first at line %d", s.FirstLate)
			}
			parts = append(parts, fmt.Sprintf("%s not judged (%s%s)", human.Count(n), strings.Join(why, ", "), late))
		}
		if s.Bad > 0 {
			parts = append(parts, fmt.Sprintf("%s bad %s skipped", human.Count(s.Bad), human.Plural(s.Bad, "line", "lines")))
		}
		if s.Duplicates > 0 {
			parts = append(parts, fmt.Sprintf("%s %s dropped", human.Count(s.Duplicates), human.Plural(s.Duplicates, "duplicate", "duplicates")))
		}
		if s.Truncated > 0 {
			parts = append(parts, "its last line cut short")
		}
		out = append(out, fmt.Sprintf("%s (%s): %s", filepath.Base(f.Name), formatName(f), strings.Join(parts, ", ")))
	}
	return out
}
