package judge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/contract"
	"github.com/limitctl/limitctl/internal/evidence/overshoot"
	"github.com/limitctl/limitctl/internal/exitcode"
	"github.com/limitctl/limitctl/internal/hammer"
	"github.com/limitctl/limitctl/internal/history"
	"github.com/limitctl/limitctl/internal/httptarget"
	"github.com/limitctl/limitctl/internal/human"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/limiterfile"
)

// Options are one judging: the files, how they are read, and the limiter they are judged
// against.
type Options struct {
	// Files are the record files ("-" alone is Stdin, os.Stdin when nil); Inputs, when set,
	// are read instead.
	Files  []string
	Stdin  io.Reader
	Inputs []history.Input
	Format history.Format // FormatAuto recognises each file's
	KeyBy  history.KeyBy
	// SkipBad counts a malformed line and reads on; without it one is a usage error naming
	// its file and line.
	SkipBad bool
	// The limiter. A hammer --record file names its own; a value given here replaces it (the
	// same run judged against another limit), and the other formats need them: Limit always,
	// Window for the windows and the bucket (which refills Limit per Window), Hold for the
	// concurrency limiter behind HTTP.
	Limiter limiter.Kind
	Limit   int64
	Window  time.Duration
	Hold    time.Duration
	// Admitted and Refused read an HTTP record's response as --http-admitted and
	// --http-refused do ("" their defaults); a hammer --record file's calls carry their
	// decisions.
	Admitted, Refused string
}

// historyEntries bounds what the evidence keeps to state its power, about 16 bytes an entry
// (overshoot.HistoryBudget): past it the power is the records' first part's, so a file of ten
// million records is judged in the memory of one of a million.
const historyEntries = 1 << 18

// checkEvery is how many records are read between looks at the context.
const checkEvery = 1 << 14

// Run judges the records of o and returns them as a run's Result: one strategy per key group
// (a hammer --record file's strategies; each key of the other formats, by o.KeyBy), each with
// its verdict and the records behind its first overshoot, judged by hammer.Judge, where a
// verdict that proves the limiter wrong fails the run. Bad input (a flag, a file's format, a
// malformed line) is a usage error; a context ended early returns what was judged so far,
// marked interrupted.
func Run(ctx context.Context, o Options) (hammer.Result, error) {
	decide, err := httptarget.NewDecisions(o.Admitted, o.Refused)
	if err != nil {
		return hammer.Result{}, asUsage(err)
	}
	headers, named := decide.Headers()
	if !named {
		return hammer.Result{}, exitcode.Usagef("--admitted and --refused read a response header by a name written out (header['Retry-After']): the records keep only those")
	}
	read := history.Options{Format: o.Format, KeyBy: o.KeyBy, Headers: headers, SkipBad: o.SkipBad}
	var r *history.Reader
	if o.Inputs == nil && len(o.Files) == 1 && o.Files[0] == "-" && o.Stdin != nil {
		o.Inputs = []history.Input{{Name: "standard input", R: o.Stdin}}
	}
	if o.Inputs != nil {
		r, err = history.New(o.Inputs, read)
	} else {
		r, err = history.Open(o.Files, read)
	}
	var pathErr *fs.PathError
	if errors.As(err, &pathErr) {
		return hammer.Result{}, exitcode.Usagef("%s: %v", pathErr.Path, pathErr.Err) // a file named that cannot be opened
	}
	if err != nil {
		return hammer.Result{}, err
	}
	defer r.Close()
	j, err := newJudging(o, r.Files(), decide, headers)
	if err != nil {
		return hammer.Result{}, err
	}
	interrupted := false
	for n := 0; r.Next(); n++ {
		if n%checkEvery == 0 && ctx.Err() != nil {
			interrupted = true
			break
		}
		if err := j.add(r.Record()); err != nil {
			return hammer.Result{}, err
		}
	}
	if err := r.Err(); err != nil {
		return hammer.Result{}, err
	}
	return j.result(r.Files(), interrupted), nil
}

// asUsage makes a flag's error a usage error (exit 2), keeping one that already is one.
func asUsage(err error) error {
	var coder exitcode.Coder
	if errors.As(err, &coder) {
		return err
	}
	return exitcode.Usagef("%v", err)
}

// limits are what the records are judged against.
type limits struct {
	kind       limiter.Kind
	limit      int64
	window     time.Duration
	hold       time.Duration
	rate       float64 // the bucket's refill per second: limit per window
	staleAfter time.Duration
}

