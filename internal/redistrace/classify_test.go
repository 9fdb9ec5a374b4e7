package redistrace

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// A family of limiter code is what one request sends, given whether it is admitted: a sequence
// of commands on its connection (MONITOR's lines: a script's own after its call, as "lua").
// familyRun interleaves many requests' sequences at random (each request's order kept), as
// concurrent requests reach Redis, feeds them to a tracer and reports its decision.

// line is one command as MONITOR shows it: lua for a script's own.
type line struct {
	args []string
	lua  bool
}

func cmd(args ...string) line { return line{args: args} }
func lua(args ...string) line { return line{args: args, lua: true} }

// family writes the commands of one request on key k: admitted or not, and its attempt number
// (a WATCH loop's retries).
type family func(k string, admitted bool, rng *rand.Rand) []line

// familyRun runs admits and refusals of f on one identity, interleaved by seed, and returns the
// target's decision and why.
func familyRun(t *testing.T, f family, admits, refusals int, seed uint64) (string, string) {
	t.Helper()
	ids := Identities{RunID: "abc123", Keys: 1, Targets: []string{"app"}}
	tr := newTracer(Config{Identities: ids})
	s := newStreamer(tr, 0)
	rng := rand.New(rand.NewPCG(seed, 1))
	type request struct {
		client string
		lines  []line
	}
	var pending []*request
	n := admits + refusals
	for i := range n {
		admitted := i < admits
		pending = append(pending, &request{client: fmt.Sprintf("10.0.0.1:%d", 40000+i%16), lines: f("app:abc123.0", admitted, rng)})
		tr.Add(Request{Target: 0, Identity: 0, SentUs: int64(i), RepliedUs: int64(i + 1), Admitted: admitted, Refused: !admitted})
	}
	at := int64(0)
	for len(pending) > 0 {
		// A few requests in flight at once, each sending its next command in turn: a
		// script's own lines come at once after its call, as Redis runs them.
		i := rng.IntN(min(len(pending), 8))
		r := pending[i]
		for {
			l := r.lines[0]
			r.lines = r.lines[1:]
			at++
			s.observe(observed{client: r.client, atUs: at, args: upperFirst(l.args), byScript: l.lua})
			if len(r.lines) == 0 || !r.lines[0].lua {
				break
			}
		}
		if len(r.lines) == 0 {
			pending = append(pending[:i], pending[i+1:]...)
		}
	}
	return tr.tallies[0].decide()
}

func upperFirst(args []string) []string {
	out := append([]string(nil), args...)
	out[0] = strings.ToUpper(out[0])
	return out
}

// The atomic families: each decision is one step inside Redis, so the classifier must never
// call them check-then-act (and calls them atomic).
var atomicFamilies = map[string]family{
	// A script that reads and writes (the seed's Lua acquire, redis_rate's GCRA, ulule's INCR):
	// its own commands are the script's, and a release by ZREM after an admit.
	"script that reads and writes": func(k string, admitted bool, _ *rand.Rand) []line {
		out := []line{cmd("evalsha", "f00", "1", k, "20", "r"), lua("zremrangebyscore", k, "-inf", "1"), lua("zcard", k)}
		if admitted {
			out = append(out, lua("zadd", k, "1", "r"), lua("pexpire", k, "1000"), cmd("zrem", k, "r"))
		}
		return out
	},
	"Redis Functions (FCALL)": func(k string, _ bool, _ *rand.Rand) []line {
		return []line{cmd("fcall", "acquire", "1", k, "20"), lua("get", k), lua("incr", k)}
	},
	// INCR first, its reply deciding, the expiry set on the first.
	"INCR first": func(k string, _ bool, rng *rand.Rand) []line {
		out := []line{cmd("incr", k)}
		if rng.IntN(50) == 0 {
			out = append(out, cmd("pexpire", k, "1000"))
		}
		return out
	},
	// INCR first, then the TTL read, and the expiry set when there is none.
	"INCR first with a TTL read after it": func(k string, _ bool, rng *rand.Rand) []line {
		out := []line{cmd("incr", k), cmd("ttl", k)}
		if rng.IntN(50) == 0 {
			out = append(out, cmd("expire", k, "1"))
		}
		return out
	},
	// INCR first, then a pipeline of reads for the headers (the count, its TTL).
	"INCR first with a pipeline of reads after the decision": func(k string, _ bool, _ *rand.Rand) []line {
		return []line{cmd("incr", k), cmd("get", k), cmd("pttl", k)}
	},
	// WATCH, read, MULTI/EXEC of the INCR, retried when aborted; a refusal UNWATCHes.
	"WATCH/MULTI retry loop": func(k string, admitted bool, rng *rand.Rand) []line {
		var out []line
		for range rng.IntN(3) { // aborted attempts: Redis runs nothing of them (EXEC answers nil)
			out = append(out, cmd("watch", k), cmd("get", k), cmd("multi"), cmd("exec"), cmd("unwatch"))
		}
		out = append(out, cmd("watch", k), cmd("get", k))
		if admitted {
			return append(out, cmd("multi"), cmd("incr", k), cmd("pexpire", k, "1000"), cmd("exec"), cmd("unwatch"))
		}
		return append(out, cmd("unwatch"))
	},
	// SET NX PX and INCR in one MULTI (a window opened by the first hit).
	"MULTI/EXEC that writes": func(k string, _ bool, _ *rand.Rand) []line {
		return []line{cmd("multi"), cmd("set", k, "0", "nx", "px", "1000"), cmd("incr", k), cmd("exec")}
	},
	// A slot taken by SET NX, refused when it fails, and let go by DEL.
	"SET NX lock": func(k string, admitted bool, _ *rand.Rand) []line {
		out := []line{cmd("set", k, "r", "nx", "px", "5000")}
		if admitted {
			out = append(out, cmd("del", k))
		}
		return out
	},
	// INCR first, and a DECR to give the room back when refused.
	"INCR first, DECR on refusal": func(k string, admitted bool, _ *rand.Rand) []line {
		if admitted {
			return []line{cmd("incr", k)}
		}
		return []line{cmd("incr", k), cmd("decr", k)}
	},
	// A script inside a MULTI/EXEC.
	"script in a MULTI/EXEC": func(k string, _ bool, _ *rand.Rand) []line {
		return []line{cmd("multi"), cmd("evalsha", "f00", "1", k), cmd("exec"), lua("incr", k)}
	},
}

