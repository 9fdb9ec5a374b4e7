// Package corpus makes correct limiters by construction: Lua scripts of every kind's families
// (SPEC section 11), each with its calling contract, for proving that no verdict blames a correct
// limiter. Every script holds its limit exactly, refuses only without room (as its family
// decides room), and sets a TTL on every key it writes; what varies is what a correct limiter
// may vary: where its windows start, how it refills, the unit and source of its time, integer or
// float arithmetic, a TTL in whole seconds or milliseconds, whether a refused call is counted
// where the kind allows it, and the shape of its reply.
package corpus

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/limitctl/limitctl/internal/limiter"
)

// Limiter is one generated correct limiter: its script and how the hammer calls it.
type Limiter struct {
	// Name says the family and the parameters, e.g. "fixed-window/grid/clock=us/ttl=s/limit=20/window=1s".
	Name   string
	Kind   limiter.Kind
	Family string
	Source string
	// Keys, Args, Allowed and Release are the contract's templates (--script-keys, ...).
	Keys, Args, Allowed, Release string
	Limit                        int64
	Window                       time.Duration
	// WindowStart is what the contract may say of a fixed window (--window-start); "" says
	// nothing, so the alignment is unknown, or epoch where the templates name the window.
	WindowStart string
}

// Flags are the hammer's flags that run l, its script at path.
func (l Limiter) Flags(path string) []string {
	out := []string{"--limiter", string(l.Kind), "--strategies", "custom", "--script", path,
		"--script-keys", l.Keys, "--script-args", l.Args, "--script-allowed", l.Allowed,
		"--limit", fmt.Sprint(l.Limit), "--window", l.Window.String()}
	if l.Release != "" {
		out = append(out, "--script-release", l.Release)
	}
	if l.WindowStart != "" {
		out = append(out, "--window-start", l.WindowStart)
	}
	return out
}

// Correct is the corpus: every family of every kind under every clock it can run on, the
// other parameters drawn from seed (the same seed, the same corpus).
func Correct(seed uint64) []Limiter {
	rng := rand.New(rand.NewPCG(seed, seed^0x9E3779B97F4A7C15))
	var out []Limiter
	for _, f := range families {
		for _, c := range clocks {
			if !f.runsOn(c) {
				continue
			}
			p := drawParams(rng, f, c)
			out = append(out, f.build(c, p))
		}
	}
	return out
}

// Sample is n limiters of the corpus, spread over its kinds and families, drawn by seed.
func Sample(seed uint64, n int) []Limiter {
	all := Correct(seed)
	rng := rand.New(rand.NewPCG(seed+1, seed))
	rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	seen := map[string]bool{}
	var out []Limiter
	for pass := 0; pass < 2 && len(out) < n; pass++ {
		for _, l := range all {
			key := string(l.Kind) + "/" + l.Family
			if len(out) < n && (pass == 1 || !seen[key]) && !contains(out, l) {
				seen[key] = true
				out = append(out, l)
			}
		}
	}
	return out
}

func contains(ls []Limiter, l Limiter) bool {
	for _, x := range ls {
		if x.Name == l.Name {
			return true
		}
	}
	return false
}

// clock is where a script's time comes from and in what unit: passed in ARGV, or read from TIME
// (the hammer's virtual clock answers it).
type clock struct {
	name string
	// now is the ARGV template of the time, "" when the script reads TIME (read is then the Lua
	// that sets now from it); window and stale are the templates of the window and the stale
	// time in the same unit.
	now, read, window, stale string
	// wholeSeconds: the time is whole seconds, so a window or stale time must be too.
	wholeSeconds bool
	// fixedOnly: only a fixed window is correct on this clock. A script that reads TIME and keeps
	// its whole seconds is exact in real time only where its windows are whole seconds of the
	// epoch or of a start it keeps; a sliding log, a bucket's refill or a stale time counted in
	// whole seconds the hammer cannot know of (the contract passes no {now_s_int}) is up to a
	// second short.
	fixedOnly bool
	// second is one second in the clock's unit, as Lua.
	second string
}

var clocks = []clock{
	{name: "none"}, // told no time: the contract's window index, or the server's clock, decides
	{name: "ms", now: "{now_ms}", window: "{window_ms}", stale: "{stale_after_ms}", second: "1000"},
	{name: "us", now: "{now_us}", window: "{window_us}", stale: "{stale_after_ms * 1000}", second: "1000000"},
	{name: "ns", now: "{now_us}000", window: "{window_ns}", stale: "{stale_after_ms * 1000000}", second: "1e9"},
	{name: "s", now: "{now_s}", window: "{window_s}", stale: "{stale_after_s}", second: "1"},
	{name: "s-int", now: "{now_s_int}", window: "{window_s}", stale: "{stale_after_s}", second: "1", wholeSeconds: true},
	{name: "time-ms", read: "local t = redis.call('TIME')\nlocal now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)",
		window: "{window_ms}", stale: "{stale_after_ms}", second: "1000"},
	{name: "time-s", read: "local t = redis.call('TIME')\nlocal now = tonumber(t[1]) + tonumber(t[2]) / 1000000",
		window: "{window_s}", stale: "{stale_after_s}", second: "1"},
	{name: "time-s-int", read: "local now = tonumber(redis.call('TIME')[1])", window: "{window_s}", stale: "{stale_after_s}",
		second: "1", wholeSeconds: true, fixedOnly: true},
}

