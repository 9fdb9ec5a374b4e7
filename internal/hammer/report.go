package hammer

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/bench/verdict"
	"github.com/limitctl/limitctl/internal/exitcode"
	"github.com/limitctl/limitctl/internal/hammer/runkeys"
	"github.com/limitctl/limitctl/internal/hammer/timeline"
	"github.com/limitctl/limitctl/internal/human"
	"github.com/limitctl/limitctl/internal/redisconn"
)

// ReportTTL is how long a process's summary stays in Redis for `hammer report`.
const ReportTTL = 24 * time.Hour

// published is what one process of a shared run leaves for hammer report: its summary
// (latency histograms included) and the rules it was judged by.
type published struct {
	Summary bench.Summary
	Rules   Rules
}

// publish leaves this process's summary and rules for `hammer report`.
func (s *session) publish(summary bench.Summary) error {
	doc, err := json.Marshal(published{Summary: summary, Rules: s.opts.Rules()})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.deps.Timeout)
	defer cancel()
	return s.rdb.Set(ctx, s.keys.ReportKey(s.process), doc, ReportTTL).Err()
}

// Report merges what every process of a run left (with --run-id and --witness redis) into one
// summary, with Processes set, and judges it as hammer judges a run of its own (Judge): by the
// rules the processes ran under, with the given assertions in place of theirs when there are
// any. An assertion that names no strategy of the run is a usage error.
func Report(ctx context.Context, rdb redis.UniversalClient, prefix, runID string, asserts []string) (Result, error) {
	keys := runkeys.Scheme{Prefix: prefix, RunID: runID}
	runs, ran, err := readSummaries(ctx, rdb, keys)
	if err != nil {
		return Result{}, err
	}
	if len(runs) == 0 {
		return Result{}, fmt.Errorf("no process of run %s left a summary under %s (run each with --run-id %s --witness redis)", runID, keys.ReportPattern(), runID)
	}
	summaries := make([]bench.Summary, len(runs))
	for i, r := range runs {
		summaries[i] = r.Summary
	}
	summary, err := bench.Merge(summaries)
	if err != nil {
		return Result{}, err
	}
	rules := mergeRules(runs)
	if err := judgeRefusals(ctx, rdb, keys, ran, &summary); err != nil {
		return Result{}, err
	}
	rules.Shared = summary.Strategies[0].RefusalsUnjudged == bench.RefusalsShared
	if len(asserts) > 0 {
		rules.Assertions = nil
		for _, expr := range asserts {
			a, err := verdict.ParseAssertion(expr, strategyNames(summary))
			if err != nil {
				return Result{}, exitcode.Usagef("--assert: %v", err)
			}
			rules.Assertions = append(rules.Assertions, a)
		}
	}
	return Result{Summary: summary, Judgement: Judge(rules, summary)}, nil
}

// readSummaries reads every process's summary of the run, and names each process with the
// strategies it ran.
func readSummaries(ctx context.Context, rdb redis.UniversalClient, keys runkeys.Scheme) ([]published, map[string][]string, error) {
	masters, err := redisconn.Masters(ctx, rdb)
	if err != nil {
		return nil, nil, err
	}
	var runs []published
	ran := map[string][]string{}
	for _, m := range masters {
		iter := m.Scan(ctx, 0, keys.ReportPattern(), 1000).Iterator()
		for iter.Next(ctx) {
			doc, err := m.Get(ctx, iter.Val()).Bytes()
			if err == redis.Nil {
				continue // expired between SCAN and GET
			}
			if err != nil {
				return nil, nil, err
			}
			var p published
			if err := json.Unmarshal(doc, &p); err != nil || p.Summary.Limiter == "" {
				return nil, nil, fmt.Errorf("%s does not hold a hammer summary this limitctl reads (left by another version?)", iter.Val())
			}
			runs = append(runs, p)
			process := strings.TrimPrefix(iter.Val(), strings.TrimSuffix(keys.ReportPattern(), "*"))
			for _, st := range p.Summary.Strategies {
				ran[process] = append(ran[process], st.Name)
			}
		}
		if err := iter.Err(); err != nil {
			return nil, nil, err
		}
	}
	return runs, ran, nil
}

// judgeAsLast judges, in the process that finished a shared run last, its refusals over every
// process's calls, as hammer report does: its own summary then carries the joint verdict, as
// it carries the joint overshoot. A failure to read leaves them unjudged, and says why.
func (s *session) judgeAsLast(summary *bench.Summary) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute+s.deps.Timeout)
	defer cancel()
	_, ran, err := readSummaries(ctx, s.rdb, s.keys)
	if err == nil {
		err = judgeRefusals(ctx, s.rdb, s.keys, ran, summary)
	}
	if err != nil {
		s.deps.notice("warning: could not judge the run's refusals over every process's calls: " + human.FirstLine(err.Error()))
	}
}

// mergeRules are the rules of a run whose processes each left their own: a script run by any
// of them is judged as a script run, errors asked for by any lift the error-rate rule for the
// merged numbers (they hold that process's errors), and every distinct assertion of any
// process is checked against the merged summary. Each process shared the run's keys with the
// others, so none judged its refusals.
func mergeRules(runs []published) Rules {
	r := runs[0].Rules
	r.Assertions, r.Shared = nil, true
	for _, p := range runs {
		r.Script = r.Script || p.Rules.Script
		r.ErrorsAsked = r.ErrorsAsked || p.Rules.ErrorsAsked
		if r.Contract == nil {
			r.Contract = p.Rules.Contract
		}
		for _, a := range p.Rules.Assertions {
			if !slices.ContainsFunc(r.Assertions, func(b verdict.Assertion) bool { return b.Expr == a.Expr }) {
				r.Assertions = append(r.Assertions, a)
			}
		}
	}
	return r
}

// judgeRefusals judges the merged run's refusals over every process's calls on the server's
// timeline (hammer/timeline), when the processes published them; a strategy whose refusals a
// contract makes no evidence stays as it is.
func judgeRefusals(ctx context.Context, rdb redis.UniversalClient, keys runkeys.Scheme, ran map[string][]string, sum *bench.Summary) error {
	var names []string
	for _, st := range sum.Strategies {
		if st.RefusalsUnjudged == bench.RefusalsShared {
			names = append(names, st.Name)
		}
	}
	verdicts, err := timeline.Judge(ctx, rdb, keys, ran, names)
	if err != nil || verdicts == nil {
		return err
	}
	for i := range sum.Strategies {
		st := &sum.Strategies[i]
		v, ok := verdicts[st.Name]
		if !ok {
			continue
		}
		st.Refusals = v
	}
	return nil
}
