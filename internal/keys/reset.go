package keys

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/exitcode"
	"github.com/limitctl/limitctl/internal/human"
	"github.com/limitctl/limitctl/internal/keys/kind"
	"github.com/limitctl/limitctl/internal/redisconn"
	"github.com/limitctl/limitctl/internal/rediserr"
)

// Reset deletes a limiter's whole state: each key inspect recognises, with the keys that hold
// the rest of the same limiter's state (docs/kinds.md names them: a two-string bucket's other
// half, a counter's :timer, the other window of a counter pair, the other held slots of a lock).
// Deleting one key of such a layout would leave a state the library never writes.

// Batch bounds of a reset: one round trip deletes at most this many keys (whole groups).
const (
	DefaultResetBatch = 500
	MaxResetBatch     = 10000
)

// SkipUnknownKind is why reset leaves a key of kind unknown alone, unless forced: it is not
// recognisably a limiter's state, so deleting it could delete anything.
const SkipUnknownKind = "kind unknown: not recognised as a limiter's state"

// ResetOptions say what a reset deletes.
type ResetOptions struct {
	DryRun bool  // plan and report, delete nothing
	Force  bool  // delete keys of kind unknown too
	Batch  int   // at most this many keys per round trip; a group is never split
	Count  int64 // SCAN COUNT hint when selecting and looking for a lock's other slots
	Clock  Clock // the reference time of kind detection
	// Confirm, when set, is asked before anything is deleted of what a pattern matched
	// (ResetPatterns); a no leaves every key as it was. Nil deletes without asking (--yes, a
	// dry run, only literal keys).
	Confirm func(question string) (bool, error)
}

// ResetKey is what reset did (in a dry run: would do) to one key named or matched, and the keys
// that belong with it.
type ResetKey struct {
	Key  string    `json:"key"`
	Node string    `json:"node"`
	Kind kind.Kind `json:"kind"` // "" for a named key that does not exist
	// Deleted is true once the key is gone (in a dry run: that it would go).
	Deleted bool `json:"deleted"`
	// With lists the other keys of the same limiter's state deleted with it (would be, in a dry
	// run), sorted; never null.
	With    []string `json:"with"`
	Skipped string   `json:"skipped"` // empty, or why the key was left alone

	group []string // the keys to delete, Key first; nil when skipped
}

// ResetResult is a whole reset run, printed as it is under -o json, as its Table and with its
// Notes.
type ResetResult struct {
	DryRun       bool       `json:"dry_run"`
	Keys         []ResetKey `json:"keys"`
	TotalDeleted int64      `json:"total_deleted"` // keys deleted, partners included (would be, in a dry run)
	// Interrupted is true when the context was cancelled between batches: Keys and TotalDeleted
	// say what was done until then.
	Interrupted bool     `json:"-"`
	Args        []string `json:"-"` // the keys and patterns asked for, for the notes
}

// ResetPatterns selects the keys and patterns of args (Select), plans their reset (PlanReset),
// asks opts.Confirm when a pattern matched keys to delete (a no returns ErrNotConfirmed with a
// result of nothing), and resets them (Reset).
func ResetPatterns(ctx context.Context, rdb redis.UniversalClient, args []string, opts ResetOptions) (ResetResult, error) {
	sel, err := Select(ctx, rdb, args, SelectOptions{Count: opts.Count})
	if err != nil {
		return ResetResult{}, err
	}
	plan, err := PlanReset(ctx, rdb, sel, opts)
	if err != nil {
		return ResetResult{}, err
	}
	if n := plan.Deletes(); opts.Confirm != nil && !opts.DryRun && slices.ContainsFunc(args, IsPattern) && n > 0 {
		limiters := 0
		for _, k := range plan.Keys {
			if k.Skipped == "" {
				limiters++
			}
		}
		q := fmt.Sprintf("Reset %d %s: delete %d %s on %d %s?", limiters, human.Plural(limiters, "limiter", "limiters"),
			n, human.Plural(n, "key", "keys"), sel.Nodes(), human.Plural(sel.Nodes(), "node", "nodes"))
		ok, err := opts.Confirm(q)
		if err != nil {
			return ResetResult{}, err
		}
		if !ok {
			return ResetResult{DryRun: opts.DryRun, Keys: []ResetKey{}, Args: args},
				fmt.Errorf("reset %w: nothing was deleted", ErrNotConfirmed)
		}
	}
	res, err := Reset(ctx, rdb, plan, opts)
	res.Args = args
	return res, err
}

