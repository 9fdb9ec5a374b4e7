// Package slidingcounter is the model of the two-counter sliding window (--limiter
// sliding-window-counter, SPEC section 12): the estimate upstash's slidingWindow, Cloudflare,
// go-chi/httprate, HAProxy's http_req_rate and limits' sliding-window-counter make with two
// fixed-window counters. Model is the kind's evidence as the pipeline uses every kind's: a key's
// decisions (the pipeline's evidence.Decision, read as stamped or timed over [sent, replied]:
// decisionOf) judged for overshoot (checker.go, by check), for false rejects (rule.go, by the rule
// of refusal.go), and the evidence's power (caughtFrom, the pipeline's search over its own rule).
// It knows nothing of Redis, the engine or a verdict's words beyond its own.
//
// # The promise
//
// Window W, limit L. Within each window k, at a decision made a fraction f into it, with c the
// admits counted so far in k and p those of window k-1, a request is admitted only while
// c + p·(1-f) < L; so no window admits more than L.
//
// # The families held (never blamed)
//
//   - the weighted share floored (upstash), rounded (httprate: round(p·(1-f) + c) + 1 > L refuses),
//     taken exactly, or rounded up, computed in doubles or in whole numbers; for whole c and L the
//     floored and the exact test are one (c + p·(1-f) < L) and the most permissive, the rounded-up
//     one (c + p·(1-f) <= L-1) the strictest;
//   - windows on the epoch (EpochAligned: the contract names them by {window_index}), or at any
//     phase (AnyAlignment): a grid phased by the limiter's start (httprate's in-memory counter) or
//     a key's first hit, kept while the state lives and taken anew once no write came for two
//     windows (limits' counters, renamed as they age, are such a grid on the server's clock);
//   - told the time in milliseconds or whole seconds (Spec.Grain: either way by that much), or
//     reading a clock of its own (Intervals: a server's TIME, an application's time.Now, up to
//     0.1% faster or slower than the run's);
//   - counters living two windows from their first write (upstash adds a second; less the server
//     clock's 0.1% and a millisecond), and a previous window that is empty, expired, or two back;
//   - only admits counted; calls sent while others are in flight, run in any order their bounds
//     allow (a stamp ran after its caller's clock read it and within its lateness; a timed call
//     between its sending and its reply).
//
// # The rules, in brief (each proved beside its code)
//
// Overshoot (overshoot.go, threshold): for a window start s, the admits certainly in [s, s+W)
// whose run began at or after a and whose clock read at most b (S), those of it that certainly ran
// before a (C), and those certainly in [s-W, s+W) but not certainly in the later window that
// ran before a (P): the last of S to run saw c >= |S|-1+C and p-or-c weight >= P·(1-(b-s)/W), so
// |S|-1+C+P·(1-(b-s)/W) >= L means even the floored member refused it. P counts only while the
// earlier counter, first written no sooner than s-W less the clock's slack, still lived when the
// last of S ran. Epoch-aligned, s is each multiple of W. At any alignment every s is tried at once:
// the set of window starts a rule proves is upward closed between the points where some admit's
// clock bounds meet s (hi-W, lo, lo+W), so each stretch is decided at its end, with exact integer
// thresholds on a line of doubled microseconds (2u is the start u, 2u+1 the starts strictly past
// it: the finite set of candidate phases); a chunk is proven when the stretches cover every phase
// modulo W. Chunks are cut where a member could have re-phased (a two-window idle spell, less the
// clocks' allowances) and, for timed decisions, every 16 windows (the drift).
//
// False rejects (refusal.go): a refusal is wrong only when, at every window start its clock can
// have fallen after, the possible admits that may have run before it (admitted, or of unknown
// outcome, which may run at any time after being sent) counted as 1 where they can be in its
// window and at its least-fraction weight where they can be only in the one before, stay at or
// under L-1: then even the rounded-up member admitted it.
//
// Limits of the rules: a clump of admits whose clocks all straddle one window edge is counted in
// neither window, so the phases within a clump's width of its edge are ruled out only by other
// windows (a lone clump is proven at epoch alignment only); and the rules do not join admits and
// refusals under one phase, which a member that bursts at each window's start would need at any
// alignment without idle spells.
//
// # Peak, overshoot, power
//
// Result.Peak is the least limit a floored member of the same window could have had and admitted
// every judged admit (searched up to 4×L+1); Overshoot is Peak - L when positive. For a correct,
// contended run Peak is at most L: the limit the evidence shows was reached. caughtFrom is the
// power (as internal/evidence/overshoot/power.go): thin the admits to what the floored member on epoch
// windows admits of them, add k phantom admits per window (on its first admit, its last, or spread),
// and bisect for the least k proven, the weakest placement's. Simulated correct members' runs of 12
// windows at a limit of 10 are proven to +1 stamped or timed (power_test.go).
package slidingcounter
