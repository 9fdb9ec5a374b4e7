package hammer

import (
	"math"
	"strings"
	"time"

	"github.com/limitctl/limitctl/internal/hammer/inject"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/bench/verdict"
	"github.com/limitctl/limitctl/internal/contract"
	"github.com/limitctl/limitctl/internal/embedded"
	"github.com/limitctl/limitctl/internal/exitcode"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/limiterfile"
	"github.com/limitctl/limitctl/internal/lint"
	"github.com/limitctl/limitctl/internal/outfile"
	"github.com/limitctl/limitctl/scripts"
)

// Flags are a hammer run as the command line gives it, before anything is checked: cmd binds
// its flags here, and Resolve checks every value (a usage error names the flag) and turns them
// into the run's Options, before anything connects or sends load. The limiter under test
// (limiterfile.Limiter) may come from a file (LimiterFile, -f), under the flags given.
type Flags struct {
	limiterfile.Limiter
	// LimiterFile is the limiter file (-f): its fields fill in the flags not given.
	LimiterFile string

	Strategies []string
	Workers    int
	Duration   time.Duration
	Requests   int64
	// MaxDuration (--max-duration) and MaxRequests (--max-requests) cap a run that loads on
	// while its evidence is thin; 0: three times --duration or --requests.
	MaxDuration time.Duration
	MaxRequests int64
	Abandon     float64
	Rate        float64
	Keys        int
	Conns       int
	NoLint      bool
	Witness     string
	OnError     string
	Prefix      string
	RunID       string
	KeepKeys    bool
	Embedded    string
	Inject      []string
	Profile     string
	Skew        time.Duration

	// Record (--record F) writes every call of the run to F for limitctl judge.
	Record string
	// RedisTrace (--http-redis-trace) records the commands the HTTP targets' application sends
	// to its Redis (--url/--addr) by MONITOR; RedisProxy (--http-redis-proxy ADDR) through a
	// proxy listening at ADDR instead, which the application connects to.
	RedisTrace bool
	RedisProxy string
	// Demo (--http-demo) drives a test application of its own, started on loopback beside the
	// embedded Redis, its naive and atomic routes traced (applyDemo).
	Demo bool
	// NoTrace (hidden --no-trace) records no commands: for measuring the recording's cost.
	NoTrace bool
	// NoDirect (hidden --no-direct) sends the script strategies' calls through go-redis on a
	// single node too: for measuring what the direct connections gain.
	NoDirect bool
	// Timeline holds a shared run's timeline flags: the evidence bound, and hidden ones for tests and measures.
	Timeline TimelineFlags

	// Given reports whether a flag was given on the command line: some defaults depend on the
	// limiter (--hold, --skew), and giving some at all means something (--requests, --strategies).
	Given func(flag string) bool
	// HasTarget: --url, --addr or REDIS_URL name the user's server (no embedded one).
	HasTarget bool
}

