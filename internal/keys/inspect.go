package keys

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/keys/kind"
	"github.com/limitctl/limitctl/internal/keys/scores"
	"github.com/limitctl/limitctl/internal/rediserr"
)

// InspectOptions set the thresholds of an inspection.
type InspectOptions struct {
	Stale    time.Duration // members at least this old count as stale (0: none counted)
	Limit    int64         // flag OVER_LIMIT above this, when HasLimit
	HasLimit bool
	Unit     scores.Unit // score unit of sorted sets; "" or scores.UnitAuto detects it per set
	Scores   scores.Mode // what sorted-set scores mean; "" or scores.ModeAuto guesses per set
	Clock    Clock
	// KindsOnly reads only what kind detection needs: no MEMORY USAGE and no stale or expired
	// counts (Reset, whose smallest ACL then needs neither).
	KindsOnly bool
	// Select bounds how InspectPatterns finds the keys.
	Select SelectOptions
}

// InspectPatterns selects the keys and patterns of args (Select) and inspects them (Inspect).
func InspectPatterns(ctx context.Context, rdb redis.UniversalClient, args []string, opts InspectOptions) (Inspection, error) {
	sel, err := Select(ctx, rdb, args, opts.Select)
	if err != nil {
		return Inspection{}, err
	}
	in, err := Inspect(ctx, rdb, sel, opts)
	in.Args, in.MaxKeys = args, opts.Select.MaxKeys
	return in, err
}

// KeyInfo is what inspect reports about one key.
type KeyInfo struct {
	Key  string
	Node string
	Type string // the Redis type: zset, string, hash, list, set, stream
	Kind kind.Kind
	// Size is the members of a sorted set, the value of a counter, the whole tokens left in a
	// bucket, and the length of anything else.
	Size int64
	TTL  time.Duration // negative: no TTL
	Unit scores.Unit   // the unit the scores were read in; "" when they are not timestamps
	// OldestAge and NewestAge are now minus the lowest and highest score (for a bucket, its
	// refill time): the age of a start time, or how long ago a deadline passed (negative: ahead).
	OldestAge *time.Duration
	NewestAge *time.Duration
	Stale     int64
	Memory    *int64 // MEMORY USAGE in bytes; nil when the server or the ACL refuses it
	Flags     []Flag

	// Scores is what a sorted set's scores were read as ("" when they are not timestamps);
	// ScoresGuessed is true when --scores auto decided it.
	Scores        scores.Mode
	ScoresGuessed bool
	Expired       *int64 // deadline scores: members whose deadline has passed
	// FullAt is when the limiter is back to its full allowance: a gcra key's TAT (nil: epoch
	// unknown), the end of a counter's window when the key holds it.
	FullAt   *time.Time
	FullIn   *time.Duration // how long until FullAt, from the inspection's now (0: full now)
	Window   time.Duration  // sliding_counter: the window inferred from the index (0: unknown)
	Estimate *int64         // sliding_counter: the sliding-window count now
	// PairKey is the other key of a state kept in two: the other window of a sliding pair, the
	// other half of a two-string bucket, a counter's :timer, Redisson's value and permits.
	PairKey string
}

// Inspection is the result of one inspect run, and what inspect prints: the JSON holds what it
// scanned and its keys (KeyInfo), its Table the same keys, and its Notes what a person should
// know besides.
type Inspection struct {
	Now       time.Time `json:"-"`
	Scanned   int       `json:"scanned"`
	Keys      []KeyInfo `json:"keys"` // sorted by key
	Truncated bool      `json:"-"`    // the selection stopped at its bound
	Vanished  int       `json:"-"`    // scanned keys gone before they could be read
	Missing   []string  `json:"-"`    // literal keys that do not exist
	// Args and MaxKeys are what was asked for, for the notes.
	Args    []string `json:"-"`
	MaxKeys int      `json:"-"`
}

// Totals sums an inspection for its totals line.
type Totals struct {
	Keys          int
	Members       int64 // sorted-set members
	Stale         int64
	Memory        int64 // bytes, over the keys whose memory is known
	MemoryUnknown int   // keys whose memory is unknown
}

