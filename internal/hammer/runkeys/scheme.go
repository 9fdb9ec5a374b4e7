// Package runkeys owns the names of a hammer run's keys: it builds and recognises them, reads
// what the run left in them, and deletes them.
package runkeys

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/human"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/redisconn"
)

// Scheme owns the names of a run's keys: it builds every name the run writes under, the
// engine's included (bench receives them: Config.KeyFor, SharedConfig.ChunkKey), and the
// clean-up deletes a key only when Owns says this scheme named it.
//
//	<prefix>:{<run-id>}:<strategy>           the limiter key (one key per strategy)
//	<prefix>:{<run-id>.<i>}:<strategy>       the i-th limiter key (--keys > 1: a tag per index
//	                                         spreads them over a cluster's slots; '.' is never
//	                                         in a run id, so no other run's tag looks the same)
//	<limiter key>:<window start ms>          fixed window: the counter of one window (limiter.WindowKey)
//	<limiter key>:limitctl-time              the virtual clock's mark of the key's TIME (custom
//	                                         strategy, --clock virtual: limiter.TimeKey)
//	<limiter key>:witness                    the shared Redis witness (concurrency, --witness redis)
//	<custom's first limiter key>:once        the limiter key of the user's script's single hit
//	                                         after the load (hammer's session.hitOnce)
//	<limiter key>:admits:<chunk>             the shared admits of one chunk of time (windows and
//	                                         bucket, --witness redis: bench.SharedAdmits)
//	<prefix>:{<run-id>}:probe-<what>         the pre-run probe's throw-away keys (and their windows)
//	<prefix>:{<run-id>}:participants         the processes sharing the run id (hammer/participants.go)
//	<prefix>:report:{<run-id>}:<process>     a process's summary for hammer report (hammer/report.go):
//	                                         outside the run's tag, so the clean-up keeps it
//	<prefix>:calls:{<run-id>}:<process>:clock          a process's TIME samples (hammer/timeline)
//	<prefix>:calls:{<run-id>}:<process>:meta           what its refusal judges are built from
//	<prefix>:calls:{<run-id>}:<process>:s:<strategy>:<second>
//	                                         its calls published in one second of its run: like
//	                                         the summaries outside the run's tag, expiring with them
type Scheme struct {
	Prefix     string
	RunID      string       // letters, digits, '-' and '_' only (hammer.ValidRunID)
	Limiter    limiter.Kind // whose decisions may write keys beside the limiter key (Description.OwnsSuffix)
	Keys       int          // limiter keys per strategy
	Strategies []string     // the run's strategy names
	// Targets are the run's HTTP targets' names, in order: each has Keys identities of its own
	// (IdentityOf).
	Targets []string
}

// Key names a strategy's i-th limiter key.
func (k Scheme) Key(strategy string, i int) string {
	if k.Keys <= 1 {
		return k.Prefix + ":{" + k.RunID + "}:" + strategy
	}
	return k.Prefix + ":{" + k.RunID + "." + strconv.Itoa(i) + "}:" + strategy
}

// Once names the limiter key of a strategy's single hit after the load (hammer's
// session.hitOnce): its first limiter key with ":once" after it, under the same hash tag.
func (k Scheme) Once(strategy string) string { return k.Key(strategy, 0) + ":once" }

// Witness names the shared Redis witness of a limiter key.
func (k Scheme) Witness(key string) string { return key + ":witness" }

// admitsSuffix follows a limiter key in the name of its shared admits.
const admitsSuffix = "admits:"

// AdmitChunk names the hash in which the processes of a shared run count a limiter key's
// admits of one chunk of time (bench.SharedAdmits), under the key's own hash tag.
func (k Scheme) AdmitChunk(key string, chunk int64) string {
	return key + ":" + admitsSuffix + strconv.FormatInt(chunk, 10)
}

// Probe names the throw-away key the pre-run permission probe writes for what: a strategy's
// name, "witness" or "cleanup".
func (k Scheme) Probe(what string) string { return k.Prefix + ":{" + k.RunID + "}:probe-" + what }

// Participants names the set of processes running with this run id (hammer/participants.go).
func (k Scheme) Participants() string { return k.Prefix + ":{" + k.RunID + "}:participants" }

// ReportKey names where one process of a run leaves its summary: outside the run's {run-id}
// keys, so that a process's clean-up does not delete what the others left.
func (k Scheme) ReportKey(process string) string {
	return fmt.Sprintf("%s:report:{%s}:%s", k.Prefix, k.RunID, process)
}

// ReportPattern is the SCAN pattern of every process's summary of the run.
func (k Scheme) ReportPattern() string { return fmt.Sprintf("%s:report:{%s}:*", k.Prefix, k.RunID) }

