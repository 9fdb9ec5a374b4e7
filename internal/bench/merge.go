package bench

import (
	"fmt"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/limitctl/limitctl/internal/trace"
)

// Merge is the summary of several processes that ran one run side by side (the same run id,
// limiter and limit): counts summed, latency percentiles from the merged histograms, the peak
// and overshoot the worst process saw, overshoot events summed. With a shared Redis witness each
// process's peak is the joint in-flight count and each event is a distinct witness value above
// the limit, so both are joint evidence; a window or bucket checker with SharedAdmits judges
// every process's admits, and the process that finished last judged them all.
func Merge(runs []Summary) (Summary, error) {
	if len(runs) == 0 {
		return Summary{}, fmt.Errorf("no process summary to merge")
	}
	out := runs[0]
	out.Strategies = nil
	out.Workers, out.Conns, out.Duration, out.Interrupted = 0, 0, 0, false
	out.Processes = len(runs)
	index := map[string]int{}
	hists := map[string]*hdrhistogram.Histogram{}
	serverTime := map[string][2]float64{} // usec x attempts, attempts
	for _, r := range runs {
		if r.Limiter != out.Limiter || r.Limit != out.Limit {
			return Summary{}, fmt.Errorf("run %s mixes processes of limiter %s limit %d and limiter %s limit %d",
				out.RunID, out.Limiter, out.Limit, r.Limiter, r.Limit)
		}
		out.Workers += r.Workers
		out.Conns += r.Conns
		out.Duration = max(out.Duration, r.Duration)
		out.Interrupted = out.Interrupted || r.Interrupted
		for _, s := range r.Strategies {
			i, ok := index[s.Name]
			if !ok {
				i = len(out.Strategies)
				index[s.Name] = i
				out.Strategies = append(out.Strategies, StrategySnapshot{Name: s.Name, ErrorsByKind: map[string]int64{}})
			}
			mergeStrategy(&out.Strategies[i], s, len(runs) > 1)
			if s.Histogram != nil {
				h := hdrhistogram.Import(s.Histogram)
				if hists[s.Name] == nil {
					hists[s.Name] = hdrhistogram.New(histMin, histMax, histSigFigs)
				}
				hists[s.Name].Merge(h)
			}
			if s.ServerUsecPerCall != nil {
				st := serverTime[s.Name]
				serverTime[s.Name] = [2]float64{st[0] + *s.ServerUsecPerCall*float64(s.Attempts), st[1] + float64(s.Attempts)}
			}
		}
	}
	for i := range out.Strategies {
		s := &out.Strategies[i]
		if h := hists[s.Name]; h != nil && h.TotalCount() > 0 {
			s.Latency = Latency{
				P50: us(h.ValueAtQuantile(50)), P90: us(h.ValueAtQuantile(90)), P99: us(h.ValueAtQuantile(99)),
				P999: us(h.ValueAtQuantile(99.9)), Max: us(h.Max()),
			}
			s.Histogram = h.Export()
		}
		if st := serverTime[s.Name]; st[1] > 0 {
			v := round3(st[0] / st[1])
			s.ServerUsecPerCall = &v
		}
	}
	return out, nil
}

// mergeStrategy adds one process's numbers for a strategy into m; several: other processes'
// numbers are merged too.
func mergeStrategy(m *StrategySnapshot, s StrategySnapshot, several bool) {
	m.Attempts += s.Attempts
	m.Admitted += s.Admitted
	m.Rejected += s.Rejected
	m.Errors += s.Errors
	m.Retries += s.Retries
	m.FailOpenAdmits += s.FailOpenAdmits
	m.FailClosedRejects += s.FailClosedRejects
	m.ReleaseErrors += s.ReleaseErrors
	m.Abandoned += s.Abandoned
	m.Unjudged += s.Unjudged
	for k, n := range s.ErrorsByKind {
		m.ErrorsByKind[k] += n
	}
	for _, e := range s.ErrorSamples {
		found := false
		for i := range m.ErrorSamples {
			if m.ErrorSamples[i].Message == e.Message {
				m.ErrorSamples[i].Count += e.Count
				found = true
			}
		}
		if !found && len(m.ErrorSamples) < MaxErrorSamples {
			m.ErrorSamples = append(m.ErrorSamples, e)
		}
	}
	m.Contended = m.Contended || s.Contended
	// A trace is one process's requests: the earliest (from its own process's start) of those
	// that show any; a process whose requests were none of those behind its moment shows none.
	if f := s.FirstOvershoot; f != nil && (m.FirstOvershoot == nil || betterTrace(f, m.FirstOvershoot)) {
		first := *f
		first.ThisProcess = first.ThisProcess || several
		m.FirstOvershoot = &first
	}
	// Each process judged the refusals on its own keys, or none (they shared them).
	m.FalseRejects += s.FalseRejects
	if f := s.FirstFalseReject; f != nil && (m.FirstFalseReject == nil || f.SentMs < m.FirstFalseReject.SentMs) {
		m.FirstFalseReject = f // the earliest, from its own process's start
	}
	if t := s.Tightest; t != nil && (m.Tightest == nil || t.Room() < m.Tightest.Room()) {
		m.Tightest = t
	}
	if m.RefusalsUnjudged == "" {
		m.RefusalsUnjudged = s.RefusalsUnjudged
	}
	m.NoRefusalJudged = m.NoRefusalJudged || s.NoRefusalJudged
	// Every process read the same keys as it finished: a leak any of them saw stands.
	if l := s.Leaks; l != nil && (m.Leaks == nil || l.Total() > m.Leaks.Total()) {
		m.Leaks = l
	}
	if m.Leaks != nil {
		m.LeftoversUnread = ""
	} else if m.LeftoversUnread == "" {
		m.LeftoversUnread = s.LeftoversUnread
	}
	if k := s.LargestKey; k != nil && (m.LargestKey == nil || k.Size > m.LargestKey.Size) {
		m.LargestKey = k
	}
	if m.Allowances == "" {
		m.Allowances = s.Allowances
	}
	m.Peak = max(m.Peak, s.Peak)
	m.Overshoot = max(m.Overshoot, s.Overshoot)
	m.OvershootEvent += s.OvershootEvent
	// The merged evidence proves whatever any process's proved: the strongest power stands.
	if k := s.CaughtFrom; k != nil && (m.CaughtFrom == nil || *k != 0 && (*m.CaughtFrom == 0 || *k < *m.CaughtFrom)) {
		v := *k
		m.CaughtFrom = &v
	}
	// The processes ran side by side: their rates add up.
	m.Throughput += s.Throughput
	m.AvgThroughput += s.AvgThroughput
}

// betterTrace reports whether a merged run should show trace a rather than b: one that shows
// requests, then the earlier.
func betterTrace(a, b *trace.Overshoot) bool {
	if (len(a.Requests) > 0) != (len(b.Requests) > 0) {
		return len(a.Requests) > 0
	}
	return a.AtMs < b.AtMs
}
