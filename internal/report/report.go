// Package report writes the hammer's --report file: one self-contained HTML page with, per
// strategy, the in-flight (or per-window) count against the limit over time, throughput and
// latency over time, and the summary table. Charts are SVG drawn by go-chart and inlined; the
// page loads nothing from anywhere.
package report

import (
	"cmp"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/wcharczuk/go-chart/v2/drawing"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/bench/verdict"
	"github.com/limitctl/limitctl/internal/human"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/redistrace"
	"github.com/limitctl/limitctl/internal/trace"
)

// Data is everything a report shows.
type Data struct {
	Summary bench.Summary
	// Series holds each strategy's points over time, matched to Summary.Strategies by name
	// (a Recorder's Series()); a strategy without one gets its table row but no charts.
	Series []Series
	// Assertions are the --assert results; empty when none were given.
	Assertions []Assertion
	// Generated is when the report was written; zero leaves it out (tests, reproducible files).
	Generated time.Time
	// Redis is, per HTTP target traced in its Redis (hammer --http-redis-trace), what its
	// application's commands show; nil without a trace.
	Redis map[string]*redistrace.Summary
}

// Assertion is one --assert expression and its verdict.
type Assertion struct {
	Expr   string
	Passed bool
	Actual string
}

//go:embed report.html.tmpl
var pageSource string

var pageTemplate = template.Must(template.New("report").Parse(pageSource))

