package hammer

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/contract"
	"github.com/limitctl/limitctl/internal/evidence/overshoot"
	"github.com/limitctl/limitctl/internal/exitcode"
	"github.com/limitctl/limitctl/internal/human"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/lint"
	"github.com/limitctl/limitctl/internal/redisconn"
	"github.com/limitctl/limitctl/internal/rediserr"
	"github.com/limitctl/limitctl/internal/scriptcache"
)

// lintScript runs the linter over the custom script (and its release and set-up scripts) first,
// with the project's .limitctl.yaml: errors are listed and stop the run (exit 4,
// LintRefusedError) unless NoLint; warnings are one line that counts them and says which command
// lists them, so the run's own lines stay in view. A script the linter cannot parse only warns, in full: Redis decides
// when the script is loaded. A TIME read is no finding when the run decides the clock (server or
// virtual).
func lintScript(o Options, notice func(string)) error {
	files := []struct{ name, src string }{{o.Script, o.ScriptSource}}
	if o.Contract != nil && o.Contract.Spec.ReleaseScript != "" {
		files = append(files, struct{ name, src string }{o.Contract.Spec.ReleaseFile, o.Contract.Spec.ReleaseScript})
	}
	if o.Contract != nil {
		for _, step := range o.Contract.Setup {
			if step.Source != "" {
				files = append(files, struct{ name, src string }{step.File, step.Source})
			}
		}
	}
	for i, f := range files {
		cfg, err := lint.FindConfig(filepath.Dir(f.name))
		if err != nil {
			return exitcode.Usagef("%v", err)
		}
		cfg.TimeAnswered = i == 0 && ClockOf(o, limiter.Custom) != contract.ClientClock
		diags, block := lint.Gate(lint.LintWith(f.name, []byte(f.src), cfg))
		var warnings []lint.Diagnostic
		for _, d := range diags {
			// An error, or a file the linter could not read: in full, fitted to the line width;
			// before a run there is no --explain, so what was shortened follows.
			if d.Severity == lint.SeverityError || d.Rule == lint.RuleSyntax {
				line := d.Fit(lint.LineWidth)
				notice(line)
				if line != d.String() {
					for _, l := range d.Explanation(lint.LineWidth) {
						notice(l)
					}
				}
			} else {
				warnings = append(warnings, d)
			}
		}
		if line := lint.WarningsLine(f.name, warnings); line != "" {
			notice(line)
		}
		if block && !o.NoLint {
			return lint.Refusal(f.name, diags)
		}
	}
	return nil
}

// preflight loads what the strategies call by name, so the first decisions are not all
// NOSCRIPT fallbacks, and a custom script Redis rejects stops the run before any load.
func preflight(ctx context.Context, rdb redis.UniversalClient, o Options) error {
	masters, err := redisconn.Masters(ctx, rdb)
	if err != nil {
		return err
	}
	for _, s := range o.Strategies {
		switch s {
		case limiter.Function:
			if err := scriptcache.InstallLibrary(ctx, rdb); rediserr.Is(err, rediserr.Permission) {
				return fmt.Errorf("strategy function cannot load its library: %s", human.FirstLine(err.Error()))
			} else if err != nil {
				return fmt.Errorf("strategy function needs Redis 7 Functions: %s", redisReason(err))
			}
		case limiter.Lua, limiter.LuaTSMember, limiter.Custom:
			type load struct{ src, what string }
			loads := []load{{limiter.ScriptFor(o.Limiter).Source, "the " + limiter.ScriptFor(o.Limiter).Name + " script"}}
			if s == limiter.Custom {
				// The bytes the strategy sends: on the virtual clock, the script behind its prologue.
				loads = []load{{limiter.CustomSource(o.ScriptSource, ClockOf(o, s)), o.Script}}
				if o.Contract != nil && o.Contract.Spec.ReleaseScript != "" {
					loads = append(loads, load{o.Contract.Spec.ReleaseScript, o.Contract.Spec.ReleaseFile})
				}
			}
			for _, l := range loads {
				for _, m := range masters {
					if err := m.ScriptLoad(ctx, l.src).Err(); rediserr.Is(err, rediserr.Permission) {
						return fmt.Errorf("strategy %s cannot load %s: SCRIPT LOAD: %s", s, l.what, human.FirstLine(err.Error()))
					} else if err != nil {
						return fmt.Errorf("Redis rejected %s: %s", l.what, redisReason(err))
					}
				}
			}
		}
	}
	return nil
}

