package hammer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/evidence"
	"github.com/limitctl/limitctl/internal/exitcode"
	"github.com/limitctl/limitctl/internal/hammer/recordfile"
	"github.com/limitctl/limitctl/internal/history"
	"github.com/limitctl/limitctl/internal/human"
	"github.com/limitctl/limitctl/internal/redistrace"
	"github.com/limitctl/limitctl/internal/trace"
)

// The HTTP targets' application, traced in its Redis (--http-redis-trace, --http-redis-proxy):
// the flags checked, the tracer started before the load and stopped as it ends, and what it
// found put beside each target's verdict (Result.RedisTrace) and in its first overshoot.

// MonitorCost is what MONITOR costs the server, as measured (make monitor-cost, docs/http.md):
// the share of its throughput redis-benchmark kept with one MONITOR client attached.
const MonitorCost = "MONITOR costs that server: with one attached, redis-benchmark kept 0.71 of its throughput"

// redisTrace checks the trace's flags into o: a Redis to trace (the limiter's, --url/--addr),
// and the HTTP targets whose application it is.
func (fl Flags) redisTrace(o *Options) error {
	flag := "--http-redis-trace"
	if fl.RedisProxy != "" {
		flag = "--http-redis-proxy"
	}
	switch {
	case !fl.RedisTrace && fl.RedisProxy == "":
		return nil
	case len(o.HTTP) == 0:
		return exitcode.Usagef("%s traces the application behind an HTTP target: give --http [NAME=]URL", flag)
	case !fl.HasTarget:
		return exitcode.Usagef("%s reads what the application sends to its Redis: give that Redis with --url or --addr", flag)
	}
	o.RedisTrace, o.RedisProxy = true, fl.RedisProxy
	return nil
}

// startTrace starts the tracer before the load: MONITOR on every master of the limiter's Redis,
// or the proxy listening. MONITOR refused and a proxy address taken are usage errors: nothing
// has been sent yet.
func (s *session) startTrace(ctx context.Context) error {
	o := s.opts
	if !o.RedisTrace || s.tracer != nil {
		return nil // not traced, or started already (the demonstration's)
	}
	cfg := redistrace.Config{Identities: redistrace.Identities{RunID: s.keys.RunID, Keys: max(1, o.Keys), Targets: s.keys.Targets,
		Exclude: s.keys.Owns}, Proxy: o.RedisProxy, Timeout: s.deps.Timeout}
	nodes, err := traceNodes(ctx, s.rdb)
	if err != nil {
		return err
	}
	if o.RedisProxy != "" {
		if len(nodes) != 1 {
			return exitcode.Usagef("--http-redis-proxy forwards to one Redis; a cluster's application connects to every master: trace it by MONITOR (--http-redis-trace alone)")
		}
		cfg.Upstream = nodes[0]
	} else {
		cfg.Nodes = nodes
	}
	tr, err := redistrace.Start(ctx, cfg)
	switch {
	case errors.Is(err, redistrace.ErrMonitorRefused):
		return exitcode.Usagef("--http-redis-trace: %v; trace through a proxy the application connects to instead: --http-redis-proxy 127.0.0.1:PORT", err)
	case err != nil && o.RedisProxy != "":
		var op *net.OpError
		if errors.As(err, &op) {
			err = op.Err // "bind: address already in use", without the address again
		}
		return exitcode.Usagef("--http-redis-proxy %s: %s", o.RedisProxy, human.FirstLine(err.Error()))
	case err != nil:
		return fmt.Errorf("--http-redis-trace: %w", err)
	}
	s.tracer = tr
	if tr.Source() == redistrace.SourceProxy {
		s.deps.notice(fmt.Sprintf("trace: the application's commands through the proxy at %s (to %s): connect the application there", tr.ProxyAddr(), cfg.Upstream.Addr))
	} else {
		s.deps.notice(fmt.Sprintf("trace: the application's commands on %s %s by MONITOR on %d %s (%s)", s.target.Kind, s.target.Addr,
			len(nodes), human.Plural(int64(len(nodes)), "node", "nodes"), MonitorCost))
	}
	return nil
}

// traceNodes are the nodes the application's commands run on: the server, or every master of a
// cluster.
func traceNodes(ctx context.Context, rdb redis.UniversalClient) ([]*redis.Options, error) {
	switch c := rdb.(type) {
	case *redis.Client:
		return []*redis.Options{c.Options()}, nil
	case *redis.ClusterClient:
		var mu sync.Mutex // ForEachMaster calls fn for each master at once
		var nodes []*redis.Options
		err := c.ForEachMaster(ctx, func(_ context.Context, m *redis.Client) error {
			mu.Lock()
			defer mu.Unlock()
			nodes = append(nodes, m.Options())
			return nil
		})
		return nodes, err
	}
	return nil, exitcode.Usagef("--http-redis-trace: this kind of Redis client (%T) cannot be traced", rdb)
}