// Write renders the report to w.
func Write(w io.Writer, data Data) error {
	p, err := build(data)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := pageTemplate.Execute(w, p); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// page is what the template draws: every value already formatted.
type page struct {
	Title       string
	Facts       []string
	RunID       string
	Generated   string
	Interrupted bool
	Assertions  []Assertion
	Retries     bool // some strategy retried: the table gets the column
	Overview    template.HTML
	CountLabel  string
	Limit       string
	Strategies  []strategyView
}

type strategyView struct {
	Name, ID   string
	Colour     string // its line on the overview chart
	Over       bool
	Strict     bool         // some refusal was proven wrong
	Tone       verdict.Tone // good, bad or warn: the badge's and the section's colour
	Badge      string
	Verdict    string
	Power      string // what the evidence would have proven (verdict.PowerText); empty when not measured
	Count      template.HTML
	Throughput template.HTML
	Latency    template.HTML
	Refusals   template.HTML // false rejects over time
	Unjudged   string        // why refusals were not judged
	Cells      row
	Errors     []string
	Samples    []bench.ErrorSample
	// How is the first overshoot's sequence diagram (empty without one), HowNotes what it
	// cannot show.
	How      template.HTML
	HowNotes []string
	// Refused is the first false reject's refused call as a sequence diagram; RefusedText says
	// what was counted against it (also when its record was no longer kept).
	Refused     template.HTML
	RefusedText string
	// Redis is how the application decides as its commands show (its summary line), beside the
	// verdict; RedisTone colours it (check-then-act bad, atomic good). RedisCommands are the
	// commands behind the first overshoot, the race's marked, and RedisStory what they show.
	Redis         string
	RedisTone     verdict.Tone
	RedisCommands []redisRow
	RedisStory    string
}

// redisRow is one command behind a first overshoot, as the report's table lists it.
type redisRow struct {
	At, Cmd, Keys, Client, Reply, In string
	Race                             string // "read" or "write" when the race names it
}

// row is one strategy's line of the summary table.
type row struct {
	Attempts, Admitted, Rejected, Errors, Retries string
	Peak, Overshoot, Events, Throughput           string
	FalseRejects                                  string
	P50, P90, P99, P999, Max, Server              string
}

func build(d Data) (page, error) {
	s := d.Summary
	countLabel := limiter.Default.Describe().ChartLabel
	if s.Limiter != "" {
		countLabel = s.Limiter.Describe().ChartLabel
	}
	p := page{
		Title:       "limitctl hammer · " + strings.TrimSpace(string(s.Limiter)+" · limit "+human.Count(s.Limit)),
		RunID:       s.RunID,
		Interrupted: s.Interrupted,
		Assertions:  d.Assertions,
		CountLabel:  countLabel,
		Limit:       human.Count(s.Limit),
	}
	if s.Limiter != "" {
		p.Facts = append(p.Facts, string(s.Limiter))
	}
	p.Facts = append(p.Facts, "limit "+human.Count(s.Limit))
	if s.Workers > 0 {
		p.Facts = append(p.Facts, human.Count(int64(s.Workers))+" workers")
	}
	if s.Duration > 0 {
		p.Facts = append(p.Facts, human.Clock(s.Duration))
	}
	if t := strings.TrimSpace(s.Target.Kind + " " + s.Target.Addr); t != "" {
		p.Facts = append(p.Facts, t)
	}
	if !d.Generated.IsZero() {
		p.Generated = d.Generated.Format(time.RFC3339)
	}

	series := map[string]Series{}
	var ordered []Series
	for _, se := range d.Series {
		series[se.Name] = se
	}
	ids := map[string]bool{}
	for _, st := range s.Strategies {
		se := series[st.Name]
		counts := placeWindows(se, st.Windows, s.Duration)
		ordered = append(ordered, counts)
		v := strategyView{
			Name:     st.Name,
			ID:       uniqueID(st.Name, ids),
			Colour:   "#" + hex(strategyHues[len(p.Strategies)%len(strategyHues)]),
			Over:     st.Overshoot > 0,
			Strict:   st.FalseRejects > 0,
			Unjudged: st.RefusalsUnjudged,
			Cells:    cells(st, s.Duration),
			Errors:   human.ErrorKinds(st.ErrorsByKind),
			Samples:  st.ErrorSamples,
		}
		v.Tone, v.Badge, v.Verdict = judged(st, s.Limiter, s.Limit, s.Duration)
		v.Power = verdict.PowerText(st, s.Limiter, s.Limit)
		var err error
		if v.Count, err = countChart(counts, s.Limit, countLabel); err != nil {
			return page{}, fmt.Errorf("%s count chart: %w", st.Name, err)
		}
		if v.Throughput, err = throughputChart(se); err != nil {
			return page{}, fmt.Errorf("%s throughput chart: %w", st.Name, err)
		}
		if v.Latency, err = latencyChart(se); err != nil {
			return page{}, fmt.Errorf("%s latency chart: %w", st.Name, err)
		}
		v.How, v.HowNotes = sequenceDiagram(st.FirstOvershoot), howNotes(st.FirstOvershoot)
		v.redis(d.Redis[st.Name], st.FirstOvershoot)
		if f := st.FirstFalseReject; f != nil {
			v.Refused, v.RefusedText = refusalDiagram(f, s.Limiter), "The first wrong refusal: "+refusalCaption(f, s.Limiter)+"."
			if f.Request == nil {
				v.RefusedText += " Its commands were no longer kept when it was judged."
			}
		}
		if !st.NoRefusalJudged {
			if v.Refusals, err = falseRejectChart(se); err != nil {
				return page{}, fmt.Errorf("%s false-reject chart: %w", st.Name, err)
			}
		}
		p.Strategies = append(p.Strategies, v)
		p.Retries = p.Retries || st.Retries > 0
	}
	if len(p.Strategies) > 1 {
		var err error
		if p.Overview, err = overviewChart(ordered, s.Limit); err != nil {
			return page{}, fmt.Errorf("overview chart: %w", err)
		}
	}
	return p, nil
}

// judged is the strategy's verdict (verdict.Judge, as the summary prints it): its tone and badge
// as every view shows them, and a sentence: overshoot and false rejects only on evidence, and no
// "exact" for a strategy that never reached its limit or whose decisions mostly failed.
func judged(st bench.StrategySnapshot, kind limiter.Kind, limit int64, d time.Duration) (tone verdict.Tone, badge, sentence string) {
	v := verdict.Judge(st, kind, limit, d)
	word, _, _ := strings.Cut(v.Word, ", "+verdict.Leaks)
	switch word {
	case verdict.Both:
		sentence = "exceeded the limit and refused with room: "
	case verdict.Overshoot:
		sentence = "exceeded the limit: "
	case verdict.TooStrict:
		sentence = "refused with room: "
	case verdict.Errors:
		sentence = "not judged, too many errors: "
	case verdict.NoEvidence:
		sentence = "no evidence: "
	case verdict.NotJudged:
		sentence = "not judged: "
	case verdict.Leaks:
		sentence = "left keys behind: "
	default:
		sentence = "held the limit exactly: "
	}
	if v.Leaking() && word != verdict.Leaks {
		sentence = strings.TrimSuffix(sentence, ": ") + ", and left keys behind: "
	}
	return cmp.Or(v.Tone(), verdict.ToneWarn), v.Badge(), sentence + v.Text
}

func cells(st bench.StrategySnapshot, d time.Duration) row {
	throughput := st.AvgThroughput
	if throughput == 0 && d > 0 {
		throughput = float64(st.Attempts) / d.Seconds()
	}
	server := human.ServerUsec(st.ServerUsecPerCall, "n/a")
	return row{
		Attempts:     human.Count(st.Attempts),
		Admitted:     human.Count(st.Admitted),
		Rejected:     human.Count(st.Rejected),
		Errors:       human.Count(st.Errors),
		Retries:      human.Count(st.Retries),
		Peak:         human.Count(st.Peak),
		Overshoot:    human.Count(st.Overshoot),
		Events:       human.Count(st.OvershootEvent),
		FalseRejects: map[bool]string{true: "n/a", false: human.Count(st.FalseRejects)}[st.NoRefusalJudged],
		Throughput:   human.Count(int64(throughput + 0.5)),
		P50:          human.Latency(st.Latency.P50),
		P90:          human.Latency(st.Latency.P90),
		P99:          human.Latency(st.Latency.P99),
		P999:         human.Latency(st.Latency.P999),
		Max:          human.Latency(st.Latency.Max),
		Server:       server,
	}
}

// uniqueID makes an HTML id from a strategy name: lower-case letters, digits and dashes.
func uniqueID(name string, seen map[string]bool) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	id := b.String()
	if id == "" {
		id = "strategy"
	}
	for base, n := id, 2; seen[id]; n++ {
		id = base + "-" + strconv.Itoa(n)
	}
	seen[id] = true
	return id
}