// Resolve checks the flags and returns the run they describe. A custom script is read and its
// contract compiled here, so a template or expression error stops the run before any load.
func (fl Flags) Resolve() (Options, error) {
	if fl.Given == nil {
		fl.Given = func(string) bool { return false }
	}
	var o Options
	if fl.LimiterFile != "" {
		file, err := limiterfile.Read(fl.LimiterFile)
		if err != nil {
			return Options{}, err
		}
		fl.Given = file.Layer(&fl.Limiter, fl.Given)
	}
	if fl.Demo {
		if err := fl.applyDemo(); err != nil {
			return Options{}, err
		}
	}
	o.Stated, o.stated = fl.Limiter, fl.Given
	var err error
	if o.Limiter, err = limiter.ParseKind(fl.Kind); err != nil {
		return Options{}, exitcode.Usagef("--limiter: %v", err)
	}
	kind := o.Limiter.Describe()
	if o.Strategies, err = fl.strategies(o.Limiter); err != nil {
		return Options{}, err
	}
	if !fl.Given("hold") {
		fl.Hold = kind.DefaultHold // before the checks: --stale-after must outlast the hold the run uses
	}
	if err := fl.checkNumbers(); err != nil {
		return Options{}, err
	}
	if fl.RunID != "" && !ValidRunID(fl.RunID) {
		return Options{}, exitcode.Usagef("--run-id must be 1-64 letters, digits, '-' or '_', got %q", fl.RunID)
	}
	o.Workers, o.Limit, o.Hold, o.Window, o.OpenRate, o.Keys, o.Conns = fl.Workers, fl.Limit, fl.Hold, fl.Window, fl.Rate, fl.Keys, fl.Conns
	o.Duration, o.Requests = fl.Duration, fl.Requests
	if fl.Given("requests") {
		o.Duration = 0
	}
	o.MaxDuration, o.MaxRequests = extensionCaps(fl)
	o.StaleAfter, o.StaleAfterGiven = fl.StaleAfter, fl.Given("stale-after")
	o.AbandonGiven = fl.Given("abandon")
	if o.Abandon, err = fl.abandon(kind); err != nil {
		return Options{}, err
	}
	switch fl.Witness {
	case "local", "redis":
		o.RedisWitness = fl.Witness == "redis"
	default:
		return Options{}, exitcode.Usagef("--witness must be local or redis, got %q", fl.Witness)
	}
	switch fl.OnError {
	case "open", "closed":
		o.FailOpen = fl.OnError == "open"
	default:
		return Options{}, exitcode.Usagef("--on-error must be open or closed, got %q", fl.OnError)
	}
	switch fl.Embedded {
	case "auto", embedded.KindRedisServer, embedded.KindMemory:
		o.Embedded = fl.Embedded
	default:
		return Options{}, exitcode.Usagef("--embedded must be auto, redis-server or memory, got %q", fl.Embedded)
	}
	if fl.Given("embedded") && fl.HasTarget {
		return Options{}, exitcode.Usagef("--embedded applies only without --url/--addr/REDIS_URL")
	}
	if err := fl.httpTargets(&o); err != nil {
		return Options{}, err
	}
	if err := fl.redisTrace(&o); err != nil {
		return Options{}, err
	}
	o.Demo = fl.Demo
	names := o.Names()
	for _, expr := range fl.Assert {
		a, err := verdict.ParseAssertion(expr, names)
		if err != nil {
			return Options{}, exitcode.Usagef("--assert: %v", err)
		}
		o.Assertions = append(o.Assertions, a)
	}
	if o.Injects, err = inject.Parse(fl.Inject, fl.HasTarget); err != nil {
		return Options{}, err
	}
	if fl.Script.File != "" {
		// Read once: the text the clock is chosen by is the text sent.
		if o.ScriptSource, err = scripts.ReadFile(fl.Script.File); err != nil {
			return Options{}, err
		}
		o.Script, o.NoLint = fl.Script.File, fl.NoLint
	}
	if o.Contract, err = fl.contract(kind, o.ScriptSource); err != nil {
		return Options{}, err
	}
	if o.StaleAfter == 0 {
		var unit time.Duration
		if o.Contract != nil && kind.Releases {
			unit = o.Contract.ClockUnit(o.Window)
		}
		o.StaleAfter = DefaultStaleAfterFor(fl.Hold, unit)
	}
	switch fl.Profile {
	case "":
		o.Profile = limiter.DefaultProfile(o.Limiter)
	case limiter.ProfileSteady, limiter.ProfileBursty:
		o.Profile = fl.Profile
	default:
		return Options{}, exitcode.Usagef("--profile must be steady or bursty, got %q", fl.Profile)
	}
	if fl.Skew < 0 || fl.Skew > time.Minute {
		return Options{}, exitcode.Usagef("--skew must be 0 up to 1m, got %s", fl.Skew)
	}
	o.Skew = fl.Skew
	o.NoTrace, o.NoDirect, o.Timeline = fl.NoTrace, fl.NoDirect, fl.Timeline
	if m := fl.Timeline.MaxMiB; m < 0 || math.IsNaN(m) || math.IsInf(m, 0) {
		return Options{}, exitcode.Usagef("--evidence-max-mib must be 0 (no bound) or more, got %v", m)
	}
	if !fl.Given("skew") && len(o.Strategies) > 0 {
		o.Skew = limiter.DefaultSkew(o.Limiter, o.Limit, o.Window) // an HTTP-only run's workers have no clock the endpoint reads
	}
	if fl.Given("script-admit-at") {
		// A schedule's times are on its callers' clocks: skewed ones make them incomparable.
		if fl.Given("skew") && fl.Skew > 0 {
			return Options{}, exitcode.Usagef("--skew applies only without --script-admit-at: the times a schedule answers are on its callers' clocks, and skewed clocks make them incomparable")
		}
		o.Skew = 0
	}
	o.Prefix, o.RunID, o.KeepKeys = fl.Prefix, fl.RunID, fl.KeepKeys
	if fl.Record != "" {
		if err := outfile.CheckFlag("--record", fl.Record); err != nil {
			return o, err
		}
		o.Record = fl.Record
	}
	return o, nil
}