// Totals sums the keys of an inspection.
func (in Inspection) Totals() Totals {
	t := Totals{Keys: len(in.Keys)}
	for _, k := range in.Keys {
		if k.Type == "zset" {
			t.Members += k.Size
		}
		t.Stale += k.Stale
		if k.Memory != nil {
			t.Memory += *k.Memory
		} else {
			t.MemoryUnknown++
		}
	}
	return t
}

// inspectChunk is how many keys share one pipeline: enough to hide the round trips, small
// enough that no single reply grows large.
const inspectChunk = 500

// Inspect reads every selected key with read-only commands only (TYPE, PTTL, MEMORY USAGE,
// ZCARD, ZRANGE, ZCOUNT, STRLEN, GETRANGE, HLEN, HMGET, LLEN, LINDEX, SCARD, XLEN), pipelined, a few
// round trips per chunk of keys. Keys that vanish between SCAN and the reads are counted,
// not reported.
func Inspect(ctx context.Context, rdb redis.UniversalClient, sel Selection, opts InspectOptions) (Inspection, error) {
	now, err := opts.Clock(ctx)
	if err != nil {
		return Inspection{}, err
	}
	in := Inspection{Now: now, Scanned: sel.Scanned, Truncated: sel.Truncated, Keys: []KeyInfo{}}
	for start := 0; start < len(sel.Targets); start += inspectChunk {
		end := min(start+inspectChunk, len(sel.Targets))
		infos, err := inspectChunkOf(ctx, rdb, sel.Targets[start:end], now, opts)
		if err != nil {
			return Inspection{}, err
		}
		for i, info := range infos {
			switch {
			case info != nil:
				in.Keys = append(in.Keys, *info)
			case sel.Targets[start+i].Named:
				in.Missing = append(in.Missing, sel.Targets[start+i].Key)
			default:
				in.Vanished++
			}
		}
	}
	return in, nil
}

// keyReads are the pipelined replies for one key.
type keyReads struct {
	key, node string
	typ       *redis.StatusCmd
	ttl       *redis.DurationCmd
	memory    *redis.IntCmd

	length  *redis.IntCmd      // ZCARD, STRLEN, HLEN, LLEN, SCARD, XLEN
	samples []*redis.ZSliceCmd // a sorted set's sampled ranks, lowest first (scores.SampleRanks)
	prefix  *redis.StringCmd   // a string's first bytes: is it a number?
	fields  *redis.SliceCmd    // HMGET kind.HashFields
	ends    []*redis.StringCmd // a list's first and last entries: are they times?
	stale   *redis.IntCmd      // ZCOUNT -inf cutoff
	expired *redis.IntCmd      // ZCOUNT -inf now, for deadline scores
	reading scores.Reading     // the sorted set's unit and score mode; unit "" when not times
	binary  bool               // a sampled member is a packed binary record: purge skips the set

	// A counter named <id>:<n> reads its neighbours <id>:<n-1> and <id>:<n+1>.
	windowID  string
	window    int64
	neighbour map[int64]*redis.StringCmd
	neighTTL  map[int64]*redis.DurationCmd

	// A string named <prefix>tokens or <prefix>timestamp (any common naming) reads the other
	// half of a two-string token bucket; siblingTokens says the siblings hold the tokens.
	siblings      []*redis.StringCmd
	siblingKeys   []string
	siblingTokens bool

	// A counter may have the other counter of a pair renamed into place (alisaifee/limits:
	// {<key>} and {<key>}/-1).
	renamed         *redis.StringCmd
	renamedTTL      *redis.DurationCmd
	renamedKey      string
	renamedPrevious bool // the key read is the previous window's

	// A counter reads <key>:timer, and a timer its counter (Laravel's cache RateLimiter).
	timer       *redis.StringCmd
	timerKey    string
	timerIsMine bool // the key read is the timer; timer holds its counter

	// A string named <name><i> reads the slots beside it, <name><i-1> and <name><i+1>: held lock
	// slots (Laravel's ConcurrencyLimiter).
	slots    []*redis.StringCmd
	slotTTLs []*redis.DurationCmd

	// Redisson's rate limiter keeps {name}:value (the permits left) beside {name}:permits (its
	// grants, packed records): a counter named <base>:value reads the other's first member, and
	// such a set reads the counter.
	permitsOf *redis.ZSliceCmd
	valueOf   *redis.StringCmd

	info *KeyInfo // nil once the key is known gone
}