// Code whose decision cannot be told from its commands: it must not be called check-then-act
// either (unknown, or atomic).
var notBlamedFamilies = map[string]family{
	// A script decides; a count of admits kept beside it, read and written apart.
	"script beside a stats counter": func(k string, admitted bool, _ *rand.Rand) []line {
		out := []line{cmd("evalsha", "f00", "1", k), lua("incr", k), cmd("get", k+":stats")}
		if admitted {
			out = append(out, cmd("incr", k+":stats"))
		}
		return out
	},
	// Refused from a block kept in the application's memory: no command on a refusal.
	"refusals from memory": func(k string, admitted bool, _ *rand.Rand) []line {
		if admitted {
			return []line{cmd("incr", k)}
		}
		return []line{cmd("exists", k+":none")}
	},
}

// The families that read a count and write it apart: each must be called check-then-act.
var checkThenActFamilies = map[string]family{
	"GET then INCR": func(k string, admitted bool, _ *rand.Rand) []line {
		if admitted {
			return []line{cmd("get", k), cmd("incr", k)}
		}
		return []line{cmd("get", k)}
	},
	"Kong: GET on arrival, INCRBY and EXPIRE after the response": func(k string, admitted bool, _ *rand.Rand) []line {
		if admitted {
			return []line{cmd("get", k), cmd("incrby", k, "1"), cmd("expire", k, "1")}
		}
		return []line{cmd("get", k)}
	},
	"two counters read then INCRed": func(k string, admitted bool, _ *rand.Rand) []line {
		out := []line{cmd("get", k+":w"), cmd("get", k+":day")}
		if admitted {
			out = append(out, cmd("incr", k+":w"), cmd("pexpire", k+":w", "2000"), cmd("incr", k+":day"))
		}
		return out
	},
	"ZCARD then ZADD (the seed's naive)": func(k string, admitted bool, _ *rand.Rand) []line {
		out := []line{cmd("zremrangebyscore", k, "-inf", "1"), cmd("zcard", k)}
		if admitted {
			out = append(out, cmd("zadd", k, "2", "r"), cmd("pexpire", k, "1000"), cmd("zrem", k, "r"))
		}
		return out
	},
	"MULTI of reads, then a write": func(k string, admitted bool, _ *rand.Rand) []line {
		out := []line{cmd("multi"), cmd("get", k), cmd("pttl", k), cmd("exec")}
		if admitted {
			out = append(out, cmd("incr", k))
		}
		return out
	},
}

// Each family, contended (three refusals for each admit) and barely (one refusal in ten), over
// many interleavings: atomic code atomic, check-then-act code check-then-act, the rest never
// check-then-act.
func TestClassifierTellsEveryFamily(t *testing.T) {
	for _, mix := range [][2]int{{50, 150}, {180, 20}} {
		for seed := range uint64(20) {
			for name, f := range atomicFamilies {
				if d, why := familyRun(t, f, mix[0], mix[1], seed); d != Atomic {
					t.Errorf("%s, %d admits and %d refusals, seed %d: %s (%s), want atomic", name, mix[0], mix[1], seed, d, why)
				}
			}
			for name, f := range checkThenActFamilies {
				if d, why := familyRun(t, f, mix[0], mix[1], seed); d != CheckThenAct {
					t.Errorf("%s, %d admits and %d refusals, seed %d: %s (%s), want check-then-act", name, mix[0], mix[1], seed, d, why)
				}
			}
			for name, f := range notBlamedFamilies {
				if d, why := familyRun(t, f, mix[0], mix[1], seed); d == CheckThenAct {
					t.Errorf("%s, %d admits and %d refusals, seed %d: blamed check-then-act (%s)", name, mix[0], mix[1], seed, why)
				}
			}
		}
	}
}

// Without refusals (the limit never reached), a write made for every request and one made only
// for admits look the same: unknown, never a guess either way.
func TestClassifierWithoutRefusalsIsUnknown(t *testing.T) {
	for name, f := range map[string]family{"INCR first": atomicFamilies["INCR first"], "GET then INCR": checkThenActFamilies["GET then INCR"]} {
		if d, why := familyRun(t, f, 200, 0, 1); d != Unknown || !strings.Contains(why, "too few") {
			t.Errorf("%s without refusals: %s (%s), want unknown", name, d, why)
		}
	}
}
