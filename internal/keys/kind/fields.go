package kind

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/limitctl/limitctl/internal/keys/scores"
)

// Kind detection of strings and hashes: what other libraries' limiter keys hold. docs/kinds.md
// documents each heuristic with an example, and keys' kinds_doc_test.go runs every example.

// The hash field names read (HMGET, so a big hash is never read whole), in order of preference.
var (
	// tatFields hold a GCRA theoretical arrival time.
	tatFields = []string{"tat", "TAT", "theoretical_arrival_time", "theoreticalArrivalTime"}
	// tokenFields hold a token bucket's tokens left.
	tokenFields = []string{"tokens", "tokens_left", "tokensLeft", "remaining", "available", "value"}
	// refillFields hold the time of a token bucket's last refill.
	refillFields = []string{"ts", "timestamp", "refilledAt", "refilled_at", "last_refill", "lastRefill",
		"last_refill_time", "lastRefillTime", "last_refilled", "lastRefilled", "last_update", "lastUpdate",
		"updated_at", "updatedAt", "last", "time"}
	// windowFields hold a fixed window's start, end and count in one hash (Laravel's
	// DurationLimiter), in this order.
	windowFields = []string{"start", "end", "count"}
)

// HashFields is every field HMGET asks for: tat, then tokens, then refill names, then the
// window's.
var HashFields = func() []string {
	var all []string
	all = append(all, tatFields...)
	all = append(all, tokenFields...)
	all = append(all, refillFields...)
	return append(all, windowFields...)
}()

// HashShape is what a bucket, GCRA or window hash holds, read from HMGET HashFields.
type HashShape struct {
	TAT, Tokens, Refill float64
	HasTAT, HasTokens   bool
	HasRefill           bool
	// Start, End and Count of a fixed window; HasWindow when all three are numbers.
	Start, End, Count float64
	HasWindow         bool
}

// ReadHashFields picks the first numeric field of each role from an HMGET of HashFields.
func ReadHashFields(vals []any) HashShape {
	var h HashShape
	pick := func(from int, names []string) (float64, bool) {
		for i := range names {
			if v, ok := numberOf(vals[from+i]); ok {
				return v, true
			}
		}
		return 0, false
	}
	if len(vals) != len(HashFields) {
		return h
	}
	h.TAT, h.HasTAT = pick(0, tatFields)
	h.Tokens, h.HasTokens = pick(len(tatFields), tokenFields)
	h.Refill, h.HasRefill = pick(len(tatFields)+len(tokenFields), refillFields)
	w := len(tatFields) + len(tokenFields) + len(refillFields)
	var ok [3]bool
	h.Start, ok[0] = numberOf(vals[w])
	h.End, ok[1] = numberOf(vals[w+1])
	h.Count, ok[2] = numberOf(vals[w+2])
	h.HasWindow = ok[0] && ok[1] && ok[2]
	return h
}

// Epochs a theoretical arrival time is counted from: Unix time (limitctl's token_bucket.lua,
// most libraries), and 2017-01-01 UTC (go-redis/redis_rate, which shifts TIME by that much so
// a float64 keeps microseconds).
var tatEpochs = []struct {
	name string
	at   time.Time
}{
	{"unix", time.Unix(0, 0)},
	{"2017-01-01", time.Date(2017, 1, 1, 0, 0, 0, 0, time.UTC)},
}

// A TAT lies near now: a key expires at (or soon after) its TAT, and a TAT is at most one burst
// period ahead. Thirty days back allows keys kept without a TTL; no epoch's small numbers (2017
// plus a few seconds) land in that range.
const (
	tatPast   = 30 * 24 * time.Hour
	tatFuture = scores.DeadlineFuture
)

// TATTime reads a theoretical arrival time: the epoch and unit in which v is a plausible time
// near now (tatPast before to tatFuture after). Epochs 47 years apart and units a factor 1000
// apart leave at most one reading in range. ok is false when none fits: the epoch is unknown.
func TATTime(v float64, now time.Time) (time.Time, bool) {
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return time.Time{}, false
	}
	for _, e := range tatEpochs {
		for _, u := range scores.Units {
			d, ok := u.Time(v) // v units after the Unix epoch; shift to e
			if !ok {
				continue
			}
			t := e.at.Add(time.Duration(d.UnixNano()))
			if !t.Before(now.Add(-tatPast)) && !t.After(now.Add(tatFuture)) {
				return t, true
			}
		}
	}
	return time.Time{}, false
}

