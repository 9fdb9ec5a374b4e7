package keys

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// InspectOptions set the thresholds of an inspection.
type InspectOptions struct {
	Stale    time.Duration // members at least this old count as stale (0: none counted)
	Limit    int64         // flag OVER_LIMIT above this, when HasLimit
	HasLimit bool
	Unit     ScoreUnit // score unit of sorted sets; "" or UnitAuto detects it per set
	Clock    Clock
}

// KeyInfo is what inspect reports about one key.
type KeyInfo struct {
	Key  string
	Node string
	Type string // the Redis type: zset, string, hash, list, set, stream
	Kind Kind
	// Size is the members of a sorted set, the value of a counter, the whole tokens left in a
	// bucket, and the length of anything else.
	Size      int64
	TTL       time.Duration // negative: no TTL
	Unit      ScoreUnit     // the unit the scores were read in; "" when they are not timestamps
	OldestAge *time.Duration
	NewestAge *time.Duration
	Stale     int64
	Memory    *int64 // MEMORY USAGE in bytes; nil when the server or the ACL refuses it
	Flags     []Flag
}

// Inspection is the result of one inspect run.
type Inspection struct {
	Now       time.Time
	Scanned   int
	Keys      []KeyInfo // sorted by key
	Truncated bool      // the selection stopped at its bound
	Vanished  int       // scanned keys gone before they could be read
	Missing   []string  // literal keys that do not exist
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
// ZCARD, ZRANGE, ZCOUNT, STRLEN, GETRANGE, HLEN, HMGET, LLEN, SCARD, XLEN), pipelined, a few
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

	length         *redis.IntCmd // ZCARD, STRLEN, HLEN, LLEN, SCARD, XLEN
	oldest, newest *redis.ZSliceCmd
	prefix         *redis.StringCmd // a string's first bytes: is it an integer?
	bucket         *redis.SliceCmd  // HMGET tokens ts tat
	stale          *redis.IntCmd    // ZCOUNT -inf cutoff
	unit           ScoreUnit        // the sorted set's unit, needed for the stale cutoff

	info *KeyInfo // nil once the key is known gone
}

// counterDigits is one more than the longest int64 ("-9223372036854775808" is 20 bytes): a
// longer string cannot be a counter.
const counterDigits = 21