// stopTrace stops the tracer once the load has ended, before anything of the run's own reads
// the application's keys; at most once.
func (s *session) stopTrace() {
	if s.tracer == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.deps.Timeout+5*time.Second)
	defer cancel()
	if err := s.tracer.Stop(ctx); err != nil {
		s.traceErr = err
	}
}

// traced is the run's call recorder (rec, or none) with the tracer told every HTTP call.
func (s *session) traced(rec bench.CallRecorder) bench.CallRecorder {
	if s.tracer == nil {
		return rec
	}
	return traceRecorder{next: rec, tracer: s.tracer, first: len(s.opts.Strategies)}
}

// traceRecorder hands the tracer the HTTP targets' calls, and every call to next (when set).
type traceRecorder struct {
	next   bench.CallRecorder
	tracer *redistrace.Tracer
	first  int // the first HTTP target's strategy index
}

func (r traceRecorder) Begin(begin time.Time) {
	r.tracer.Begin(begin)
	if r.next != nil {
		r.next.Begin(begin)
	}
}

func (r traceRecorder) Record(calls []bench.RecordedCall) {
	reqs := make([]redistrace.Request, 0, len(calls))
	for _, c := range calls {
		if int(c.Strategy) < r.first {
			continue
		}
		reqs = append(reqs, redistrace.Request{Target: int(c.Strategy) - r.first, Identity: int(c.Key), Worker: int(c.Worker),
			SentUs: c.SentUs, RepliedUs: c.RepliedUs, Admitted: c.Outcome == evidence.Admitted,
			Refused: c.Outcome == evidence.Refused, NotDecided: c.Cut || c.FirstAttempt})
	}
	r.tracer.Add(reqs...)
	if r.next != nil {
		r.next.Record(calls)
	}
}

// finishTrace puts what the trace found in the result: each HTTP target's summary, and the
// commands behind its first overshoot.
func (s *session) finishTrace(res *Result) {
	if s.tracer == nil {
		return
	}
	s.stopTrace()
	if s.traceErr != nil {
		s.deps.notice("warning: the trace may lack the last commands: " + human.FirstLine(s.traceErr.Error()))
	}
	sums := s.tracer.Summaries()
	res.RedisTrace = map[string]*redistrace.Summary{}
	for i, name := range s.keys.Targets {
		res.RedisTrace[name] = sums[i]
	}
	strategies := append([]bench.StrategySnapshot(nil), res.Summary.Strategies...)
	for i, st := range strategies {
		t := indexOf(s.keys.Targets, st.Name)
		if t < 0 || st.FirstOvershoot == nil {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.deps.Timeout+10*time.Second)
		cmds := s.tracer.FirstOvershoot(ctx, t, sums[t].Decision, st.FirstOvershoot)
		cancel()
		if cmds != nil {
			ov := *st.FirstOvershoot // the snapshots share the engine's: a copy gains the commands
			ov.Redis = cmds
			strategies[i].FirstOvershoot = &ov
		}
	}
	res.Summary.Strategies = strategies
}

func indexOf(names []string, name string) int {
	for i, n := range names {
		if n == name {
			return i
		}
	}
	return -1
}

// SerializedNote follows a check-then-act decision that showed no overshoot: its reads and
// writes are apart in Redis, so only something in the application kept them from racing (a lock
// in one process, as go-chi/httprate's around its counter), which instances side by side do not
// share.
const SerializedNote = "no overshoot shown: the application serialized its decisions (a lock in one process?), which instances side by side would not share"

// RedisLines say, per HTTP target traced, how its application decides as its commands show,
// aligned under the verdict lines:
//
//	naive   redis  check-then-act: every request read (GET) and only admits wrote (INCR): ...
func (r Result) RedisLines(width int) []string {
	nameW := 0
	for _, st := range r.Summary.Strategies {
		nameW = max(nameW, len(st.Name))
	}
	var out []string
	for _, st := range r.Summary.Strategies {
		sum := r.RedisTrace[st.Name]
		if sum == nil {
			continue
		}
		head := fmt.Sprintf("%-*s  redis  ", nameW, st.Name)
		line := sum.Line()
		if sum.Decision == redistrace.CheckThenAct && st.Overshoot == 0 {
			line += "; " + SerializedNote
		}
		out = append(out, human.Hang(head+line, width, len(head))...)
	}
	return out
}

// TraceView is the trace as the dashboard reads it while the run goes.
type TraceView struct {
	tracer  *redistrace.Tracer
	targets []string
	mu      sync.Mutex
	how     map[*trace.Overshoot][]string // the commands behind each first overshoot, found once
}

// traceView is the run's trace for its watcher; nil without one.
func (s *session) traceView() *TraceView {
	if s.tracer == nil {
		return nil
	}
	return &TraceView{tracer: s.tracer, targets: s.keys.Targets, how: map[*trace.Overshoot][]string{}}
}