// TATMatchesTTL reports whether a key's expiry sits at its TAT: GCRA libraries expire the key
// when the bucket is full again (redis_rate: EX ceil(tat - now); limitctl: PX tat - now + 1s),
// so an integer that is a TAT (redis-cell keeps nanoseconds) can be told from a counter.
func TATMatchesTTL(tat time.Time, ttl time.Duration, now time.Time) bool {
	if ttl < 0 {
		return false
	}
	d := now.Add(ttl).Sub(tat)
	return d >= -2*time.Second && d <= 2*time.Second
}

// WindowKey splits a key <id>:<index> into its id and window index.
func WindowKey(key string) (id string, index int64, ok bool) {
	i := strings.LastIndexByte(key, ':')
	if i <= 0 || i == len(key)-1 {
		return "", 0, false
	}
	n, err := strconv.ParseInt(key[i+1:], 10, 64)
	if err != nil || n < 1 || key[i+1] == '+' || key[i+1] == '0' {
		return "", 0, false
	}
	return key[:i], n, true
}

// WindowKeyAt names the key of window index n of id.
func WindowKeyAt(id string, n int64) string { return id + ":" + strconv.FormatInt(n, 10) }

// InferWindow finds the window length of a counter pair from its newest index: the newest
// window is the current one or at most two behind (the keys live two windows and a second), so
// the window lies in (now/(top+3), now/top]. The roundest whole number of milliseconds in that
// range wins (60000 over 60001): for windows up to hours the range is narrower than a
// millisecond, and a day's window still stands out by its round value. ok is false when no
// whole millisecond fits.
func InferWindow(top int64, now time.Time) (time.Duration, bool) {
	ms := float64(now.UnixMilli())
	if top < 1 || float64(top) >= ms {
		return 0, false
	}
	lo := int64(math.Floor(ms/float64(top+3))) + 1
	hi := int64(math.Floor(ms / float64(top)))
	if lo > hi {
		return 0, false
	}
	for g := int64(1_000_000_000); g >= 1; g /= 10 {
		for _, step := range []int64{g * 5, g * 2, g} { // 5s, 2s and 1s windows before 3s ones
			if m := (lo + step - 1) / step * step; m <= hi {
				return time.Duration(m) * time.Millisecond, true
			}
		}
	}
	return 0, false
}

// PairEstimate is the sliding-window estimate of a counter pair, as upstash/ratelimit computes
// it: the current window's count plus the previous window's count weighted by the part of the
// previous window the sliding window still covers.
type PairEstimate struct {
	Window   time.Duration
	Estimate int64
}

// PairState is what a counter with a neighbouring window's counter is.
type PairState int

const (
	PairLive     PairState = iota // the current or the previous window of a sliding pair
	PairLeftover                  // an older window of a sliding pair, waiting for its TTL
	PairNone                      // counters that only look like a pair (see SlidingEstimate)
)

// SlidingEstimate reads the pair that the key of window index n belongs to at now; counts and
// ttls hold the windows read (n-1, n, n+1). A sliding pair's keys expire, within a few windows
// (upstash: two windows and a second), and the previous window's key outlives the current window,
// which reads it to its end. Counters without a TTL or living far longer (per-user counters that
// merely have consecutive ids), or whose previous window's key dies sooner (fixed-window counters
// whose predecessor has not expired yet) are no pair.
func SlidingEstimate(n int64, counts map[int64]int64, ttls map[int64]time.Duration, window time.Duration, now time.Time) (PairEstimate, PairState) {
	w := window.Milliseconds()
	for _, ttl := range ttls {
		if ttl < 0 || ttl > 3*window+2*time.Second {
			return PairEstimate{}, PairNone
		}
	}
	nowMs := now.UnixMilli()
	cur := nowMs / w
	if ttl, ok := ttls[cur-1]; ok && nowMs+ttl.Milliseconds() < (cur+1)*w {
		return PairEstimate{}, PairNone
	}
	if cur != n && cur != n+1 {
		return PairEstimate{}, PairLeftover
	}
	elapsed := float64(nowMs%w) / float64(w)
	est := counts[cur] + int64(math.Floor((1-elapsed)*float64(counts[cur-1])))
	return PairEstimate{Window: window, Estimate: est}, PairLive
}