// A process's evidence for the refusal judges of hammer report (hammer/timeline): what each
// key holds.
const (
	CallsClock = "clock"
	CallsMeta  = "meta"
	callsOf    = "s"
)

// CallsKey names one of a process's evidence keys: CallsClock or CallsMeta.
func (k Scheme) CallsKey(process, what string) string {
	return fmt.Sprintf("%s:calls:{%s}:%s:%s", k.Prefix, k.RunID, process, what)
}

// Calls names the list of a process's calls of strategy published in the given second of its run.
func (k Scheme) Calls(process, strategy string, second int64) string {
	return fmt.Sprintf("%s:calls:{%s}:%s:%s:%s:%d", k.Prefix, k.RunID, process, callsOf, strategy, second)
}

// CallsPattern is the SCAN pattern of every process's evidence keys of the run.
func (k Scheme) CallsPattern() string {
	return redisconn.GlobEscape(k.Prefix) + ":calls:{" + k.RunID + "}:*"
}

// CallsKeyOf reads a name CallsKey or Calls built: the process, and either what (CallsClock,
// CallsMeta) or the strategy and second; ok is false for any other name.
func (k Scheme) CallsKeyOf(key string) (process, what, strategy string, second int64, ok bool) {
	rest, found := strings.CutPrefix(key, k.Prefix+":calls:{"+k.RunID+"}:")
	if !found {
		return "", "", "", 0, false
	}
	parts := strings.Split(rest, ":")
	switch {
	case len(parts) == 2 && parts[0] != "" && (parts[1] == CallsClock || parts[1] == CallsMeta):
		return parts[0], parts[1], "", 0, true
	case len(parts) == 4 && parts[0] != "" && parts[1] == callsOf && parts[2] != "" && digits(parts[3]):
		n, err := strconv.ParseInt(parts[3], 10, 64)
		return parts[0], "", parts[2], n, err == nil
	}
	return "", "", "", 0, false
}

// Describe says where the run's keys live, for the --keep-keys notice.
func (k Scheme) Describe() string {
	if k.Keys <= 1 {
		return k.Prefix + ":{" + k.RunID + "}:..."
	}
	return k.Prefix + ":{" + k.RunID + "}:... and " + k.Prefix + ":{" + k.RunID + ".<i>}:..."
}

// Owns reports whether key is one this scheme names: the exact prefix and run id, a strategy
// of the run (or a probe), and no suffix but one the limiter's decisions write (a fixed
// window's start), the witness or an admits chunk
// (the custom strategy: any suffix, since its contract names its keys from {key}). A
// look-alike (another run id that starts the same, a user's key under the prefix) is never
// owned. The summaries and evidence left for hammer report are not the clean-up's: it never
// owns them (they expire on their own, ReportTTL).
func (k Scheme) Owns(key string) bool {
	rest, ok := strings.CutPrefix(key, k.Prefix+":{")
	if !ok {
		return false
	}
	tag, rest, ok := strings.Cut(rest, "}:")
	if !ok {
		return false
	}
	name, suffix, hasSuffix := strings.Cut(rest, ":")
	if custom, ok := customName(rest); ok {
		// The custom script's KEYS are templates that must contain {key}: whatever follows it
		// (":backlog", ".backlog_info", "/-1", a slot number) names one of its keys.
		name, hasSuffix = custom, false
	}
	if tag == k.RunID && rest == "participants" {
		return true // the shared run's register: the last process to leave deletes it with the rest
	}
	switch {
	case tag == k.RunID && (k.Keys <= 1 || strings.HasPrefix(name, "probe-")):
	case k.Keys > 1 && k.indexTag(tag):
	default:
		return false
	}
	what, probe := strings.CutPrefix(name, "probe-")
	if !k.strategy(what) && !(probe && (what == "witness" || what == "cleanup")) {
		return false
	}
	if what == string(limiter.Custom) {
		return true
	}
	chunk, isChunk := strings.CutPrefix(suffix, admitsSuffix)
	return !hasSuffix || suffix == "witness" || (isChunk && !probe && digits(chunk)) ||
		(k.Limiter != "" && k.Limiter.Describe().OwnsSuffix(suffix))
}

// customName cuts what follows the custom strategy's name (or its probe's) off rest: any
// suffix that does not go on with a letter, so "custom.tokens" is custom's and "customer" is not.
func customName(rest string) (string, bool) {
	for _, name := range []string{"probe-" + string(limiter.Custom), string(limiter.Custom)} {
		if after, ok := strings.CutPrefix(rest, name); ok && (after == "" || !unicode.IsLetter(rune(after[0]))) {
			return name, true
		}
	}
	return "", false
}