// params are a limiter's drawn parameters.
type params struct {
	limit         int64
	window        time.Duration
	ttlSeconds    bool // EXPIRE in whole seconds, else PEXPIRE in ms
	countsRefused bool // fixed window: a refused call raises the count too
	reply         int  // which reply shape (family-specific)
}

// windows are the windows drawn from, 100ms to a minute; whole seconds where the clock or the
// family needs them.
var windows = []time.Duration{100 * time.Millisecond, 250 * time.Millisecond, time.Second, 1500 * time.Millisecond,
	2 * time.Second, 5 * time.Second, time.Minute}

var limits = []int64{1, 2, 5, 20, 50, 100}

func drawParams(rng *rand.Rand, f family, c clock) params {
	var p params
	for {
		p.window = windows[rng.IntN(len(windows))]
		whole := c.wholeSeconds || f.wholeSeconds
		if (!whole || p.window%time.Second == 0) && f.fits(p.window) {
			break
		}
	}
	p.limit = limits[rng.IntN(len(limits))]
	if p.window <= 250*time.Millisecond {
		p.limit = min(p.limit, 20) // 64 workers reach 100 a window of 100ms only on a quiet machine
	}
	p.ttlSeconds = rng.IntN(2) == 0
	p.countsRefused = rng.IntN(2) == 0
	p.reply = rng.IntN(3)
	return p
}

// family is one way of being a correct limiter of a kind.
type family struct {
	kind limiter.Kind
	name string
	// wholeSeconds: the family needs windows of whole seconds (a start rounded to a second).
	wholeSeconds bool
	// onlyNoTime: the script is told no time and reads none (it runs on the clock "none"); the
	// other families run on every other clock.
	onlyNoTime bool
	// argTime: the script is told its time in ARGV (its windows are named by the caller's clock,
	// so decided by that same clock), never reading TIME.
	argTime bool
	// maxWindow bounds the windows it is drawn with (0: any).
	maxWindow time.Duration
	build     func(c clock, p params) Limiter
}

func (f family) runsOn(c clock) bool {
	return f.onlyNoTime == (c.name == "none") && (!c.fixedOnly || f.kind == limiter.FixedWindow) && (!f.argTime || c.now != "")
}

func (f family) fits(w time.Duration) bool { return f.maxWindow == 0 || w <= f.maxWindow }

// script assembles a script: its header, the arguments it reads (with now from ARGV or TIME),
// and its body.
type script struct {
	args  []string // ARGV templates in order
	lines []string
}

// arg adds an ARGV template and returns the Lua that reads it as a number.
func (s *script) arg(template string) string {
	s.args = append(s.args, template)
	return fmt.Sprintf("tonumber(ARGV[%d])", len(s.args))
}

// rawArg adds an ARGV template and returns the Lua that reads it as it is (a member).
func (s *script) rawArg(template string) string {
	s.args = append(s.args, template)
	return fmt.Sprintf("ARGV[%d]", len(s.args))
}

func (s *script) add(format string, a ...any) { s.lines = append(s.lines, fmt.Sprintf(format, a...)) }

// now declares now in the clock's unit.
func (s *script) now(c clock) {
	if c.now == "" {
		s.lines = append(s.lines, strings.Split(c.read, "\n")...)
		return
	}
	s.add("local now = %s", s.arg(c.now))
}

// expire is the Lua that sets key's TTL to ms milliseconds (a Lua expression), in whole seconds
// (rounded up) or in ms.
func expire(p params, key, ms string) string {
	if p.ttlSeconds {
		return fmt.Sprintf("redis.call('EXPIRE', %s, math.ceil((%s) / 1000))", key, ms)
	}
	return fmt.Sprintf("redis.call('PEXPIRE', %s, math.ceil(%s))", key, ms)
}

// num is the Lua helper that writes a number exactly enough to read it back.
const num = "local function num(x) return string.format('%.17g', x) end"

func (s *script) source(title string) string {
	return "-- " + title + " (generated by internal/corpus: a correct limiter by construction)\n" + num + "\n" +
		strings.Join(s.lines, "\n") + "\n"
}

// args joins the ARGV templates as --script-args takes them.
func (s *script) argsTemplate() string { return strings.Join(s.args, " ") }

func name(kind limiter.Kind, fam string, c clock, p params, extra ...string) string {
	ttl := "ms"
	if p.ttlSeconds {
		ttl = "s"
	}
	parts := append([]string{string(kind), fam, "clock=" + c.name, "ttl=" + ttl}, extra...)
	parts = append(parts, fmt.Sprintf("limit=%d", p.limit), "window="+p.window.String())
	return strings.Join(parts, "/")
}