// counterDigits is one more than the longest int64 ("-9223372036854775808" is 20 bytes): a
// longer string cannot be a counter.
const counterDigits = 21

// inspectChunkOf reads one chunk of keys in four pipelined rounds: what each key is; its
// type-specific shape; the middle samples of the sorted sets (whose ranks need their size);
// then the stale and expired counts of the sorted sets (whose cutoffs need the unit). A nil
// entry is a key that is gone.
func inspectChunkOf(ctx context.Context, rdb redis.UniversalClient, targets []Target, now time.Time, opts InspectOptions) ([]*KeyInfo, error) {
	reads := make([]*keyReads, len(targets))
	// Round 1: type, TTL and memory.
	pipe := rdb.Pipeline()
	for i, t := range targets {
		reads[i] = &keyReads{
			key: t.Key, node: t.Node,
			typ: pipe.Type(ctx, t.Key),
			ttl: pipe.PTTL(ctx, t.Key),
		}
		if !opts.KindsOnly {
			reads[i].memory = pipe.MemoryUsage(ctx, t.Key)
		}
	}
	if err := execPipe(ctx, pipe); err != nil {
		return nil, err
	}
	for _, r := range reads {
		typ, err := r.typ.Result()
		if err != nil {
			return nil, readError(r, "TYPE", err)
		}
		if typ == "none" {
			continue
		}
		ttl, err := r.ttl.Result()
		if err != nil {
			return nil, readError(r, "PTTL", err)
		}
		if ttl == -2 { // expired between TYPE and PTTL
			continue
		}
		info := &KeyInfo{Key: r.key, Node: r.node, Type: typ, Kind: kind.Unknown, TTL: ttl, Flags: []Flag{}}
		// MEMORY USAGE is refused by older servers, some managed services and ACLs that do not
		// grant it; memory is then unknown, which is not an error.
		if r.memory != nil {
			if m, err := r.memory.Result(); err == nil {
				info.Memory = &m
			}
		}
		r.info = info
	}

	// Round 2: the shape of each type.
	pipe = rdb.Pipeline()
	for _, r := range reads {
		if r.info == nil {
			continue
		}
		k := r.key
		switch r.info.Type {
		case "zset":
			r.length = pipe.ZCard(ctx, k)
			r.samples = []*redis.ZSliceCmd{pipe.ZRangeWithScores(ctx, k, 0, 0), pipe.ZRangeWithScores(ctx, k, -1, -1)}
			if base, ok := strings.CutSuffix(k, kind.PermitsSuffix); ok && base != "" {
				r.valueOf = pipe.GetRange(ctx, base+kind.ValueSuffix, 0, counterDigits-1)
			}
		case "string":
			r.length = pipe.StrLen(ctx, k)
			r.prefix = pipe.GetRange(ctx, k, 0, counterDigits-1)
			if id, n, ok := kind.WindowKey(k); ok {
				r.windowID, r.window = id, n
				r.neighbour = map[int64]*redis.StringCmd{}
				r.neighTTL = map[int64]*redis.DurationCmd{}
				for _, m := range []int64{n - 1, n + 1} {
					r.neighbour[m] = pipe.GetRange(ctx, kind.WindowKeyAt(id, m), 0, counterDigits-1)
					r.neighTTL[m] = pipe.PTTL(ctx, kind.WindowKeyAt(id, m))
				}
			}
			if other, isPrevious := kind.RenamedPair(k); isPrevious || strings.HasSuffix(k, "}") {
				r.renamedKey, r.renamedPrevious = other, isPrevious
				r.renamed = pipe.GetRange(ctx, other, 0, counterDigits-1)
				r.renamedTTL = pipe.PTTL(ctx, other)
			}
			if base, ok := strings.CutSuffix(k, kind.ValueSuffix); ok && base != "" {
				r.permitsOf = pipe.ZRangeWithScores(ctx, base+kind.PermitsSuffix, 0, 0)
			}
			r.timerKey, r.timerIsMine = kind.TimerPair(k)
			r.timer = pipe.GetRange(ctx, r.timerKey, 0, counterDigits-1)
			if name, i, ok := kind.SlotKey(k); ok {
				for _, m := range []int64{i - 1, i + 1} {
					if m >= 1 {
						other := name + strconv.FormatInt(m, 10)
						r.slots = append(r.slots, pipe.GetRange(ctx, other, 0, counterDigits-1))
						r.slotTTLs = append(r.slotTTLs, pipe.PTTL(ctx, other))
					}
				}
			}
			if sibs, holdsTokens := kind.BucketSiblings(k); sibs != nil {
				r.siblingKeys, r.siblingTokens = sibs, !holdsTokens
				for _, s := range sibs {
					r.siblings = append(r.siblings, pipe.GetRange(ctx, s, 0, counterDigits-1))
				}
			}
		case "hash":
			r.length = pipe.HLen(ctx, k)
			r.fields = pipe.HMGet(ctx, k, kind.HashFields...)
		case "list":
			r.length = pipe.LLen(ctx, k)
			r.ends = []*redis.StringCmd{pipe.LIndex(ctx, k, 0), pipe.LIndex(ctx, k, -1)}
		case "set":
			r.length = pipe.SCard(ctx, k)
		case "stream":
			r.length = pipe.XLen(ctx, k)
		}
	}
	if err := execPipe(ctx, pipe); err != nil {
		return nil, err
	}
	for _, r := range reads {
		if r.info == nil || r.length == nil {
			continue
		}
		n, err := r.length.Result()
		if err != nil {
			if rediserr.IsWrongType(err) { // replaced by another type between the rounds: gone as we knew it
				r.info = nil
				continue
			}
			return nil, readError(r, "length", err)
		}
		r.info.Size = n
		switch r.info.Type {
		case "string":
			if err := refused(r, "GETRANGE", r.prefix); err != nil {
				return nil, err
			}
			readString(r, now, opts)
		case "hash":
			if err := refused(r, "HMGET", r.fields); err != nil {
				return nil, err
			}
			readHash(r, now, opts)
		case "list":
			if err := refused(r, "LINDEX", r.ends[0]); err != nil {
				return nil, err
			}
			readList(r, now, opts)
		}
	}

	// Round 3: the middle samples of the sorted sets, now that their sizes are known.
	pipe = rdb.Pipeline()
	for _, r := range reads {
		if r.info == nil || r.info.Type != "zset" {
			continue
		}
		oldest, newest := r.samples[0], r.samples[1]
		r.samples = []*redis.ZSliceCmd{oldest}
		for _, rank := range scores.SampleRanks(r.info.Size) {
			if rank > 0 && rank < r.info.Size-1 {
				r.samples = append(r.samples, pipe.ZRangeWithScores(ctx, r.key, rank, rank))
			}
		}
		r.samples = append(r.samples, newest)
	}
	if err := execPipe(ctx, pipe); err != nil {
		return nil, err
	}
	for _, r := range reads {
		if r.info != nil && r.info.Type == "zset" {
			if err := readZSet(r, now, opts); err != nil {
				return nil, err
			}
		}
	}

	// Round 4: stale members, and expired ones of deadline sets, of the sorted sets whose
	// scores read as times.
	pipe = rdb.Pipeline()
	for _, r := range reads {
		if r.info == nil || r.info.Type != "zset" || r.reading.Unit == "" || r.binary || opts.KindsOnly {
			continue // no stale count where purge would remove nothing
		}
		if opts.Stale > 0 {
			r.stale = pipe.ZCount(ctx, r.key, "-inf", formatScore(r.reading.Unit.Score(now.Add(-opts.Stale))))
		}
		if r.reading.Mode == scores.Deadline {
			r.expired = pipe.ZCount(ctx, r.key, "-inf", formatScore(r.reading.Unit.Score(now)))
		}
	}
	if err := execPipe(ctx, pipe); err != nil {
		return nil, err
	}
	for _, r := range reads {
		if r.info == nil {
			continue
		}
		if r.stale != nil {
			n, err := r.stale.Result()
			if err != nil {
				return nil, readError(r, "ZCOUNT", err)
			}
			r.info.Stale = n
		}
		if r.expired != nil {
			n, err := r.expired.Result()
			if err != nil {
				return nil, readError(r, "ZCOUNT", err)
			}
			r.info.Expired = &n
		}
	}

	out := make([]*KeyInfo, len(reads))
	for i, r := range reads {
		if r.info != nil {
			r.info.Flags = flagsOf(*r.info, opts)
			if r.info.FullAt != nil {
				r.info.FullIn = durationPtr(max(0, r.info.FullAt.Sub(now)))
			}
		}
		out[i] = r.info
	}
	return out, nil
}