// DefaultCrashes is how a run abandons concurrency requests unless --abandon says otherwise: as
// clients crash, each holding half the limit's slots (rounded up) when it dies, the first half a
// second in and then every three stale-afters (at least a second apart). A correct limiter holds a
// crash's requests for stale-after, so the live load still contends the other half of the limit;
// one that never reclaims is left with half its slots stale at once and few live requests beside
// them, so its refusals are proven wrong once stale-after (and a unit of its clock) has passed,
// within a default run on a clock of whole seconds as on milliseconds. (One request in 500,
// evenly spread, left too few slots both stale and certainly unreclaimed at a refusal.)
func DefaultCrashes(limit int64, staleAfter time.Duration) bench.Crashes {
	return bench.Crashes{Every: max(time.Second, 3*staleAfter), Size: max(1, (limit+1)/2)}
}

// MaxAbandon is the most --abandon may be: beyond half, the load is mostly crashes.
const MaxAbandon = 0.5

// DefaultStaleAfter is the concurrency limiter's stale-after unless --stale-after says
// otherwise: 100 holds, rounded up to a whole second (so {stale_after_s} is a whole number, as
// EXPIRE and SET EX take it) and at least one, so a default run of 5s sees a correct limiter
// reclaim what it abandoned several times over.
func DefaultStaleAfter(hold time.Duration) time.Duration {
	return max(time.Second, (100*hold + time.Second - 1).Truncate(time.Second))
}

// DefaultStaleAfterFor is the default stale-after of a script whose contract tells it the time,
// or its stale time, in a unit of clock (contract.Contract.ClockUnit; 0 for none coarser than a
// millisecond): never shorter than two of those units, rounded up to whole seconds. A script
// that scores a request by a deadline of now plus stale-after, with now in whole seconds, drops
// it at the next second boundary when stale-after is one second: anywhere from a millisecond to a
// second after it began, so a request held for the default hold would be dropped by rounding
// alone; with two units it is kept at least one whole unit. An explicit --stale-after is used as
// given.
func DefaultStaleAfterFor(hold, unit time.Duration) time.Duration {
	return max(DefaultStaleAfter(hold), (2*unit + time.Second - 1).Truncate(time.Second))
}

// crashes is how the run abandons as clients crash: DefaultCrashes for a limiter whose requests
// hold a slot, unless --abandon gave a share.
func (o Options) crashes() bench.Crashes {
	if o.AbandonGiven || !o.Limiter.Describe().Releases {
		return bench.Crashes{}
	}
	return DefaultCrashes(o.Limit, o.StaleAfter)
}

// abandon is the share of admits to abandon: --abandon, or 0 where the run abandons as clients
// crash (DefaultCrashes); given on a limiter that holds nothing, a usage error.
func (fl Flags) abandon(kind *limiter.Description) (float64, error) {
	given := fl.Given("abandon")
	switch {
	case !kind.Releases && given:
		return 0, exitcode.Usagef("--abandon applies only to %s: a %s limiter holds nothing to abandon", limiter.Phrase(limiter.KindsWhere(func(d *limiter.Description) bool { return d.Releases })), kind.Kind)
	case !kind.Releases:
		return 0, nil
	case !given:
		return 0, nil // DefaultCrashes instead
	case fl.Abandon < 0 || fl.Abandon > MaxAbandon || fl.Abandon != fl.Abandon:
		return 0, exitcode.Usagef("--abandon must be 0 (none) up to %g, got %g", MaxAbandon, fl.Abandon)
	}
	return fl.Abandon, nil
}