// inspectChunkOf reads one chunk of keys in three pipelined rounds: what each key is, then its
// type-specific shape, then the stale count of the sorted sets (whose cutoff needs the unit read
// in round two). A nil entry is a key that is gone.
func inspectChunkOf(ctx context.Context, rdb redis.UniversalClient, targets []Target, now time.Time, opts InspectOptions) ([]*KeyInfo, error) {
	reads := make([]*keyReads, len(targets))
	// Round 1: type, TTL and memory.
	pipe := rdb.Pipeline()
	for i, t := range targets {
		reads[i] = &keyReads{
			key: t.Key, node: t.Node,
			typ:    pipe.Type(ctx, t.Key),
			ttl:    pipe.PTTL(ctx, t.Key),
			memory: pipe.MemoryUsage(ctx, t.Key),
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
		info := &KeyInfo{Key: r.key, Node: r.node, Type: typ, Kind: KindUnknown, TTL: ttl, Flags: []Flag{}}
		// MEMORY USAGE is refused by older servers, some managed services and ACLs that do not
		// grant it; memory is then unknown, which is not an error.
		if m, err := r.memory.Result(); err == nil {
			info.Memory = &m
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
			r.oldest = pipe.ZRangeWithScores(ctx, k, 0, 0)
			r.newest = pipe.ZRangeWithScores(ctx, k, -1, -1)
		case "string":
			r.length = pipe.StrLen(ctx, k)
			r.prefix = pipe.GetRange(ctx, k, 0, counterDigits-1)
		case "hash":
			r.length = pipe.HLen(ctx, k)
			r.bucket = pipe.HMGet(ctx, k, "tokens", "ts", "tat")
		case "list":
			r.length = pipe.LLen(ctx, k)
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
			if isWrongType(err) { // replaced by another type between the rounds: gone as we knew it
				r.info = nil
				continue
			}
			return nil, readError(r, "length", err)
		}
		r.info.Size = n
		switch r.info.Type {
		case "zset":
			if err := readZSet(r, now, opts); err != nil {
				return nil, err
			}
		case "string":
			if err := refused(r, "GETRANGE", r.prefix); err != nil {
				return nil, err
			}
			readCounter(r)
		case "hash":
			if err := refused(r, "HMGET", r.bucket); err != nil {
				return nil, err
			}
			readBucket(r, now, opts)
		}
	}

	// Round 3: stale members of the sorted sets whose scores read as times.
	if opts.Stale > 0 {
		pipe = rdb.Pipeline()
		for _, r := range reads {
			if r.info != nil && r.info.Type == "zset" && r.unit != "" {
				cutoff := r.unit.Score(now.Add(-opts.Stale))
				r.stale = pipe.ZCount(ctx, r.key, "-inf", formatScore(cutoff))
			}
		}
		if err := execPipe(ctx, pipe); err != nil {
			return nil, err
		}
		for _, r := range reads {
			if r.stale == nil || r.info == nil {
				continue
			}
			n, err := r.stale.Result()
			if err != nil {
				return nil, readError(r, "ZCOUNT", err)
			}
			r.info.Stale = n
		}
	}

	out := make([]*KeyInfo, len(reads))
	for i, r := range reads {
		if r.info != nil {
			r.info.Flags = flagsOf(*r.info, opts)
		}
		out[i] = r.info
	}
	return out, nil
}

// readZSet fills a sorted set's unit, ages and kind from its oldest and newest members.
func readZSet(r *keyReads, now time.Time, opts InspectOptions) error {
	oldest, err := r.oldest.Result()
	if err != nil {
		return readError(r, "ZRANGE", err)
	}
	newest, err := r.newest.Result()
	if err != nil {
		return readError(r, "ZRANGE", err)
	}
	if r.info.Size == 0 || len(oldest) == 0 || len(newest) == 0 {
		r.info = nil // emptied between the rounds: Redis deletes an empty set
		return nil
	}
	shape := zsetShape{
		key: r.key, size: r.info.Size, ttl: r.info.TTL, now: now,
		oldestMember: memberString(oldest[0].Member), newestMember: memberString(newest[0].Member),
	}
	if unit, ok := resolveUnit(opts.Unit, newest[0].Score, now); ok {
		oldestAt, ok1 := unit.Time(oldest[0].Score)
		newestAt, ok2 := unit.Time(newest[0].Score)
		if ok1 && ok2 {
			r.unit, r.info.Unit = unit, unit
			shape.oldest, shape.newest = oldestAt, newestAt
			shape.timestamps = Plausible(newestAt, now)
			r.info.OldestAge = durationPtr(now.Sub(oldestAt))
			r.info.NewestAge = durationPtr(now.Sub(newestAt))
		}
	}
	r.info.Kind = zsetKind(shape)
	return nil
}

// readCounter makes a string holding an integer a counter whose size is its value.
func readCounter(r *keyReads) {
	if r.info.Size >= counterDigits {
		return
	}
	v, err := r.prefix.Result()
	if err != nil {
		return
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		r.info.Kind, r.info.Size = KindCounter, n
	}
}

// readBucket makes a hash with numeric tokens and ts fields a bucket: its size is the whole
// tokens left, its age the time since its last refill (ts). A hash with a numeric tat field is a
// GCRA bucket (limitctl's token_bucket.lua): the tokens left depend on a rate the key does not
// hold, so its size stays the field count, and its age is now - tat (negative while the bucket is
// still refilling). go-redis/redis_rate keeps its GCRA state elsewhere: a plain string (SET key
// tat EX n), which reads as a string or counter, not as a bucket.
func readBucket(r *keyReads, now time.Time, opts InspectOptions) {
	vals, err := r.bucket.Result()
	if err != nil || len(vals) != 3 {
		return
	}
	tokens, ok1 := numberOf(vals[0])
	ts, ok2 := numberOf(vals[1])
	if tat, ok := numberOf(vals[2]); ok && !(ok1 && ok2) {
		if unit, ok := resolveUnit(opts.Unit, tat, now); ok {
			if at, ok := unit.Time(tat); ok {
				r.info.Kind, r.info.Unit = KindBucket, unit
				r.info.OldestAge = durationPtr(now.Sub(at))
				r.info.NewestAge = durationPtr(now.Sub(at))
			}
		}
		return
	}
	if !ok1 || !ok2 {
		return
	}
	r.info.Kind, r.info.Size = KindBucket, int64(math.Floor(tokens))
	if unit, ok := resolveUnit(opts.Unit, ts, now); ok {
		if at, ok := unit.Time(ts); ok {
			r.info.Unit = unit
			r.info.OldestAge = durationPtr(now.Sub(at))
			r.info.NewestAge = durationPtr(now.Sub(at))
		}
	}
}

// flagsOf lists a key's flags. OVER_LIMIT applies to the kinds that count against a limit:
// concurrency sets, window logs and counters.
func flagsOf(k KeyInfo, opts InspectOptions) []Flag {
	flags := []Flag{}
	if k.TTL < 0 {
		flags = append(flags, FlagNoTTL)
	}
	if k.Stale > 0 {
		flags = append(flags, FlagStale)
	}
	if opts.HasLimit && k.Size > opts.Limit {
		switch k.Kind {
		case KindConcurrency, KindWindowLog, KindCounter:
			flags = append(flags, FlagOverLimit)
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
		if e := c.Err(); e != nil && !isRedisError(e) {
			return e
		}
	}
	return nil
}

// refused is the error of a kind-detecting read the user's ACL does not allow: left silent, it
// would report a counter or a bucket as unknown.
func refused(r *keyReads, what string, c redis.Cmder) error {
	if err := c.Err(); err != nil && redis.HasErrorPrefix(err, "NOPERM") {
		return readError(r, what, err)
	}
	return nil
}

func readError(r *keyReads, what string, err error) error {
	return fmt.Errorf("%s on %s: %s: %w", r.key, r.node, what, err)
}

// isRedisError tells an error reply from Redis (NOPERM, WRONGTYPE, ERR...) from a transport one.
func isRedisError(err error) bool {
	var re redis.Error
	return errors.As(err, &re) || errors.Is(err, redis.Nil)
}

func isWrongType(err error) bool { return redis.HasErrorPrefix(err, "WRONGTYPE") }

func memberString(m any) string {
	switch v := m.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	return fmt.Sprint(m)
}

// numberOf reads an HMGET field as a number.
func numberOf(v any) (float64, bool) {
	s, ok := v.(string)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil && !math.IsNaN(f) && !math.IsInf(f, 0)
}

// formatScore writes a score for ZCOUNT and the purge script: plain decimal, never an exponent.
func formatScore(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func durationPtr(d time.Duration) *time.Duration { return &d }