// readZSet fills a sorted set's unit, score mode, ages and kind from its sampled members.
func readZSet(r *keyReads, now time.Time, opts InspectOptions) error {
	var sampled []redis.Z
	for _, c := range r.samples {
		zs, err := c.Result()
		if err != nil {
			if rediserr.IsWrongType(err) {
				r.info = nil
				return nil
			}
			return readError(r, "ZRANGE", err)
		}
		sampled = append(sampled, zs...)
	}
	if r.info.Size == 0 || len(sampled) < 2 {
		r.info = nil // emptied between the rounds: Redis deletes an empty set
		return nil
	}
	oldest, newest := sampled[0], sampled[len(sampled)-1]
	shape := kind.ZSetShape{
		Key: r.key, Size: r.info.Size, TTL: r.info.TTL, Now: now,
		OldestMember: memberString(oldest.Member), NewestMember: memberString(newest.Member),
	}
	samples := make([]float64, len(sampled))
	for i, z := range sampled {
		samples[i] = z.Score
		r.binary = r.binary || binaryMember(memberString(z.Member))
	}
	if rd, ok := scores.Read(samples, now, opts.Unit, opts.Scores); ok {
		oldestAt, ok1 := rd.Unit.Time(oldest.Score)
		newestAt, ok2 := rd.Unit.Time(newest.Score)
		if ok1 && ok2 {
			r.reading = rd
			r.info.Unit, r.info.Scores, r.info.ScoresGuessed = rd.Unit, rd.Mode, rd.Guessed
			shape.Oldest, shape.Newest = oldestAt, newestAt
			shape.Timestamps = true
			shape.Deadlines = rd.Mode == scores.Deadline
			r.info.OldestAge = durationPtr(now.Sub(oldestAt))
			r.info.NewestAge = durationPtr(now.Sub(newestAt))
		}
	}
	r.info.Kind = kind.OfZSet(shape)
	if r.binary && r.valueOf != nil {
		if v, err := r.valueOf.Result(); err == nil {
			if _, err := strconv.ParseInt(v, 10, 64); err == nil {
				r.info.PairKey = strings.TrimSuffix(r.key, kind.PermitsSuffix) + kind.ValueSuffix
			}
		}
	}
	return nil
}

