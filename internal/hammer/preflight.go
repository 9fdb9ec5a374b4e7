package hammer

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/exitcode"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/lint"
	"github.com/limitctl/limitctl/internal/redisconn"
	"github.com/limitctl/limitctl/internal/rediserr"
	"github.com/limitctl/limitctl/internal/scriptcache"
)

// lintScript runs the linter over the custom script first, with the project's .limitctl.yaml:
// every finding goes to notice, errors stop the run (a failed check, exit 3) unless NoLint. A
// script the linter cannot parse only warns: Redis decides when the script is loaded.
func lintScript(o Options, notice func(string)) error {
	cfg, err := lint.FindConfig(filepath.Dir(o.Script))
	if err != nil {
		return exitcode.Usagef("%v", err)
	}
	diags, block := lint.Gate(lint.LintWith(o.Script, []byte(o.ScriptSource), cfg))
	for _, d := range diags { // before a run there is no --explain: what was shortened follows
		line := d.Fit(lint.LineWidth)
		notice(line)
		if line != d.String() {
			for _, l := range d.Explanation(lint.LineWidth) {
				notice(l)
			}
		}
	}
	if block && !o.NoLint {
		return exitcode.CheckFailedf("lint found errors in %s; fix them or pass --no-lint", o.Script)
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
				return fmt.Errorf("strategy function cannot load its library: %s", oneLine(err.Error()))
			} else if err != nil {
				return fmt.Errorf("strategy function needs Redis 7 Functions: %s", redisReason(err))
			}
		case limiter.Lua, limiter.LuaTSMember, limiter.Custom:
			src, what := limiter.ScriptFor(o.Limiter).Source, "the "+limiter.ScriptFor(o.Limiter).Name+" script"
			if s == limiter.Custom {
				src, what = o.ScriptSource, o.Script
			}
			for _, m := range masters {
				if err := m.ScriptLoad(ctx, src).Err(); rediserr.Is(err, rediserr.Permission) {
					return fmt.Errorf("strategy %s cannot load %s: SCRIPT LOAD: %s", s, what, oneLine(err.Error()))
				} else if err != nil {
					return fmt.Errorf("Redis rejected %s: %s", what, redisReason(err))
				}
			}
		}
	}
	return nil
}

// probe checks, before any load, that the user may send everything the run will: the
// clean-up's SCAN and UNLINK, the Redis witness, and one decision (and release) per strategy on
// a throw-away key of the run. An ACL user short of one command otherwise runs the whole
// duration as counted errors, or leaves its keys behind. Only refusals stop the run here
// (refused); any other error is the run's to count.
func (s *session) probe(ctx context.Context) error {
	if !s.opts.KeepKeys {
		// Before anything is written, so a user who cannot clean up leaves nothing behind.
		if err := s.keys.probeCleanup(ctx, s.rdb); refused(err, false) {
			return fmt.Errorf("the run's keys could not be deleted at the end: %s (grant SCAN and UNLINK, or pass --keep-keys)", oneLine(err.Error()))
		}
	}
	err := s.probeDecisions(ctx)
	if err != nil && !s.opts.KeepKeys {
		s.cleanup()
	}
	return err
}

func (s *session) probeDecisions(ctx context.Context) error {
	if s.witnessKey != nil {
		w := bench.NewRedisWitness(s.rdb, s.keys.Probe("witness"), s.opts.Limit, s.opts.StaleAfter, s.deps.Timeout)
		if err := w.Probe(ctx); refused(err, true) {
			return fmt.Errorf("--witness redis cannot run: %s", oneLine(err.Error()))
		}
	}
	for _, st := range s.cfg.Strategies {
		key := s.keys.Probe(st.Name)
		d, err := st.Limiter.Acquire(ctx, key, s.deps.Now())
		if err == nil {
			err = st.Limiter.Release(ctx, key, d)
		}
		strategy := limiter.Strategy(st.Name)
		if refused(err, strategy.RunsScript() && strategy != limiter.Custom) {
			return fmt.Errorf("strategy %s cannot run: %s", st.Name, oneLine(err.Error()))
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
	msg := oneLine(err.Error())
	if i := strings.Index(msg, ", with args beginning with"); i >= 0 {
		msg = msg[:i]
	}
	if len(msg) > 200 {
		msg = msg[:200] + "..."
	}
	return msg
}

// oneLine keeps a message to its first line.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	return s
}