// strategies are the strategies to run: each once, each one the limiter supports, and custom
// exactly when a script is given (the only one by default then).
func (fl Flags) strategies(k limiter.Kind) ([]limiter.Strategy, error) {
	given := fl.Strategies
	switch {
	case fl.Script.File != "" && !fl.Given("strategies"):
		given = []string{string(limiter.Custom)}
	case len(fl.Limiter.HTTP.Targets) > 0 && !fl.Given("strategies"):
		return nil, nil // the HTTP targets alone
	}
	var out []limiter.Strategy
	seen := map[limiter.Strategy]bool{}
	for _, name := range given {
		s, err := limiter.ParseStrategy(strings.TrimSpace(name))
		if err != nil {
			return nil, exitcode.Usagef("--strategies: %v", err)
		}
		if seen[s] {
			return nil, exitcode.Usagef("--strategies: %s given twice", s)
		}
		if !limiter.Supports(k, s) {
			return nil, exitcode.Usagef("--strategies: %s applies only to %s", s, limiter.SupportedBy(s))
		}
		seen[s] = true
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, exitcode.Usagef("--strategies: give at least one strategy")
	}
	if seen[limiter.Custom] != (fl.Script.File != "") {
		if fl.Script.File == "" {
			return nil, exitcode.Usagef("strategy custom needs --script FILE.lua")
		}
		return nil, exitcode.Usagef("--script runs as strategy custom: add custom to --strategies")
	}
	return out, nil
}

// checkNumbers refuses the counts and durations that make a run meaningless: the limiter's
// (limiterfile.Limiter.Validate, as judge checks them), then the load's.
func (fl Flags) checkNumbers() error {
	if err := fl.Limiter.Validate(fl.Given); err != nil {
		return err
	}
	switch {
	case fl.Workers < 1 || fl.Workers > 10000:
		return exitcode.Usagef("--workers must be 1-10000, got %d", fl.Workers)
	case fl.Given("duration") && fl.Given("requests"):
		return exitcode.Usagef("give --duration or --requests, not both")
	case fl.Duration <= 0:
		return exitcode.Usagef("--duration must be positive, got %s", fl.Duration)
	case fl.Requests < 0 || (fl.Given("requests") && fl.Requests == 0):
		return exitcode.Usagef("--requests must be positive, got %d", fl.Requests)
	case fl.Given("max-duration") && fl.Given("requests"):
		return exitcode.Usagef("--max-duration caps a --duration run; a --requests run is capped by --max-requests")
	case fl.Given("max-requests") && !fl.Given("requests"):
		return exitcode.Usagef("--max-requests caps a --requests run; a --duration run is capped by --max-duration")
	case fl.Given("max-duration") && fl.MaxDuration < fl.Duration:
		return exitcode.Usagef("--max-duration %s must be at least --duration %s (equal: never load on)", fl.MaxDuration, fl.Duration)
	case fl.Given("max-requests") && fl.MaxRequests < fl.Requests:
		return exitcode.Usagef("--max-requests %d must be at least --requests %d (equal: never load on)", fl.MaxRequests, fl.Requests)
	case !(fl.Rate >= 0 && fl.Rate <= 10_000_000): // NaN too, which would run a closed loop
		return exitcode.Usagef("--rate must be 0 (closed loop) up to 10000000, got %g", fl.Rate)
	case fl.Keys < 1 || fl.Keys > 10000:
		return exitcode.Usagef("--keys must be 1-10000, got %d", fl.Keys)
	case fl.Conns < 0 || fl.Conns > 10000:
		return exitcode.Usagef("--conns must be 0 (one per worker) up to 10000, got %d", fl.Conns)
	case fl.Prefix == "" || strings.ContainsAny(fl.Prefix, "{}*?[]\\ \t\n"):
		return exitcode.Usagef("--prefix must be non-empty without braces, glob characters, backslashes or spaces, got %q", fl.Prefix)
	}
	return nil
}