// readPermitsPair pairs a counter <base>:value with <base>:permits when that set holds packed
// binary records (Redisson's RRateLimiter): the permits left and the grants that will give
// permits back are one state. Deleting one of them alone would leave grants that return permits
// to a count that never lent them.
func readPermitsPair(r *keyReads) bool {
	if r.permitsOf == nil {
		return false
	}
	zs, err := r.permitsOf.Result()
	if err != nil || len(zs) == 0 || !binaryMember(memberString(zs[0].Member)) {
		return false
	}
	r.info.PairKey = strings.TrimSuffix(r.key, kind.ValueSuffix) + kind.PermitsSuffix
	return true
}

// readString makes a string holding an integer a counter whose size is its value, one holding
// a theoretical arrival time a gcra key, and a counter named <id>:<n> with a neighbouring
// window's counter a sliding_counter.
func readString(r *keyReads, now time.Time, opts InspectOptions) {
	if r.info.Size >= counterDigits {
		return
	}
	v, err := r.prefix.Result()
	if err != nil {
		return
	}
	if readSiblingBucket(r, v, now, opts) {
		return
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if readTimerPair(r, n, now) {
			return
		}
		// An integer is a counter, unless it is a time the key expires at: redis-cell and
		// other GCRA stores keep an integer TAT (nanoseconds) and expire the key at it.
		if at, ok := kind.TATTime(float64(n), now); ok && kind.TATMatchesTTL(at, r.info.TTL, now) {
			r.info.Kind, r.info.FullAt = kind.GCRA, &at
			return
		}
		r.info.Kind, r.info.Size = kind.Counter, n
		if readPermitsPair(r) {
			return
		}
		if !readRenamedPair(r, n) {
			readPair(r, n, now)
		}
		return
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		readSlot(r, v)
		return
	}
	if math.IsNaN(f) || math.IsInf(f, 0) || f <= 0 {
		return
	}
	// A fraction: a GCRA theoretical arrival time when it reads as a time near now in a known
	// epoch. Any other fraction stays unknown: a float counter (INCRBYFLOAT) looks the same.
	if at, ok := kind.TATTime(f, now); ok {
		r.info.Kind, r.info.FullAt = kind.GCRA, &at
	}
}