func hex(c drawing.Color) string { return fmt.Sprintf("%02x%02x%02x", c.R, c.G, c.B) }

// redis fills in what the application's commands show: the decision, and the commands behind
// the first overshoot with the race's marked.
func (v *strategyView) redis(sum *redistrace.Summary, first *trace.Overshoot) {
	if sum != nil {
		v.Redis, v.RedisTone = sum.Line(), verdict.ToneWarn
		switch sum.Decision {
		case redistrace.CheckThenAct:
			v.RedisTone = verdict.ToneBad
		case redistrace.Atomic:
			v.RedisTone = verdict.ToneGood
		}
	}
	if first == nil || first.Redis == nil {
		return
	}
	cmds := first.Redis
	mark := map[int]string{}
	if r := cmds.Race; r != nil {
		mark[r.Reads[0]], mark[r.Reads[1]] = "read", "read"
		for _, w := range r.Writes {
			mark[w] = "write"
		}
		v.RedisStory = "The commands show it: " + r.Story(cmds.Commands) + " of " + r.Key + "."
	}
	for i, c := range cmds.Commands {
		reply := "?"
		if c.ReplyFrom != "" {
			reply = trace.ReplyText(c.Reply)
		}
		v.RedisCommands = append(v.RedisCommands, redisRow{At: fmt.Sprintf("%.3f", float64(c.AtUs)/1000), Cmd: c.Cmd,
			Keys: strings.Join(c.Keys, " "), Client: c.Client, Reply: reply, In: c.In, Race: mark[i]})
	}
	if cmds.Omitted > 0 {
		v.RedisStory += fmt.Sprintf(" %s more commands in the span are in the JSON.", human.Count(cmds.Omitted))
	}
}