// probe checks, before any load, that the user may send everything the run will: the
// clean-up's SCAN and UNLINK, the custom script's set-up (setup.go, on every key of the run),
// the Redis witness, and one decision (and release) per strategy on a throw-away key of the run.
// An ACL user short of one command otherwise runs the whole duration as counted errors, or
// leaves its keys behind. Only refusals (refused) and a set-up step that fails stop the run
// here; any other error is the run's to count.
func (s *session) probe(ctx context.Context) error {
	if len(s.opts.Strategies) == 0 {
		return nil // HTTP targets alone: nothing is written in Redis, and what --http-keys reads is the limiter's
	}
	if err := s.keys.ProbeRead(ctx, s.rdb); refused(err, false) {
		return fmt.Errorf("what the run leaves behind could not be read at its end: %s (grant SCAN, TYPE and PTTL)", human.FirstLine(err.Error()))
	}
	if !s.opts.KeepKeys {
		// Before anything is written, so a user who cannot clean up leaves nothing behind.
		if err := s.keys.ProbeCleanup(ctx, s.rdb); refused(err, false) {
			return fmt.Errorf("the run's keys could not be deleted at the end: %s (grant SCAN and UNLINK, or pass --keep-keys)", human.FirstLine(err.Error()))
		}
	}
	err := s.setup(ctx)
	if err == nil {
		err = s.probeDecisions(ctx)
	}
	if err != nil && !s.opts.KeepKeys {
		s.cleanup()
	}
	return err
}

func (s *session) probeDecisions(ctx context.Context) error {
	if s.witnessKey != nil {
		w := overshoot.NewRedisWitness(s.rdb, s.keys.Probe("witness"), s.opts.Limit, s.opts.StaleAfter, s.deps.Timeout)
		if err := w.Probe(ctx); refused(err, true) {
			return fmt.Errorf("--witness redis cannot run: %s", human.FirstLine(err.Error()))
		}
	}
	for _, st := range s.cfg.Strategies {
		if st.Endpoint {
			continue // a request would be decided and counted: its address was checked (preflightHTTP)
		}
		key := s.keys.Probe(st.Name)
		d, err := st.Limiter.Acquire(ctx, key, s.deps.Now())
		if err == nil {
			err = st.Limiter.Release(ctx, key, d)
		}
		strategy := limiter.Strategy(st.Name)
		if refused(err, strategy.RunsScript() && strategy != limiter.Custom) {
			return fmt.Errorf("strategy %s cannot run: %s", st.Name, human.FirstLine(err.Error()))
		}
	}
	return nil
}

// refused reports whether a check's failure stops the run before any load: the ACL or the
// authentication refused (NOPERM, NOAUTH, WRONGPASS), or a script limitctl ships (a limiter's,
// the witness's, the shared run's register) failed on a throw-away key. A shipped script fails
// there only when it may not run what it calls, and Redis 7.0 reports that refusal inside a
// script with a bare ERR, no NOPERM code. A custom script's failure is the run's to count: its
// contract may not fit, which the summary then says.
func refused(err error, shippedScript bool) bool {
	kind := rediserr.Classify(err)
	if shippedScript {
		kind = rediserr.ClassifyScriptCall(err)
	}
	return kind == rediserr.Permission || (shippedScript && kind == rediserr.Script)
}

// redisReason is Redis's complaint without the command's arguments, which some servers echo
// back ("with args beginning with: ..." would repeat a whole script).
func redisReason(err error) string {
	msg := human.FirstLine(err.Error())
	if i := strings.Index(msg, ", with args beginning with"); i >= 0 {
		msg = msg[:i]
	}
	if len(msg) > 200 {
		msg = msg[:200] + "..."
	}
	return msg
}
