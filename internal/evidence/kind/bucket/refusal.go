package bucket

import (
	"math"
	"slices"
	"sort"

	"github.com/limitctl/limitctl/internal/evidence"
	"github.com/limitctl/limitctl/internal/evidence/refusal"
)

// bucketJudge judges a token bucket's refusals (burst B, refill R per µs, cost 1).
//
// Rule. Every correct bucket we know keeps, in effect, one of two states, and its level when it
// decides k (stamp t_k) is
//
//	min(B, min over f of  B + R*(t_k - T_f) - n_f)
//
// where f ranges over calls that ran before k, T_f is f's stamp and n_f counts the draws that
// ran from f on (f's own included) up to k:
//   - GCRA (the shipped script, go-redis/redis_rate): tat = max(tat, now) + 1/R per draw, so
//     after draws i..n, tat = max over i of (t_i + (n-i+1)/R); the level B - (tat - t_k)*R is the
//     formula with f ranging over the draws. A draw that arrives late (stamped before tat) is
//     charged at tat, not at its stamp: that is why n_f counts draws by when they ran, not by
//     their stamps (a bound by stamps alone would blame the shipped script under reordering).
//   - tokens and a last time that only moves forward (min(B, tokens + R*(now - last)), last =
//     max(last, now), as textbook buckets and Spring's two keys do): every call that moves
//     last refills up to it, so f ranges over every call, refused ones included: a refused call
//     stamped ahead of k refills nothing k can use and costs k R*(T_f - t_k).
//
// The hammer does not see the order calls ran in, only when each was sent and answered, so it
// bounds n_f from above by the draws that can have run at or after f and before k: answered
// after f was sent, sent before k's reply (N_f = M_k - P_f, M_k the draws sent by k's reply,
// P_f those answered before f was sent), and T_f by the latest stamp f can have had. A draw of
// unknown outcome may run at any time after it was sent, so it is in every N_f from its sending
// on. The level is then at least
//
//	V = min over f of  B + refill(t_k - T_f) - c*N_f
//
// and if V >= cost, the bucket certainly held the cost: k is a false reject. The allowances:
//   - c is a little above 1: a bucket that keeps a time may round each stored time up to a
//     microsecond (a TAT printed with %.6f seconds) or a double's step, charging a draw that
//     much more;
//   - times are widened by the unit the script is given them in (it may round them);
//   - refill is R*d for a continuous bucket (given a rate: the shipped contract), also for
//     d < 0 (a call stamped ahead). A bucket given the window may instead refill in steps of
//     up to one window (so many tokens per interval, as upstash's does): then its refill is
//     only R*max(0, d - step) for d >= 0, and it may refuse between steps. Such a bucket keeps
//     a count of whole tokens and takes exactly one per draw (c = 1: its times decide when a
//     step falls, never what a draw costs), so a bucket given the window is judged as the
//     least of both: a continuous bucket that rounds its times (c) and a stepped one that
//     counts (1). A stepped term with nothing refilled is a whole number, compared exactly: a
//     stepped bucket refilled to B that drew B-1 since certainly held the one token;
//   - on the server's clock (the script reads TIME), stamps are [sent, replied], R is taken
//     0.1% slower, and a call of unknown outcome may have read the clock as late as k did.
//
// Continuous refill is linear in T_f, so the minimum over f folds into one number as f goes
// by in order of sending (V = B + R*t_k - c*M_k + min of (c*P_f - R*T_f)), and nothing but the
// calls within the judging lag is kept. A stepped refill keeps the candidates of the last step
// or so exactly (merged pairwise when too many, which only lowers V) and folds older ones with
// the step taken off every refill.
type bucketJudge struct {
	burst, rate, perDraw float64 // rate: tokens per µs
	step                 int64   // µs; 0: continuous
	server               bool
	monotone             bool  // a monotone virtual clock: what ran before k read a clock no later than k's
	grain, base          int64 // base: stamps are taken relative to it, for precision
	margin               int64

	bySent    []int64      // draws not yet counted in m, by sending
	byReplied []int64      // answered draws not yet counted in p, by reply
	cands     []bucketCand // calls not yet passed by the sweep
	m, p      int64        // draws sent by the sweep's reply; answered draws replied before its candidate's sending

	minQ    float64 // the least c*P_f - R*T_f over passed candidates (folded)
	minQf   bucketCand
	haveQ   bool
	minQ1   float64 // stepped: the least P_f - R*T_f over folded candidates (whole draws)
	minQ1f  bucketCand
	haveQ1  bool
	minPUnk int64 // server clock: the least P_f of a passed candidate of unknown outcome
	haveUnk bool
	recent  []bucketCand // stepped: passed candidates judged exactly
	newest  int64
}

