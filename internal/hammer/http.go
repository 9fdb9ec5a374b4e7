package hammer

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/evidence/refusal"
	"github.com/limitctl/limitctl/internal/exitcode"
	"github.com/limitctl/limitctl/internal/hammer/runkeys"
	"github.com/limitctl/limitctl/internal/httptarget"
	"github.com/limitctl/limitctl/internal/limiter"
)

// HTTPTarget is one resolved --http target: its spec (the name filled in), and the SCAN pattern
// of its limiter's keys ("" when they are not read).
type HTTPTarget struct {
	httptarget.Spec
	KeysPattern string
	// UsesKey: every request names {key} (httptarget.Target.UsesKey), so its refusals are judged.
	UsesKey bool
}

// RefusalsUnknownState is why an HTTP target's refusals are not judged when its requests do not
// name {key}: the client identity it limits may hold state from before the run.
const RefusalsUnknownState = "the limiter's state before the run is unknown: no request names {key}, a fresh client identity per run"

// httpGiven lists the --http-* flags that describe a target, for the error when no --http is.
var httpGiven = []string{"http-method", "http-header", "http-body", "http-admitted", "http-refused", "http-keys"}

// httpTargets checks the HTTP flags into o.HTTP: names, URLs, the request's make-up and how the
// response is read are checked here (httptarget.New), so bad input stops the run before
// anything connects. o.Strategies are the Redis strategies already resolved.
func (fl Flags) httpTargets(o *Options) error {
	h := fl.Limiter.HTTP
	if len(h.Targets) == 0 {
		for _, name := range httpGiven {
			if fl.Given(name) {
				return exitcode.Usagef("--%s describes an HTTP target: give --http [NAME=]URL", name)
			}
		}
		return nil
	}
	taken := map[string]bool{}
	for _, st := range o.Strategies {
		taken[string(st)] = true
	}
	seen := map[string]string{} // an endpoint's request, as sent -> the target that sends it
	unnamed := 0
	for _, arg := range h.Targets {
		name, rawURL := httptarget.SplitName(arg)
		if name == "" {
			name = httptarget.DefaultName(unnamed)
			unnamed++
		}
		if strings.ContainsRune(name, '.') {
			return exitcode.Usagef("--http %s: a name may hold letters, digits, '-' and '_' (an assertion names it before a '.')", arg)
		}
		if taken[name] {
			return exitcode.Usagef("--http %s: %s is already a strategy of this run; name it: --http NAME=URL", arg, name)
		}
		taken[name] = true
		spec := httptarget.Spec{Name: name, URL: rawURL, Method: h.Method, Headers: h.Headers, Body: h.Body, Admitted: h.Admitted, Refused: h.Refused}
		t, err := httptarget.New(spec, httptarget.Options{Run: "run"})
		if err != nil {
			return err
		}
		t.Close()
		// Two targets that send the same request share the limiter's state for each identity:
		// each would see only its own calls, and its refusals be blamed for the other's admits.
		same := t.Method() + " " + rawURL
		if other, ok := seen[same]; ok {
			return exitcode.Usagef("--http %s and %s send the same request: they would share the limiter's state", other, name)
		}
		seen[same] = name
		o.HTTP = append(o.HTTP, HTTPTarget{Spec: spec, UsesKey: t.UsesKey()})
	}
	kind := o.Limiter.Describe()
	switch {
	case fl.Given("skew") && len(o.Strategies) == 0:
		return exitcode.Usagef("--skew has no meaning for an HTTP target: the endpoint decides on its own clock, which no worker's skew reaches")
	case kind.Releases && !fl.Given("hold"):
		return exitcode.Usagef("--http with --limiter %s needs --hold D: what the endpoint promises (it answers an admitted request no sooner than D after it took the slot, and releases the slot before it answers)", o.Limiter)
	case kind.Releases && fl.Hold <= 2*time.Millisecond:
		return exitcode.Usagef("--hold %s: an HTTP target's hold must be more than 2ms (a correct endpoint's timer may fire a millisecond early, and its clock run fast)", fl.Hold)
	case fl.RunID != "" || fl.Witness == "redis":
		return exitcode.Usagef("--http runs in this process alone: an endpoint's evidence is not shared between processes (--run-id, --witness redis)")
	case len(o.Strategies) == 0 && len(fl.Inject) > 0:
		return exitcode.Usagef("--inject acts on the Redis the Redis strategies run on; an HTTP-only run has none")
	case len(o.Strategies) == 0 && fl.Given("embedded"):
		return exitcode.Usagef("--embedded starts a Redis for the Redis strategies; an HTTP-only run starts none")
	}
	return fl.httpKeys(o)
}