// resolveLimits takes a hammer --record file's limiter (the first file's) unless o names one,
// and checks that what the records are judged by is whole.
func resolveLimits(o Options, files []history.File) (limits, error) {
	var l limits
	http := false
	for _, f := range files {
		if f.Header == nil {
			http = true
			continue
		}
		if l.kind == "" {
			h := f.Header
			l.kind, l.limit = limiter.Kind(h.Limiter), h.Limit
			l.window = time.Duration(h.WindowUs) * time.Microsecond
			l.hold = time.Duration(h.HoldUs) * time.Microsecond
			l.staleAfter = time.Duration(h.StaleAfterUs) * time.Microsecond
		}
		for _, s := range f.Header.Strategies {
			http = http || s.Target == history.TargetHTTP
		}
	}
	if o.Limiter != "" {
		l.kind = o.Limiter
	}
	if o.Limit != 0 {
		l.limit = o.Limit
	}
	if o.Window != 0 {
		l.window = o.Window
	}
	if o.Hold != 0 {
		l.hold = o.Hold
	}
	if l.kind == "" {
		return l, exitcode.Usagef("--limiter is needed to judge %s records: %s (a hammer --record file names its own)",
			human.Or(formatsOf(files)), human.Or(limiter.Names(limiter.Kinds())))
	}
	stated := limiterfile.Limiter{Kind: string(l.kind), Limit: l.limit, Window: l.window, Hold: l.hold, StaleAfter: l.staleAfter}
	if err := stated.Validate(nil); err != nil {
		return l, err
	}
	kind := l.kind.Describe()
	switch {
	case l.limit <= 0:
		return l, exitcode.Usagef("--limit must be at least 1: the limit the records are judged against")
	case !kind.Releases && l.window <= 0:
		return l, exitcode.Usagef("--window is needed for a %s limiter (the token bucket refills --limit per --window)", l.kind)
	case kind.Releases && http && l.hold <= 0:
		return l, exitcode.Usagef("--hold D is needed to judge a concurrency limiter behind HTTP: the time the endpoint holds each admitted request's slot before it answers; without it nothing bounds when a slot was held")
	}
	if l.window > 0 {
		l.rate = float64(l.limit) / l.window.Seconds()
	}
	return l, nil
}

// formatsOf names the files' formats, each once.
func formatsOf(files []history.File) []string {
	var out []string
	seen := map[history.Format]bool{}
	for _, f := range files {
		if !seen[f.Format] {
			seen[f.Format] = true
			out = append(out, string(f.Format))
		}
	}
	return out
}

// judging is one judging under way: the groups met so far, and what they share.
type judging struct {
	lim     limits
	keyBy   history.KeyBy
	decide  *httptarget.Decisions
	headers []string // the names of a record's Headers, in order
	files   []history.File
	// base is the records' clock zero (ns): the earliest hammer --record file's run start,
	// else the first record placed in time. Every interval the evidence is told counts from it.
	base    int64
	baseSet bool
	groups  []*group
	byName  map[string]*group
	kept    ring                     // the latest admits and refusals judged, for what is behind a verdict
	budget  *overshoot.HistoryBudget // what every group's evidence keeps to state its power
	// from and to span the records placed in time (ns).
	from, to int64
}

func newJudging(o Options, files []history.File, decide *httptarget.Decisions, headers []string) (*judging, error) {
	lim, err := resolveLimits(o, files)
	if err != nil {
		return nil, err
	}
	j := &judging{lim: lim, keyBy: o.KeyBy, decide: decide, headers: headers, files: files, byName: map[string]*group{},
		kept: newRing(ringSize), budget: overshoot.NewHistoryBudget(historyEntries)}
	for _, f := range files {
		if h := f.Header; h != nil && (!j.baseSet || h.StartedUnixNs < j.base) {
			j.base, j.baseSet = h.StartedUnixNs, true
		}
	}
	return j, nil
}

// add judges one record.
func (j *judging) add(rec *history.Record) error {
	if rec.Flags&history.NotJudged == 0 {
		if !j.baseSet {
			j.base, j.baseSet = rec.StartNs, true
		}
		if j.from == 0 || rec.StartNs < j.from {
			j.from = rec.StartNs
		}
		j.to = max(j.to, rec.EndNs)
	}
	g, err := j.groupOf(rec)
	if err != nil {
		return err
	}
	g.add(rec)
	return nil
}