type bucketCand struct {
	sent    int64
	stamp   int64 // the latest stamp it can have had, widened by the unit, relative to base
	p       int64
	unknown bool // server clock and unknown Outcome: its clock reading is bounded only by k's
}

// maxRecent bounds a stepped bucket's exactly judged candidates.
const maxRecent = 2048

func newBucketJudge(s refusal.Spec) *bucketJudge {
	rate := s.RatePerSec / 1e6 * (1 - s.ServerRate())
	j := &bucketJudge{
		burst: float64(s.Limit), rate: rate, server: s.Server, monotone: s.Monotone, grain: 2 * s.Grain(),
		// Each draw may be charged a microsecond of refill more (a rounded stored time; a
		// double's step near today's epoch in ms is 2^-12 ms, less than that).
		perDraw: 1 + s.RatePerSec/1e6,
		margin:  2*s.Skew + s.Horizon + 1_000_000, newest: math.MinInt64,
	}
	if !s.Server {
		j.base = s.Base
	}
	if s.Rules.RefillStep > 0 {
		j.step = s.Rules.RefillStep.Microseconds()
	}
	return j
}

// add takes calls as draws and as candidates f. On the monotone virtual clock a candidate's
// T_f is its own stamp (StampLo), not the latest it can have read (StampHi): f's TIME is
// max(own stamp, the key's mark), and a mark above f's stamp is the own stamp T_g of a call g
// that ran before f (a mark only ever takes a TIME, and the first TIME of each value is its
// call's own stamp). Then every draw that ran from f on ran from g on (n_f <= n_g), so f's term
// is at least g's, B + R*(t_k - T_g) - n_g; g ran before k too, so it is a candidate of its own
// (sent before k's reply), bounded at T_g (its own stamp) with its own P: the minimum over the
// candidates holds f's term without f's widest stamp. One slow call at the run's start (a
// cold connection), whose mark could have been the highest stamp sent by its reply, would
// otherwise lower every later refusal's bound by R times its latency, for the whole run.
func (j *bucketJudge) Add(calls []evidence.Decision) {
	for _, c := range calls {
		j.bySent = append(j.bySent, c.SentUs)
		if c.Outcome == evidence.Admitted {
			j.byReplied = append(j.byReplied, c.RepliedUs)
		}
		stamp := c.ClockHiUs
		if j.monotone && !j.server {
			stamp = c.ClockLoUs
		}
		j.addCand(c.SentUs, stamp, c.Outcome == evidence.Unknown)
	}
}

// addRefused implements refusalsSeer: a refused call is a candidate too, a group of them one
// candidate sent with the earliest and stamped with the latest (on the monotone virtual clock
// the latest own stamp, as add says why).
func (j *bucketJudge) AddRefused(g *refusal.Group) {
	stamp := g.StampHi
	if j.monotone && !j.server {
		stamp = g.OwnHi
	}
	j.addCand(g.SentMin, stamp, false)
}

func (j *bucketJudge) addCand(sent, stampHi int64, unknown bool) {
	stamp := stampHi - j.base + j.grain
	j.cands = append(j.cands, bucketCand{sent: sent, stamp: stamp, unknown: unknown && (j.server || j.monotone)})
	j.newest = max(j.newest, stamp)
}

func (j *bucketJudge) Judge(ready []*refusal.Group, _ int64, verdict refusal.Verdict) {
	sort.Slice(ready, func(a, b int) bool { return ready[a].RepliedMax < ready[b].RepliedMax })
	sw := j.sweep()
	for _, g := range ready {
		sw.to(g.RepliedMax)
		level, proven, f := j.level(g.StampLo - j.base)
		if proven {
			verdict(g, j.m-f.p, level, -1)
		}
	}
	sw.done()
}

// sweeper passes the buffered calls into the sweep in order of sending, up to a reply.
type sweeper struct {
	j          *bucketJudge
	nc, ns, nr int
}

func (j *bucketJudge) sweep() *sweeper {
	sort.Slice(j.cands, func(a, b int) bool { return j.cands[a].sent < j.cands[b].sent })
	slices.Sort(j.bySent)
	slices.Sort(j.byReplied)
	return &sweeper{j: j}
}

// to passes every candidate and draw sent at or before replied: each can have run before a
// refusal answered then, and before every later one.
func (sw *sweeper) to(replied int64) {
	j := sw.j
	for sw.nc < len(j.cands) && j.cands[sw.nc].sent <= replied {
		c := j.cands[sw.nc]
		for sw.nr < len(j.byReplied) && j.byReplied[sw.nr] < c.sent {
			sw.nr++
			j.p++
		}
		c.p = j.p
		j.pass(c)
		sw.nc++
	}
	for sw.ns < len(j.bySent) && j.bySent[sw.ns] <= replied {
		sw.ns++
		j.m++
	}
}