// readTimerPair makes a counter <key> beside a timer <key>:timer holding the window's end as a
// time (Laravel's cache RateLimiter: whole seconds), and that timer, the window's counter: both
// report the count, the other key, and when the window ends (full_at).
func readTimerPair(r *keyReads, n int64, now time.Time) bool {
	s, err := r.timer.Result()
	if err != nil || s == "" {
		return false
	}
	other, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return false
	}
	count, end := n, other
	if r.timerIsMine {
		count, end = other, n
	}
	at, ok := kind.TATTime(float64(end), now)
	if !ok {
		return false
	}
	r.info.Kind, r.info.Size, r.info.PairKey, r.info.FullAt = kind.Counter, count, r.timerKey, &at
	return true
}

// readSlot makes a held lock slot a concurrency key of one: a string <name><i> holding a
// holder's random id until its TTL releases it, as Laravel's ConcurrencyLimiter keeps slots
// <name>1..<name>N (SET slot id EX release_after). A lone token is no slot: a neighbouring slot
// must be held too, or the name must say concurrency (funnel, lock, ...), or the id must be
// Laravel's (slot 1 alone is one job running).
func readSlot(r *keyReads, head string) {
	if r.info.TTL <= 0 || r.slots == nil || !kind.HolderID(head, r.info.Size) {
		return
	}
	held := false
	for i, c := range r.slots {
		v, err := c.Result()
		ttl, err2 := r.slotTTLs[i].Result()
		if err == nil && err2 == nil && ttl > 0 && kind.HolderID(v, int64(len(v))) {
			held = true
		}
	}
	// Laravel's holder id is Str::random(20): exactly twenty letters and digits, a signature
	// strong enough for slot 1 held alone.
	laravelID := r.info.Size == 20 && !strings.ContainsAny(head, "-_")
	if k, ok := kind.FromName(r.key); !held && !laravelID && !(ok && k == kind.Concurrency) {
		return
	}
	r.info.Kind, r.info.Size = kind.Concurrency, 1
}

// readSiblingBucket makes a number named <prefix>tokens whose sibling <prefix>timestamp holds a
// time (or the other way round) a bucket, read as a bucket hash is: its size the whole tokens
// left, its ages the time since the refill. Both halves report the same bucket.
func readSiblingBucket(r *keyReads, v string, now time.Time, opts InspectOptions) bool {
	mine, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(mine) || math.IsInf(mine, 0) {
		return false
	}
	for i, c := range r.siblings {
		s, err := c.Result()
		if err != nil || s == "" {
			continue
		}
		theirs, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(theirs) || math.IsInf(theirs, 0) {
			continue
		}
		tokens, refill := mine, theirs
		if r.siblingTokens {
			tokens, refill = theirs, mine
		}
		unit, ok := scores.ResolveUnit(opts.Unit, refill, now)
		if !ok {
			return false // a "timestamp" that is no time: two counters
		}
		at, ok := unit.Time(refill)
		if !ok {
			return false
		}
		r.info.Kind, r.info.Size, r.info.Unit, r.info.PairKey = kind.Bucket, int64(math.Floor(tokens)), unit, r.siblingKeys[i]
		r.info.OldestAge = durationPtr(now.Sub(at))
		r.info.NewestAge = durationPtr(now.Sub(at))
		return true
	}
	return false
}