// BucketSiblings names the keys a string may share a token bucket with, when the bucket is kept
// in two strings (Spring Cloud Gateway's first layout: <prefix>tokens and <prefix>timestamp): a
// key ending in a token field name after a separator pairs with the refill names, and the other
// way round. holdsTokens says whether the key itself holds the tokens. The longest matching name
// wins, so ...last_refill_time is not read as ...time.
func BucketSiblings(key string) (siblings []string, holdsTokens bool) {
	match := func(names []string) string {
		best := ""
		for _, n := range names {
			if len(n) > len(best) && len(key) > len(n) && strings.HasSuffix(key, n) &&
				strings.IndexByte(".:_-/", key[len(key)-len(n)-1]) >= 0 {
				best = n
			}
		}
		return best
	}
	tok, ref := match(tokenFields), match(refillFields)
	var name string
	var other []string
	switch {
	case len(tok) > len(ref):
		name, other, holdsTokens = tok, refillFields, true
	case ref != "":
		name, other = ref, tokenFields
	default:
		return nil, false
	}
	prefix := key[:len(key)-len(name)]
	for _, o := range other {
		siblings = append(siblings, prefix+o)
	}
	return siblings, holdsTokens
}

// previousSuffix ends the previous window's counter of a pair renamed into place, as
// alisaifee/limits keeps its sliding window: {<key>} now, {<key>}/-1 the window before.
const previousSuffix = "/-1"

// RenamedPair names the other counter of such a pair: the previous window's key of a current
// one, or the current one of a previous one.
func RenamedPair(key string) (other string, isPrevious bool) {
	if base, ok := strings.CutSuffix(key, previousSuffix); ok && base != "" {
		return base, true
	}
	return key + previousSuffix, false
}

// limitsGranularity is alisaifee/limits' granularity names, in seconds.
var limitsGranularity = map[string]int64{
	"second": 1, "minute": 60, "hour": 3600, "day": 86400, "month": 30 * 86400, "year": 12 * 30 * 86400,
}

// LimitsWindow reads the window from an alisaifee/limits key, whose limit ends in
// /<amount>/<multiples>/<granularity> (LIMITER/10.0.0.7/10/1/minute: ten per minute); ok is false
// for any other key.
func LimitsWindow(key string) (time.Duration, bool) {
	key = strings.TrimSuffix(key, previousSuffix)
	key = strings.TrimSuffix(key, "}")
	parts := strings.Split(key, "/")
	if len(parts) < 3 {
		return 0, false
	}
	secs, ok := limitsGranularity[parts[len(parts)-1]]
	multiples, err := strconv.ParseInt(parts[len(parts)-2], 10, 64)
	if !ok || err != nil || multiples < 1 {
		return 0, false
	}
	return time.Duration(multiples*secs) * time.Second, true
}

// RenamedEstimate is the sliding-window count of a renamed pair as alisaifee/limits weighs it:
// the previous count times the part of a window its key has left to live, plus the current count.
func RenamedEstimate(previous, current int64, previousTTL, window time.Duration) int64 {
	left := max(previousTTL, 0)
	return int64(math.Floor(float64(previous)*float64(left)/float64(window))) + current
}

// SlotKey splits a key <name><i> into the name and slot number of a numbered lock slot
// (Laravel's ConcurrencyLimiter appends 1..N to the limiter's name, without a separator).
func SlotKey(key string) (name string, slot int64, ok bool) {
	i := len(key)
	for i > 0 && key[i-1] >= '0' && key[i-1] <= '9' {
		i--
	}
	if i == 0 || i == len(key) || len(key)-i > 4 || key[i] == '0' {
		return "", 0, false
	}
	n, err := strconv.ParseInt(key[i:], 10, 64)
	return key[:i], n, err == nil
}

// HolderID reports whether a string's value looks like a lock holder's random id: 8 to 64
// letters, digits, '-' or '_' (only the first bytes are read: head).
func HolderID(head string, length int64) bool {
	if length < 8 || length > 64 || head == "" {
		return false
	}
	for i := 0; i < len(head); i++ {
		c := head[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// timerSuffix names the key that holds a fixed window's end beside its counter, as Laravel's
// cache RateLimiter keeps <key> and <key>:timer.
const timerSuffix = ":timer"

// TimerPair names the other key of a counter and timer pair: the timer of a counter, or the
// counter of a timer (isTimer).
func TimerPair(key string) (other string, isTimer bool) {
	if base, ok := strings.CutSuffix(key, timerSuffix); ok && base != "" {
		return base, true
	}
	return key + timerSuffix, false
}

// Redisson's RRateLimiter keeps {name}:value, the permits left, and {name}:permits, its grants.
const (
	ValueSuffix   = ":value"
	PermitsSuffix = ":permits"
)

// numberOf reads an HMGET field as a number.
func numberOf(v any) (float64, bool) {
	s, ok := v.(string)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil && !math.IsNaN(f) && !math.IsInf(f, 0)
}