// groupOf is the group rec is judged in: its strategy in a hammer --record file, its key in
// the other formats.
func (j *judging) groupOf(rec *history.Record) (*group, error) {
	f := &j.files[rec.File]
	name := rec.Key
	if f.Header != nil {
		name = rec.Strategy
	}
	if name == "" {
		name = defaultGroup
	}
	if g, ok := j.byName[name]; ok {
		return g, nil
	}
	var recorded *history.RecordedStrategy
	if f.Header != nil {
		for i := range f.Header.Strategies {
			if f.Header.Strategies[i].Name == rec.Strategy {
				recorded = &f.Header.Strategies[i]
			}
		}
		if recorded == nil {
			return nil, exitcode.Usagef("%s line %d: strategy %q is not in the file's header", f.Name, rec.Line, rec.Strategy)
		}
	}
	g, err := newGroup(j, name, recorded, f.Header)
	if err != nil {
		return nil, err
	}
	j.groups = append(j.groups, g)
	j.byName[name] = g
	return g, nil
}

// defaultGroup names the records' one group when they are not split by key.
const defaultGroup = "records"

// since is t (ns on the records' clock) from the records' zero.
func (j *judging) since(t int64) time.Duration { return time.Duration(t - j.base) }

// result is the judged records as a run's Result.
func (j *judging) result(files []history.File, interrupted bool) hammer.Result {
	var span time.Duration
	if j.to > j.from {
		span = time.Duration(j.to - j.from)
	}
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = filepath.Base(f.Name)
	}
	sum := bench.Summary{Target: bench.Target{Kind: "records", Addr: strings.Join(names, ", ")}, Limiter: j.lim.kind,
		Limit: j.lim.limit, Duration: span, Interrupted: interrupted}
	clocks := map[string]contract.Clock{}
	for _, f := range files {
		if f.Header != nil && sum.RunID == "" {
			sum.RunID = f.Header.RunID
		}
	}
	for _, g := range j.groups {
		sum.Strategies = append(sum.Strategies, g.finish())
		clocks[g.name] = g.clock
	}
	res := hammer.Result{Summary: sum, Interrupted: interrupted, Recorded: &history.Recorded{Files: files, Clocks: clocks}}
	hammer.RecordedTrace(context.Background(), &res, files)
	res.Judgement = hammer.Judge(hammer.Rules{Limiter: j.lim.kind, ErrorsAsked: true, Recorded: true}, sum)
	return res
}

// describe is a record's place, as messages name it: "results.json line 12".
func (j *judging) describe(rec *history.Record) string {
	return fmt.Sprintf("%s line %d", j.files[rec.File].Name, rec.Line)
}

// Flags are judge's command line as given; Resolve checks them into Options. The limiter
// (limiterfile.Limiter: its kind, limit, window and hold) may come from a limiter file
// (LimiterFile, -f), under the flags given; a script's contract and assertions are the hammer's.
type Flags struct {
	limiterfile.Limiter
	LimiterFile       string
	Files             []string
	Format, KeyBy     string
	Admitted, Refused string
	SkipBad           bool
	// Given reports whether a flag was given on the command line (the file fills in the rest).
	Given func(flag string) bool
}

// Resolve checks the flags (a usage error names the flag) and returns the judging they ask for.
func (f Flags) Resolve() (Options, error) {
	if f.LimiterFile != "" {
		file, err := limiterfile.Read(f.LimiterFile)
		if err != nil {
			return Options{}, err
		}
		given := f.Given
		if given == nil {
			given = func(string) bool { return false }
		}
		file.Layer(&f.Limiter, given)
	}
	o := Options{Files: f.Files, Limit: f.Limit, Window: f.Window, Hold: f.Hold, Admitted: f.Admitted, Refused: f.Refused, SkipBad: f.SkipBad}
	var err error
	if len(f.Files) == 0 {
		return o, exitcode.Usagef("name the record files to judge: limitctl judge FILE... (- is standard input)")
	}
	if err := f.Limiter.Validate(f.Given); err != nil {
		return o, err
	}
	if f.Kind != "" {
		if o.Limiter, err = limiter.ParseKind(f.Kind); err != nil {
			return o, exitcode.Usagef("--limiter: %v", err)
		}
	}
	if o.Format, err = history.ParseFormat(f.Format); err != nil {
		return o, err
	}
	if o.KeyBy, err = history.ParseKeyBy(f.KeyBy); err != nil {
		return o, err
	}
	return o, nil
}