// Line is a target's decision so far and its commands counted; empty for a strategy not traced.
func (v *TraceView) Line(strategy string) (decision, text string) {
	if v == nil {
		return "", ""
	}
	t := indexOf(v.targets, strategy)
	if t < 0 {
		return "", ""
	}
	return v.tracer.Live(t)
}

// How is the how-line's tokens of the commands behind a target's first overshoot, nil when
// there are none: found the first time it is asked, then kept.
func (v *TraceView) How(strategy string, first *trace.Overshoot) []string {
	if v == nil || first == nil {
		return nil
	}
	t := indexOf(v.targets, strategy)
	if t < 0 {
		return nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if tokens, ok := v.how[first]; ok {
		return tokens
	}
	decision, _ := v.tracer.Live(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var tokens []string
	if cmds := v.tracer.FirstOvershoot(ctx, t, decision, first); cmds != nil {
		tokens = cmds.HowTokens()
	}
	v.how[first] = tokens
	return tokens
}

// recordTrace writes the trace to the run's --record file after its calls: each command kept and
// each target's summary (history.Traced), so that judge shows them again.
func (s *session) recordTrace(rec *recordfile.File, res Result) {
	if s.tracer == nil {
		return
	}
	var lines []history.Traced
	for _, c := range s.tracer.Export() {
		args := make([]string, len(c.Args))
		for i, a := range c.Args {
			args[i] = a[:min(len(a), history.MaxTracedArg)]
		}
		lines = append(lines, history.Traced{Command: &history.TracedCommand{Strategy: s.keys.Targets[c.Target], Cmd: c.Name,
			Args: args, Keys: c.Keys, Client: c.Client, Node: c.Node, Identity: c.Identity, AtUs: c.AtUs, RepliedUs: c.RepliedUs,
			Reply: replyJSON(c.Reply), ReplyFrom: c.Reply.From, In: c.In, Step: c.Step, Guarded: c.Guarded}})
	}
	for _, name := range s.keys.Targets {
		sum, err := json.Marshal(struct {
			Strategy string `json:"strategy"`
			*redistrace.Summary
		}{name, res.RedisTrace[name]})
		if err == nil && res.RedisTrace[name] != nil {
			lines = append(lines, history.Traced{Summary: sum})
		}
	}
	rec.WriteTraced(lines)
}

// replyJSON is a known reply as JSON, nil when not known.
func replyJSON(r redistrace.Reply) json.RawMessage {
	if r.From == "" {
		return nil
	}
	return r.JSON()
}

// RecordedTrace puts what a traced run's --record file kept beside the strategies judge judged
// again (res, from files): each target's summary as the run found it, and the commands behind
// its first overshoot as judge finds it. A file without traced lines adds nothing.
func RecordedTrace(ctx context.Context, res *Result, files []history.File) {
	var traced *history.File
	for i := range files {
		if len(files[i].Traced) > 0 {
			if traced != nil {
				return // several traced runs: their clocks are not one
			}
			traced = &files[i]
		}
	}
	if traced == nil || traced.Header == nil {
		return
	}
	sums := map[string]*redistrace.Summary{}
	var targets []string
	var cmds []redistrace.Command
	index := map[string]int{}
	for _, l := range traced.Traced {
		switch {
		case l.Summary != nil:
			var s struct {
				Strategy string `json:"strategy"`
				redistrace.Summary
			}
			if json.Unmarshal(l.Summary, &s) == nil {
				sums[s.Strategy] = &s.Summary
			}
		case l.Command != nil:
			c := l.Command
			t, ok := index[c.Strategy]
			if !ok {
				t = len(targets)
				index[c.Strategy] = t
				targets = append(targets, c.Strategy)
			}
			cmds = append(cmds, redistrace.Command{Name: c.Cmd, Args: c.Args, Keys: c.Keys, Client: c.Client, Node: c.Node,
				AtUs: c.AtUs, RepliedUs: c.RepliedUs, Reply: redistrace.ReplyOf(c.Reply, c.ReplyFrom), In: c.In, Step: c.Step,
				Guarded: c.Guarded, Target: t, Identity: c.Identity})
		}
	}
	res.RedisTrace = sums
	tr := redistrace.Recorded(redistrace.Identities{RunID: traced.Header.RunID, Targets: targets}, traced.Header.RedisTrace, cmds)
	strategies := append([]bench.StrategySnapshot(nil), res.Summary.Strategies...)
	for i, st := range strategies {
		t, ok := index[st.Name]
		if !ok || st.FirstOvershoot == nil || sums[st.Name] == nil {
			continue
		}
		if found := tr.FirstOvershoot(ctx, t, sums[st.Name].Decision, st.FirstOvershoot); found != nil {
			ov := *st.FirstOvershoot
			ov.Redis = found
			strategies[i].FirstOvershoot = &ov
		}
	}
	res.Summary.Strategies = strategies
}