// Err is the reset's outcome as an error with its exit code, to return once the result has
// been printed: an interrupt between batches (130), or nil.
func (r ResetResult) Err() error {
	if !r.Interrupted {
		return nil
	}
	return &exitcode.InterruptedError{What: fmt.Sprintf("reset stopped between batches after deleting %d %s",
		r.TotalDeleted, human.Plural(r.TotalDeleted, "key", "keys"))}
}

// ResetPlan is what a reset would delete, read but not yet done: the report of a dry run, and
// what a confirmation asks about.
type ResetPlan struct {
	Keys []ResetKey
}

// Deletes counts the keys the plan deletes, partners included.
func (p ResetPlan) Deletes() int {
	n := 0
	for _, k := range p.Keys {
		n += len(k.group)
	}
	return n
}

// PlanReset reads the selected keys' kinds (Inspect, with read-only commands) and groups each
// with the keys of the same limiter's state: the pair key inspect names (PairKey), and the other
// held slots of a lock, found with one SCAN per master. A key that is already another's partner
// gets no entry of its own; it is listed in that entry's With. Keys of kind unknown are skipped
// unless opts.Force; a named key that does not exist is skipped as no such key.
func PlanReset(ctx context.Context, rdb redis.UniversalClient, sel Selection, opts ResetOptions) (ResetPlan, error) {
	in, err := Inspect(ctx, rdb, sel, InspectOptions{Clock: opts.Clock, KindsOnly: true})
	if err != nil {
		return ResetPlan{}, err
	}
	infos := map[string]KeyInfo{}
	for _, k := range in.Keys {
		infos[k.Key] = k
	}
	slots, err := otherSlots(ctx, rdb, in.Keys, opts, in.Now)
	if err != nil {
		return ResetPlan{}, err
	}
	for _, k := range slots {
		infos[k.Key] = k
	}
	groups := newUnion()
	firstSlot := map[string]string{} // lock name -> its first slot seen
	for _, k := range append(append([]KeyInfo{}, in.Keys...), slots...) {
		groups.add(k.Key)
		if k.PairKey != "" {
			groups.join(k.Key, k.PairKey)
		}
		if name, ok := lockSlot(k); ok {
			if first, seen := firstSlot[name]; seen {
				groups.join(first, k.Key)
			} else {
				firstSlot[name] = k.Key
			}
		}
	}
	members := groups.sets()

	plan := ResetPlan{Keys: []ResetKey{}}
	covered := map[string]bool{}
	missing := map[string]bool{}
	for _, m := range in.Missing {
		missing[m] = true
	}
	for _, t := range sel.Targets {
		info, ok := infos[t.Key]
		switch {
		case covered[t.Key]:
			continue // deleted with an earlier entry's key, and listed there
		case !ok && missing[t.Key]:
			plan.Keys = append(plan.Keys, ResetKey{Key: t.Key, Node: t.Node, With: []string{}, Skipped: SkipNoSuchKey})
			continue
		case !ok:
			continue // scanned, then gone before it was read: nothing left to reset
		}
		group := members[groups.find(t.Key)]
		if !opts.Force && !slices.ContainsFunc(group, func(k string) bool { return infos[k].Kind != kind.Unknown && infos[k].Kind != "" }) {
			plan.Keys = append(plan.Keys, ResetKey{Key: t.Key, Node: info.Node, Kind: info.Kind, With: []string{}, Skipped: SkipUnknownKind})
			continue
		}
		rk := ResetKey{Key: t.Key, Node: info.Node, Kind: info.Kind, Deleted: true, With: []string{}, group: []string{t.Key}}
		for _, other := range group {
			covered[other] = true
			if other != t.Key {
				rk.With = append(rk.With, other)
				rk.group = append(rk.group, other)
			}
		}
		plan.Keys = append(plan.Keys, rk)
	}
	return plan, nil
}