// indexTag is "<run-id>.<i>" with i a key index of the run.
func (k Scheme) indexTag(tag string) bool {
	index, ok := strings.CutPrefix(tag, k.RunID+".")
	if !ok || !digits(index) || (len(index) > 1 && index[0] == '0') {
		return false
	}
	i, err := strconv.Atoi(index)
	return err == nil && i < k.Keys
}

func (k Scheme) strategy(name string) bool {
	for _, s := range k.Strategies {
		if s == name {
			return true
		}
	}
	return false
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// patterns are the SCAN patterns that find every key the run may own (and a few it does not,
// which Owns then leaves alone): the run id is matched exactly, closing brace or '.' included.
func (k Scheme) patterns() []string {
	p := []string{redisconn.GlobEscape(k.Prefix) + ":{" + k.RunID + "}:*"}
	if k.Keys > 1 {
		p = append(p, redisconn.GlobEscape(k.Prefix)+":{"+k.RunID+".*")
	}
	return p
}

// CleanupReport is what the clean-up did: the keys deleted, those it failed to delete, and a
// warning for each failure.
type CleanupReport struct {
	Deleted  int64
	Failed   int64
	Warnings []string
}

// Cleanup deletes the run's keys on every master (SCAN for the run's exact patterns, never
// KEYS; UNLINK only what Owns), bounded in time, also after an interrupt. Every UNLINK that
// failed is counted and reported, never swallowed.
func (k Scheme) Cleanup(rdb redis.UniversalClient, timeout time.Duration) CleanupReport {
	return unlinkMatching(rdb, timeout, k.patterns(), k.Owns)
}

// unlinkMatching deletes, on every master, the keys the patterns find that owns accepts.
func unlinkMatching(rdb redis.UniversalClient, timeout time.Duration, patterns []string, owns func(string) bool) CleanupReport {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second+timeout)
	defer cancel()
	var rep CleanupReport
	masters, err := redisconn.Masters(ctx, rdb)
	if err != nil {
		rep.Warnings = append(rep.Warnings, "could not delete the run's keys: "+human.FirstLine(err.Error()))
		return rep
	}
	for _, m := range masters {
		var batch []string
		var failed int64
		var firstErr error
		flush := func() {
			if len(batch) == 0 {
				return
			}
			// One UNLINK per key: in a cluster the keys of one batch may sit in different slots.
			cmds, _ := m.Pipelined(ctx, func(p redis.Pipeliner) error {
				for _, key := range batch {
					p.Unlink(ctx, key)
				}
				return nil
			})
			for i := range batch {
				var err error
				if i < len(cmds) {
					err = cmds[i].Err()
				} else {
					err = ctx.Err()
				}
				if err != nil {
					failed++
					if firstErr == nil {
						firstErr = err
					}
				} else {
					rep.Deleted++
				}
			}
			batch = batch[:0]
		}
		for _, pattern := range patterns {
			iter := m.Scan(ctx, 0, pattern, 1000).Iterator()
			for iter.Next(ctx) {
				if key := iter.Val(); owns(key) {
					batch = append(batch, key)
				}
				if len(batch) == 500 {
					flush()
				}
			}
			flush()
			if err := iter.Err(); err != nil && !errors.Is(err, context.Canceled) {
				rep.Warnings = append(rep.Warnings, fmt.Sprintf("could not look for all of the run's keys on %s: %s", redisconn.NodeAddr(m), human.FirstLine(err.Error())))
			}
		}
		if failed > 0 {
			rep.Failed += failed
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("could not delete %d of the run's keys on %s: %s", failed, redisconn.NodeAddr(m), human.FirstLine(firstErr.Error())))
		}
	}
	return rep
}

// ProbeRead checks the user may read what the run leaves behind (leftovers.go: SCAN on every
// master, TYPE and PTTL), before anything is written.
func (k Scheme) ProbeRead(ctx context.Context, rdb redis.UniversalClient) error {
	if err := k.probeScan(ctx, rdb); err != nil {
		return err
	}
	if err := rdb.Type(ctx, k.Probe("cleanup")).Err(); err != nil {
		return err
	}
	return rdb.PTTL(ctx, k.Probe("cleanup")).Err()
}

// ProbeCleanup checks the user may SCAN every master and UNLINK, before anything is written.
func (k Scheme) ProbeCleanup(ctx context.Context, rdb redis.UniversalClient) error {
	if err := k.probeScan(ctx, rdb); err != nil {
		return err
	}
	return rdb.Unlink(ctx, k.Probe("cleanup")).Err()
}

// probeScan checks the user may SCAN the run's pattern on every master.
func (k Scheme) probeScan(ctx context.Context, rdb redis.UniversalClient) error {
	masters, err := redisconn.Masters(ctx, rdb)
	if err != nil {
		return err
	}
	for _, m := range masters {
		if err := m.Scan(ctx, 0, k.patterns()[0], 10).Err(); err != nil {
			return err
		}
	}
	return nil
}