// done keeps what the sweep has not passed.
func (sw *sweeper) done() {
	j := sw.j
	j.cands = append(j.cands[:0], j.cands[sw.nc:]...)
	j.bySent = append(j.bySent[:0], j.bySent[sw.ns:]...)
	j.byReplied = append(j.byReplied[:0], j.byReplied[sw.nr:]...)
}

// pass takes candidate c into the minimum, now that the sweep has reached its sending.
func (j *bucketJudge) pass(c bucketCand) {
	switch {
	case c.unknown:
		if !j.haveUnk || c.p < j.minPUnk {
			j.minPUnk, j.haveUnk = c.p, true
		}
	case j.step > 0:
		j.recent = append(j.recent, c)
		if len(j.recent) > maxRecent {
			j.mergeRecent()
		}
	default:
		j.fold(c)
	}
}

// fold takes c into the linear minima: the continuous bucket's, and a stepped one's.
func (j *bucketJudge) fold(c bucketCand) {
	if q := j.perDraw*float64(c.p) - j.rate*float64(c.stamp); !j.haveQ || q < j.minQ {
		j.minQ, j.minQf, j.haveQ = q, c, true
	}
	if j.step == 0 {
		return
	}
	if q := float64(c.p) - j.rate*float64(c.stamp); !j.haveQ1 || q < j.minQ1 {
		j.minQ1, j.minQ1f, j.haveQ1 = q, c, true
	}
}

// mergeRecent halves the exactly judged candidates: each pair becomes one with the later stamp
// and the fewer draws before it, which can only lower the level found.
func (j *bucketJudge) mergeRecent() {
	half := j.recent[:0]
	for i := 0; i < len(j.recent); i += 2 {
		c := j.recent[i]
		if i+1 < len(j.recent) {
			d := j.recent[i+1]
			c = bucketCand{sent: min(c.sent, d.sent), stamp: max(c.stamp, d.stamp), p: min(c.p, d.p)}
		}
		half = append(half, c)
	}
	j.recent = half
}

// level is the least the bucket can have held at stamp t (relative to base), with the
// candidate that bounds it; proven: it certainly held the cost (1), each term compared with a
// millionth of a token to spare for the float arithmetic, save a stepped term that refilled
// nothing (a whole number: exact).
func (j *bucketJudge) level(t int64) (level float64, proven bool, worst bucketCand) {
	level, worst = j.burst, bucketCand{p: j.m}
	spare := j.burst
	consider := func(v, tolerance float64, c bucketCand) {
		if v < level {
			level, worst = v, c
		}
		spare = min(spare, v-tolerance)
	}
	const tolerance = 1e-6
	drawn := j.perDraw * float64(j.m)
	if j.haveQ {
		consider(j.burst+j.rate*float64(t)-drawn+j.minQ, tolerance, j.minQf)
	}
	if j.haveQ1 {
		consider(j.burst+j.rate*float64(t-j.step)-float64(j.m)+j.minQ1, tolerance, j.minQ1f)
	}
	if j.haveUnk {
		consider(j.burst-j.perDraw*float64(j.m-j.minPUnk), tolerance, bucketCand{p: j.minPUnk})
	}
	for _, c := range j.recent {
		d := t - c.stamp
		consider(j.burst+j.rate*float64(d)-j.perDraw*float64(j.m-c.p), tolerance, c) // continuous
		if d >= 0 {
			d = max(0, d-j.step)
		}
		if d == 0 {
			consider(j.burst-float64(j.m-c.p), 0, c) // stepped, nothing refilled: whole tokens
		} else {
			consider(j.burst+j.rate*float64(d)-float64(j.m-c.p), tolerance, c)
		}
	}
	return level, spare >= 1, worst
}

// settle passes into the sweep every call sent before floor (every later refusal is answered
// after it, so the sweep would pass it for them anyway), so a run that refuses nothing keeps
// no calls; and folds a stepped bucket's candidates once they are a step and the margin behind
// the newest stamp: from then on the step taken off the refill costs them nothing for any
// refusal stamped no earlier than the margin allows, and only lowers the level for the others.
func (j *bucketJudge) Settle(floor int64) {
	sw := j.sweep()
	sw.to(floor - 1)
	sw.done()
	if j.step == 0 {
		return
	}
	kept := j.recent[:0]
	for _, c := range j.recent {
		if c.stamp < j.newest-j.step-j.margin {
			j.fold(c)
			continue
		}
		kept = append(kept, c)
	}
	j.recent = kept
}