// Reset deletes what plan names, in batches of at most opts.Batch keys per round trip, a
// limiter's keys always in one batch. Each group is one UNLINK where the keys share a slot (a
// single server, or a hash tag on a cluster), so no client ever sees half of it; a group whose keys
// a cluster holds in different slots is deleted by one UNLINK per key, in a second round trip. A
// cancelled context stops the run between batches, never inside one: every batch sent is
// counted. In a dry run nothing is sent and the result is the plan.
func Reset(ctx context.Context, rdb redis.UniversalClient, plan ResetPlan, opts ResetOptions) (ResetResult, error) {
	res := ResetResult{DryRun: opts.DryRun, Keys: []ResetKey{}}
	if opts.DryRun {
		res.Keys = plan.Keys
		res.TotalDeleted = int64(plan.Deletes())
		return res, nil
	}
	if err := opts.Check(); err != nil {
		return res, err
	}
	for start := 0; start < len(plan.Keys); {
		if ctx.Err() != nil {
			res.Interrupted = true
			return res, nil
		}
		end, keys := start, 0
		for end < len(plan.Keys) && (end == start || keys+len(plan.Keys[end].group) <= opts.Batch) {
			keys += len(plan.Keys[end].group)
			end++
		}
		done, err := unlinkBatch(context.WithoutCancel(ctx), rdb, plan.Keys[start:end])
		for _, k := range done {
			res.Keys = append(res.Keys, k)
			res.TotalDeleted += int64(len(k.With))
			if k.Deleted {
				res.TotalDeleted++
			}
		}
		if err != nil {
			return res, err
		}
		start = end
	}
	return res, nil
}

// unlinkBatch deletes one batch of groups in one round trip (and a second for groups whose keys
// turn out to lie in different cluster slots). It reports, per entry, whether the key itself
// went and which partners went with it: a group of several keys is preceded by an EXISTS of each
// in the same pipeline, since UNLINK of several keys only counts them. An entry whose commands
// failed is left out of what it returns (it was not done), and the first failure is returned.
func unlinkBatch(ctx context.Context, rdb redis.UniversalClient, batch []ResetKey) ([]ResetKey, error) {
	type groupCmds struct {
		exists  []*redis.IntCmd
		unlinks []*redis.IntCmd // one for the whole group, or one per key once split
	}
	cmds := make([]groupCmds, len(batch))
	pipe := rdb.Pipeline()
	for i, k := range batch {
		if k.group == nil {
			continue
		}
		if len(k.group) > 1 {
			for _, key := range k.group {
				cmds[i].exists = append(cmds[i].exists, pipe.Exists(ctx, key))
			}
		}
		cmds[i].unlinks = []*redis.IntCmd{pipe.Unlink(ctx, k.group...)}
	}
	if err := execPipe(ctx, pipe); err != nil {
		return nil, err
	}
	// A cluster refuses a group whose keys lie in different slots whole (nothing is deleted):
	// one UNLINK per key then, all in a second round trip.
	var split redis.Pipeliner
	for i, k := range batch {
		if k.group != nil && rediserr.IsCrossSlot(cmds[i].unlinks[0].Err()) {
			if split == nil {
				split = rdb.Pipeline()
			}
			cmds[i].exists, cmds[i].unlinks = nil, nil
			for _, key := range k.group {
				cmds[i].unlinks = append(cmds[i].unlinks, split.Unlink(ctx, key))
			}
		}
	}
	if split != nil {
		if err := execPipe(ctx, split); err != nil {
			return nil, err
		}
	}
	var out []ResetKey
	var firstErr error
	for i, k := range batch {
		done := k
		done.With = []string{}
		if k.group == nil {
			out = append(out, done)
			continue
		}
		gone, err := deletedKeys(k.group, cmds[i].exists, cmds[i].unlinks)
		if err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("%s on %s: %w", k.Key, k.Node, err)
			}
			continue
		}
		done.Deleted = gone[0]
		for j, key := range k.group[1:] {
			if gone[j+1] {
				done.With = append(done.With, key)
			}
		}
		if !done.Deleted && len(done.With) == 0 {
			done.Skipped = SkipVanished // expired, or deleted by someone else, since it was read
		}
		out = append(out, done)
	}
	return out, firstErr
}