// contract compiles the custom script's calling contract (nil without a script); src is the
// script's text.
func (fl Flags) contract(kind *limiter.Description, src string) (*contract.Contract, error) {
	releaseFlags := []string{"script-release", "script-release-file", "script-release-keys", "script-release-args"}
	for _, name := range append([]string{"script-keys", "script-args", "script-allowed", "script-admit-at", "clock", "window-start", "no-lint"}, releaseFlags...) {
		if fl.Given(name) && fl.Script.File == "" {
			return nil, exitcode.Usagef("--%s describes a custom script: give --script FILE.lua", name)
		}
	}
	if len(fl.Script.Setup) > 0 && fl.Script.File == "" {
		return nil, exitcode.Usagef("%s sets up a custom script's state: give --script FILE.lua", fl.Script.Setup[0].Flag)
	}
	if fl.Script.File == "" {
		return nil, nil
	}
	for _, name := range releaseFlags {
		if fl.Given(name) && !kind.Releases {
			return nil, exitcode.Usagef("--%s applies only to %s", name, limiter.Phrase(limiter.KindsWhere(func(d *limiter.Description) bool { return d.Releases })))
		}
	}
	if fl.Given("window-start") && !kind.Model.Alignable() {
		return nil, exitcode.Usagef("--window-start applies only to %s: where its windows start",
			limiter.Phrase(limiter.KindsWhere(func(d *limiter.Description) bool { return d.Model.Alignable() })))
	}
	if fl.Given("script-admit-at") && kind.Releases {
		// A slot that starts later has no meaning yet for a semaphore: when it is held from, and
		// whether a release before it frees it, are the limiter's own.
		return nil, exitcode.Usagef("--script-admit-at applies only to %s: a concurrency limiter's later slot has no meaning the evidence can hold it to",
			limiter.Phrase(limiter.KindsWhere(func(d *limiter.Description) bool { return !d.Releases })))
	}
	spec := fl.Script
	spec.ReadsTime = lint.ReadsTime([]byte(src))
	if fl.Given("script-args") && strings.TrimSpace(spec.Args) == "" {
		spec.Args = " " // given empty: a script that takes no ARGV, not the shipped contract
	}
	if fl.Given("script-keys") && strings.TrimSpace(spec.Keys) == "" {
		spec.Keys = " " // given empty: a script that takes no KEYS, not the shipped contract
	}
	var err error
	if spec.ReleaseFile != "" {
		if spec.ReleaseScript, err = scripts.ReadFile(spec.ReleaseFile); err != nil {
			return nil, err
		}
	}
	ct, err := contract.Compile(spec, kind.Contract)
	if err != nil {
		return nil, exitcode.Usagef("%v", err)
	}
	if ct.Setup, err = setupSteps(spec.Setup); err != nil {
		return nil, err
	}
	return ct, nil
}

// setupSteps compiles the set-up lines and reads their scripts.
func setupSteps(lines []contract.SetupLine) ([]*contract.Setup, error) {
	var steps []*contract.Setup
	for _, line := range lines {
		step, err := contract.ParseSetup(line)
		if err != nil {
			return nil, exitcode.Usagef("%v", err)
		}
		if step.File != "" {
			if step.Source, err = scripts.ReadFile(step.File); err != nil {
				return nil, err
			}
		}
		steps = append(steps, step)
	}
	return steps, nil
}

// ExtensionFactor is how far a run loads on past --duration or --requests by default while its
// evidence cannot back a verdict: three times as long.
const ExtensionFactor = 3

// extensionCaps are the run's caps on loading on: as given, or ExtensionFactor times its bound.
func extensionCaps(fl Flags) (time.Duration, int64) {
	if fl.Given("requests") {
		if fl.Given("max-requests") {
			return 0, fl.MaxRequests
		}
		return 0, ExtensionFactor * fl.Requests
	}
	if fl.Given("max-duration") {
		return fl.MaxDuration, 0
	}
	return ExtensionFactor * fl.Duration, 0
}