// readRenamedPair makes a counter whose other window's counter was renamed into place beside it
// (alisaifee/limits: {<key>} and {<key>}/-1) a sliding counter, with limits' estimate when the
// window can be read from the key.
func readRenamedPair(r *keyReads, value int64) bool {
	if r.renamed == nil {
		return false
	}
	s, err := r.renamed.Result()
	if err != nil || len(s) >= counterDigits {
		return false
	}
	other, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return false
	}
	r.info.Kind, r.info.PairKey = kind.SlidingCounter, r.renamedKey
	window, ok := kind.LimitsWindow(r.key)
	if !ok {
		return true
	}
	previous, current, previousTTL := other, value, time.Duration(0)
	if r.renamedPrevious {
		previous, current, previousTTL = value, other, r.info.TTL
	} else if ttl, err := r.renamedTTL.Result(); err == nil {
		previousTTL = ttl
	}
	est := kind.RenamedEstimate(previous, current, previousTTL, window)
	r.info.Window, r.info.Estimate = window, &est
	return true
}

// readPair makes a counter <id>:<n> whose neighbour <id>:<n-1> or <id>:<n+1> is a counter too
// one of a sliding-window pair, with the pair's estimate when the window can be inferred.
func readPair(r *keyReads, value int64, now time.Time) {
	if r.neighbour == nil {
		return
	}
	counts := map[int64]int64{r.window: value}
	ttls := map[int64]time.Duration{r.window: r.info.TTL}
	top, pair := r.window, ""
	for _, m := range []int64{r.window - 1, r.window + 1} {
		s, err := r.neighbour[m].Result()
		if err != nil || len(s) >= counterDigits {
			continue
		}
		c, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			continue
		}
		counts[m] = c
		if ttl, err := r.neighTTL[m].Result(); err == nil {
			ttls[m] = ttl
		}
		top = max(top, m)
		if pair == "" || m > r.window { // the newer neighbour is the partner when both exist
			pair = kind.WindowKeyAt(r.windowID, m)
		}
	}
	if pair == "" {
		return
	}
	window, ok := kind.InferWindow(top, now)
	if !ok {
		return // no window fits the index: not a window index
	}
	est, state := kind.SlidingEstimate(r.window, counts, ttls, window, now)
	switch state {
	case kind.PairNone:
		return // stays a counter
	case kind.PairLive:
		r.info.Estimate = &est.Estimate
	}
	r.info.Kind, r.info.PairKey, r.info.Window = kind.SlidingCounter, pair, window
}

// readHash makes a hash with a theoretical arrival time field (tat) a gcra key, and one with a
// tokens field and a refill time field (any common naming, see tokenFields and refillFields) a
// bucket whose size is its whole tokens left and whose age is the time since its refill.
func readHash(r *keyReads, now time.Time, opts InspectOptions) {
	vals, err := r.fields.Result()
	if err != nil {
		return
	}
	h := kind.ReadHashFields(vals)
	if h.HasTAT {
		// limitctl's token_bucket.lua keeps its TAT (ms since the Unix epoch) in a hash; its
		// size stays the field count, since the tokens left depend on a rate the key lacks.
		r.info.Kind = kind.GCRA
		if at, ok := kind.TATTime(h.TAT, now); ok {
			r.info.FullAt = &at
		}
		return
	}
	if !h.HasTokens || !h.HasRefill {
		if h.HasWindow {
			readWindowHash(r, h, now, opts)
		}
		return
	}
	unit, ok := scores.ResolveUnit(opts.Unit, h.Refill, now)
	if !ok {
		return // a "time" that is no time: not a bucket
	}
	at, ok := unit.Time(h.Refill)
	if !ok {
		return
	}
	r.info.Kind, r.info.Size, r.info.Unit = kind.Bucket, int64(math.Floor(h.Tokens)), unit
	r.info.OldestAge = durationPtr(now.Sub(at))
	r.info.NewestAge = durationPtr(now.Sub(at))
}