// deletedKeys reads which of a group's keys the UNLINKs deleted: per key when each had its own
// UNLINK, else those that existed just before the group's one UNLINK (if it deleted anything).
func deletedKeys(group []string, exists, unlinks []*redis.IntCmd) ([]bool, error) {
	gone := make([]bool, len(group))
	if len(unlinks) == len(group) {
		for j, c := range unlinks {
			n, err := c.Result()
			if err != nil {
				return nil, fmt.Errorf("UNLINK %s: %w", group[j], err)
			}
			gone[j] = n == 1
		}
		return gone, nil
	}
	n, err := unlinks[0].Result()
	if err != nil {
		return nil, fmt.Errorf("UNLINK: %w", err)
	}
	for j, c := range exists {
		existed, err := c.Result()
		if err != nil {
			return nil, fmt.Errorf("EXISTS %s: %w", group[j], err)
		}
		gone[j] = existed == 1 && n > 0
	}
	return gone, nil
}

// lockSlot names the lock a held slot belongs to: a string of kind concurrency named <name><i>
// (Laravel's ConcurrencyLimiter).
func lockSlot(k KeyInfo) (string, bool) {
	if k.Kind != kind.Concurrency || k.Type != "string" {
		return "", false
	}
	name, _, ok := kind.SlotKey(k.Key)
	return name, ok
}

// otherSlots finds the held slots of the locks among keys that keys do not already hold: the
// state of a Laravel-style concurrency limiter is every slot <name>1..<name>N, and resetting one
// slot would free one place, not the limiter. One SCAN per master (MATCH on the lock's name, or
// on the names' common prefix when there are several), then the candidates' kinds are read as
// inspect reads them: a key is a slot only if inspect calls it one.
func otherSlots(ctx context.Context, rdb redis.UniversalClient, keys []KeyInfo, opts ResetOptions, now time.Time) ([]KeyInfo, error) {
	names := map[string]bool{}
	known := map[string]bool{}
	for _, k := range keys {
		known[k.Key] = true
		if name, ok := lockSlot(k); ok {
			names[name] = true
		}
	}
	if len(names) == 0 {
		return nil, nil
	}
	var list []string
	for n := range names {
		list = append(list, n)
	}
	sort.Strings(list)
	pattern := redisconn.GlobEscape(commonPrefix(list)) + "*"
	if len(list) == 1 {
		pattern = redisconn.GlobEscape(list[0]) + "[1-9]*"
	}
	masters, err := redisconn.Masters(ctx, rdb)
	if err != nil {
		return nil, fmt.Errorf("listing masters: %w", err)
	}
	count := opts.Count
	if count <= 0 {
		count = DefaultScanCount
	}
	var candidates Selection
	add := func(t Target) bool {
		if name, _, ok := kind.SlotKey(t.Key); ok && names[name] && !known[t.Key] {
			known[t.Key] = true
			candidates.Targets = append(candidates.Targets, t)
		}
		return true
	}
	for _, m := range masters {
		if _, err := scanNode(ctx, m, pattern, SelectOptions{Count: count, Type: "string"}, add); err != nil {
			return nil, err
		}
	}
	if len(candidates.Targets) == 0 {
		return nil, nil
	}
	sort.Slice(candidates.Targets, func(i, j int) bool { return candidates.Targets[i].Key < candidates.Targets[j].Key })
	in, err := Inspect(ctx, rdb, candidates, InspectOptions{Clock: LocalClock(func() time.Time { return now }), KindsOnly: true})
	if err != nil {
		return nil, err
	}
	var slots []KeyInfo
	for _, k := range in.Keys {
		if _, ok := lockSlot(k); ok {
			slots = append(slots, k)
		}
	}
	return slots, nil
}

func commonPrefix(sorted []string) string {
	first, last := sorted[0], sorted[len(sorted)-1]
	i := 0
	for i < len(first) && i < len(last) && first[i] == last[i] {
		i++
	}
	return first[:i]
}

// union groups keys that belong to one limiter's state.
type union struct{ parent map[string]string }

func newUnion() *union { return &union{parent: map[string]string{}} }

func (u *union) add(k string) {
	if _, ok := u.parent[k]; !ok {
		u.parent[k] = k
	}
}

func (u *union) find(k string) string {
	u.add(k)
	for u.parent[k] != k {
		u.parent[k] = u.parent[u.parent[k]]
		k = u.parent[k]
	}
	return k
}

func (u *union) join(a, b string) { u.parent[u.find(a)] = u.find(b) }

// sets lists each group's keys, sorted, by the group's root.
func (u *union) sets() map[string][]string {
	out := map[string][]string{}
	for k := range u.parent {
		r := u.find(k)
		out[r] = append(out[r], k)
	}
	for _, ks := range out {
		sort.Strings(ks)
	}
	return out
}