// httpKeys assigns each --http-keys pattern to its target.
func (fl Flags) httpKeys(o *Options) error {
	for _, arg := range fl.Limiter.HTTP.Keys {
		if !fl.HasTarget {
			return exitcode.Usagef("--http-keys reads the limiter's own keys: give its Redis with --url or --addr")
		}
		name, pattern, named := strings.Cut(arg, "=")
		if !named || strings.ContainsAny(name, "*?[]{}:") {
			name, pattern = "", arg
		}
		if strings.TrimSpace(pattern) == "" {
			return exitcode.Usagef("--http-keys %q: want a SCAN pattern, e.g. 'rl:{key}*'", arg)
		}
		i := slices.IndexFunc(o.HTTP, func(t HTTPTarget) bool { return t.Name == name })
		switch {
		case name == "" && len(o.HTTP) > 1:
			return exitcode.Usagef("--http-keys %q: with several --http targets, say whose keys: --http-keys NAME=PATTERN", arg)
		case name == "":
			i = 0
		case i < 0:
			return exitcode.Usagef("--http-keys %q: no --http target is named %s", arg, name)
		}
		if o.HTTP[i].KeysPattern != "" {
			return exitcode.Usagef("--http-keys given twice for %s", o.HTTP[i].Name)
		}
		o.HTTP[i].KeysPattern = pattern
	}
	return nil
}

// Names are every strategy of the run in display order: the Redis ones, then the HTTP targets.
func (o Options) Names() []string {
	names := make([]string, 0, len(o.Strategies)+len(o.HTTP))
	for _, st := range o.Strategies {
		names = append(names, string(st))
	}
	for _, t := range o.HTTP {
		names = append(names, t.Name)
	}
	return names
}

// httpTarget is the HTTP target named name, or nil.
func (o Options) httpTarget(name string) *HTTPTarget {
	for i := range o.HTTP {
		if o.HTTP[i].Name == name {
			return &o.HTTP[i]
		}
	}
	return nil
}

// needsRedis reports whether the run needs a Redis: for its Redis strategies, or to read an HTTP
// target's keys.
func (o Options) needsRedis() bool {
	return len(o.Strategies) > 0 || o.RedisTrace || slices.ContainsFunc(o.HTTP, func(t HTTPTarget) bool { return t.KeysPattern != "" })
}

// HTTPRefusalRules are what an endpoint's limiter may rightly do, as far as the hammer knows
// nothing of it: refill in steps of up to a window (a bucket's rule reads it, the others' do
// not), and hold a slot whose request failed for ever (its stale-after is the endpoint's own).
func HTTPRefusalRules(kind *limiter.Description, window time.Duration) refusal.Rules {
	return refusal.Rules{RefillStep: window, NoStaleAfter: kind.Releases}
}

// buildHTTP makes each HTTP target a strategy of the engine, after the Redis ones.
func (s *session) buildHTTP(runID string) error {
	o := s.opts
	conns := o.Workers
	if o.Conns > 0 {
		conns = min(o.Conns, o.Workers)
	}
	kind := o.Limiter.Describe()
	for _, h := range o.HTTP {
		t, err := httptarget.New(h.Spec, httptarget.Options{Conns: conns, Timeout: s.deps.Timeout, Run: runID})
		if err != nil {
			return err
		}
		s.closers = append(s.closers, t.Close)
		s.targets = append(s.targets, t)
		run := bench.StrategyRun{Name: h.Name, Limiter: t.Limiter(), Endpoint: true, ServerClock: true,
			TimeQuantum: time.Millisecond, NoAbandon: true, Refusals: HTTPRefusalRules(kind, o.Window), NoKeys: h.KeysPattern == ""}
		if !t.UsesKey() {
			run.RefusalsUnjudged = RefusalsUnknownState
		}
		s.cfg.Strategies = append(s.cfg.Strategies, run)
	}
	return nil
}

// preflightHTTP checks, before anything starts or any load is sent, that every target's
// address accepts a connection (no request is sent: it would be decided and counted).
func preflightHTTP(ctx context.Context, o Options, timeout time.Duration) error {
	for _, h := range o.HTTP {
		t, err := httptarget.New(h.Spec, httptarget.Options{Timeout: timeout, Run: "preflight"})
		if err != nil {
			return err
		}
		err = t.Preflight(ctx)
		t.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// httpTargetOf is the run's target when no Redis is: the endpoints' addresses.
func (s *session) httpTargetOf() bench.Target {
	var addrs []string
	for _, t := range s.targets {
		if !slices.Contains(addrs, t.Addr()) {
			addrs = append(addrs, t.Addr())
		}
	}
	return bench.Target{Kind: "http", Addr: strings.Join(addrs, ",")}
}

// appKeys are the HTTP targets' limiter keys the run reads and deletes (--http-keys).
func (s *session) appKeys() runkeys.AppKeys {
	a := runkeys.AppKeys{Scheme: s.keys}
	for _, t := range s.opts.HTTP {
		if t.KeysPattern != "" {
			a.Patterns = append(a.Patterns, runkeys.AppPattern{Strategy: t.Name, Pattern: t.KeysPattern})
		}
	}
	return a
}

// keptKeys says where the run's keys stayed (--keep-keys): the run's own, and the HTTP
// targets' limiter keys it read.
func (s *session) keptKeys() string {
	var parts []string
	if len(s.opts.Strategies) > 0 {
		parts = append(parts, s.keys.Describe())
	}
	if app := s.appKeys(); len(app.Patterns) > 0 {
		parts = append(parts, app.Describe())
	}
	return strings.Join(parts, " and ")
}