// readWindowHash makes a hash of a window's start and end times and its count (Laravel's
// DurationLimiter: {start, end, count} in seconds) a counter: its size is the count, its window
// end - start, its age the time since the window started. Start and end must read as times in
// one unit, end not before start.
func readWindowHash(r *keyReads, h kind.HashShape, now time.Time, opts InspectOptions) {
	unit, ok := scores.ResolveUnit(opts.Unit, h.Start, now)
	if !ok {
		return
	}
	start, ok1 := unit.Time(h.Start)
	end, ok2 := unit.Time(h.End)
	if !ok1 || !ok2 || end.Before(start) || h.Count != math.Trunc(h.Count) {
		return
	}
	r.info.Kind, r.info.Size, r.info.Unit, r.info.Window = kind.Counter, int64(h.Count), unit, end.Sub(start)
	r.info.FullAt = &end
	r.info.OldestAge = durationPtr(now.Sub(start))
	r.info.NewestAge = durationPtr(now.Sub(start))
}

// readList makes a list whose two ends read as times in one unit a window log: a request log
// kept as a list of timestamps (alisaifee/limits' moving window, sidekiq-throttled's threshold),
// pushed at one end and trimmed to the limit. Its ages are those of its two ends; stale entries
// are not counted (that would read the whole list), and purge leaves lists to their TTL and trim.
func readList(r *keyReads, now time.Time, opts InspectOptions) {
	var at []time.Time
	var unit scores.Unit
	for _, c := range r.ends {
		v, err := c.Result()
		if err != nil || len(v) >= counterDigits+8 { // a time is a short number
			return
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return
		}
		u, ok := scores.ResolveUnit(opts.Unit, f, now)
		if !ok || (unit != "" && u != unit) {
			return
		}
		t, ok := u.Time(f)
		if !ok {
			return
		}
		unit, at = u, append(at, t)
	}
	oldest, newest := at[0], at[1]
	if newest.Before(oldest) { // LPUSH keeps the newest first, RPUSH last
		oldest, newest = newest, oldest
	}
	r.info.Kind, r.info.Unit = kind.WindowLog, unit
	r.info.OldestAge = durationPtr(now.Sub(oldest))
	r.info.NewestAge = durationPtr(now.Sub(newest))
}

// flagsOf lists a key's flags. OVER_LIMIT applies to the kinds that count against a limit:
// concurrency sets, window logs and counters, and to a sliding counter's estimate.
func flagsOf(k KeyInfo, opts InspectOptions) []Flag {
	flags := []Flag{}
	if k.TTL < 0 {
		flags = append(flags, FlagNoTTL)
	}
	if k.Stale > 0 {
		flags = append(flags, FlagStale)
	}
	if opts.HasLimit {
		switch {
		case k.Kind == kind.SlidingCounter && k.Estimate != nil:
			if *k.Estimate > opts.Limit {
				flags = append(flags, FlagOverLimit)
			}
		case k.Kind == kind.Concurrency, k.Kind == kind.WindowLog, k.Kind == kind.Counter, k.Kind == kind.SlidingCounter:
			if k.Size > opts.Limit {
				flags = append(flags, FlagOverLimit)
			}
		}
	}
	return flags
}

// execPipe runs a pipeline; per-command errors are read from each command, so only a failure
// of the pipeline itself (the connection, the context) is returned here.
func execPipe(ctx context.Context, pipe redis.Pipeliner) error {
	if pipe.Len() == 0 {
		return nil
	}
	cmds, err := pipe.Exec(ctx)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err == nil {
		return nil
	}
	// Exec returns the first failed command's error, an error reply included; only a transport
	// failure (which fails every command) is the pipeline's own.
	for _, c := range cmds {
		if e := c.Err(); e != nil && !rediserr.IsReply(e) {
			return e
		}
	}
	return nil
}

// refused is the error of a kind-detecting read the user's ACL does not allow: left silent, it
// would report a counter or a bucket as unknown.
func refused(r *keyReads, what string, c redis.Cmder) error {
	if err := c.Err(); rediserr.Is(err, rediserr.Permission) {
		return readError(r, what, err)
	}
	return nil
}

func readError(r *keyReads, what string, err error) error {
	return fmt.Errorf("%s on %s: %s: %w", r.key, r.node, what, err)
}

func memberString(m any) string {
	switch v := m.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	return fmt.Sprint(m)
}

// formatScore writes a score for ZCOUNT and the purge script: plain decimal, never an exponent.
func formatScore(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func durationPtr(d time.Duration) *time.Duration { return &d }
