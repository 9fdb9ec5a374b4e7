package report

import (
	"io"
	"time"

	"github.com/limitctl/limitctl/internal/hammer"
	"github.com/limitctl/limitctl/internal/outfile"
)

// WriteRun writes the report of a hammer run to path: its summary, its assertions worded as the
// summary words them (hammer.ActualText), and the points rec kept; generated is when.
func WriteRun(path string, res hammer.Result, rec *Recorder, generated time.Time) error {
	asserts := make([]Assertion, len(res.Assertions))
	for i, r := range res.Assertions {
		asserts[i] = Assertion{Expr: r.Expr, Passed: r.Passed, Actual: hammer.ActualText(r)}
	}
	return outfile.Write(path, func(w io.Writer) error {
		return Write(w, Data{Summary: res.Summary, Series: rec.Series(), Assertions: asserts, Generated: generated, Redis: res.RedisTrace})
	})
}
