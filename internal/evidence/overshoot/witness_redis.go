package overshoot

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/evidence"
)

// RedisWitness keeps the concurrency witness in Redis, so several hammer processes driving one
// limiter share one witness and can still prove overshoot. It is a sorted set of the requests
// held now, each member a request id of this process, scored by the request's decision time:
//   - a release removes its own admit (ZREM of its id), so a failed or lost admit can never be
//     cancelled by a release that drives the count low, and a release that failed is sent
//     again with the next admit;
//   - entries decided stale-after or more ago are pruned, as the limiter forgets them, so what
//     a killed process left behind ages out instead of blaming the next run;
//   - an admit counts, in the same script as its ZADD, the held requests; above the limit it
//     returns their decision times, and only those decided less than stale-after before the
//     reply count as evidence (the rule of Witness).
//
// The peak is what any admit of this process saw.
type RedisWitness struct {
	*Witness
	rdb     redis.Cmdable
	key     string
	timeout time.Duration
	proc    string // this process's prefix for request ids

	mu      sync.Mutex
	pending []string // members whose ZREM failed: removed again by the next admit
}

// witnessAdmit adds one held request. KEYS[1] the set; ARGV: member, now_ms, prune_ms (entries
// scored at or below it are forgotten; empty: none), limit, ttl_ms, then members of earlier
// releases to remove first. Returns {count} at or below the limit, else {count, scores...}.
// Time comes from ARGV, as in the limiter scripts.
var witnessAdmit = redis.NewScript(`
local set = KEYS[1]
for i = 6, #ARGV do redis.call('ZREM', set, ARGV[i]) end
if ARGV[3] ~= '' then redis.call('ZREMRANGEBYSCORE', set, '-inf', ARGV[3]) end
redis.call('ZADD', set, ARGV[2], ARGV[1])
redis.call('PEXPIRE', set, ARGV[5])
local n = redis.call('ZCARD', set)
if n <= tonumber(ARGV[4]) then return {n} end
local out = {n}
local held = redis.call('ZRANGE', set, 0, -1, 'WITHSCORES')
for i = 2, #held, 2 do out[#out + 1] = held[i] end
return out
`)

// NewRedisWitness returns a witness kept on key (which should share the limiter key's hash
// tag) for a limiter that reclaims members older than staleAfter (0: never).
func NewRedisWitness(rdb redis.Cmdable, key string, limit int64, staleAfter, timeout time.Duration) *RedisWitness {
	var b [6]byte
	rand.Read(b[:])
	return &RedisWitness{
		Witness: NewWitness(limit, staleAfter.Milliseconds()), rdb: rdb, key: key, timeout: timeout,
		proc: hex.EncodeToString(b[:]),
	}
}

// Admit implements Checker, as the in-process witness's but on the shared set.
func (w *RedisWitness) Admit(d evidence.Decision, kept func()) Outcome {
	return admitHeld(w, w.recordedAt, d, kept)
}

// Release implements Checker.
func (w *RedisWitness) Release(id uint64) { w.ReleaseHeld(id) }

// AdmitHeld records request id on the shared set, as the in-process witness's does. When the
// script fails the request still counts locally, and is no evidence.
func (w *RedisWitness) AdmitHeld(id uint64, nowMs, atMs int64) {
	ctx, cancel := context.WithTimeout(context.Background(), w.timeout)
	defer cancel()
	w.Witness.mu.Lock()
	w.Witness.held[id] = nowMs
	w.Witness.inFlight.Store(int64(len(w.Witness.held)))
	w.Witness.mu.Unlock()
	sent := time.Now()
	reply, err := w.admit(ctx, w.member(id), nowMs, atMs, w.limit)
	if err != nil {
		return
	}
	// The latest the script can have run, on the engine's clock.
	repliedMs := atMs + time.Since(sent).Milliseconds() + 1
	n := w.evidence(reply, repliedMs)
	w.observe(n)
	// The count is every process's; the trace can show only this process's held requests.
	w.Witness.mu.Lock()
	first := w.Witness.firstOver(n, id, func(int64) bool { return true }, true)
	w.Witness.mu.Unlock()
	w.Witness.report(first)
}

// evidence is the witness value of a script reply: the count, or above the limit the held
// requests decided less than stale-after before repliedMs.
func (w *RedisWitness) evidence(reply []int64, repliedMs int64) int64 {
	if len(reply) == 1 || w.staleAfter <= 0 {
		return reply[0]
	}
	var n int64
	for _, decided := range reply[1:] {
		if decided > repliedMs-w.staleAfter {
			n++
		}
	}
	return n
}

// ReleaseHeld records the end of request id on the shared set.
func (w *RedisWitness) ReleaseHeld(id uint64) {
	ctx, cancel := context.WithTimeout(context.Background(), w.timeout)
	defer cancel()
	w.Witness.ReleaseHeld(id)
	member := w.member(id)
	if err := w.rdb.ZRem(ctx, w.key, member).Err(); err != nil {
		// ZREM of one id is safe to send again; until it lands the entry over-counts.
		w.mu.Lock()
		w.pending = append(w.pending, member)
		w.mu.Unlock()
	}
}

// AbandonHeld records that request id will never be released: the entry stays in Redis, counted by every process
// until it is pruned as stale; only this process's own list of its held requests drops it.
func (w *RedisWitness) AbandonHeld(id uint64) { w.Witness.ReleaseHeld(id) }

// AdmitMs records an admit without a request id; ReleaseNewest pairs with the newest.
func (w *RedisWitness) AdmitMs(nowMs int64) {
	id := w.Witness.anonID()
	w.AdmitHeld(id, nowMs, nowMs)
	w.Witness.pushAnon(id) // releasable only once held: see Witness.pushAnon
}

// ReleaseNewest ends the newest request admitted by AdmitMs.
func (w *RedisWitness) ReleaseNewest() {
	if id, ok := w.Witness.popAnon(); ok {
		w.ReleaseHeld(id)
	}
}

// Finish implements Checker: releases that failed are sent once more, so a shared witness is
// not left over-counting for the processes still running.
func (w *RedisWitness) Finish() CheckResult {
	w.mu.Lock()
	pending := w.pending
	w.pending = nil
	w.mu.Unlock()
	if len(pending) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), w.timeout)
		w.rdb.ZRem(ctx, w.key, toAny(pending)...)
		cancel()
	}
	return w.Result()
}

// Probe runs every command of the witness once (EVAL, EVALSHA, the script's commands, ZREM)
// and returns the first error: the run checks up front that the user may run them, since
// AdmitHeld and ReleaseHeld cannot report. EVAL comes first, as after a SCRIPT FLUSH; a limit
// of 0 takes the script's counting branch too.
func (w *RedisWitness) Probe(ctx context.Context) error {
	member := w.member(0)
	now := time.Now().UnixMilli()
	args := []any{member, now, now - time.Hour.Milliseconds(), 0, time.Minute.Milliseconds()}
	if err := witnessAdmit.Eval(ctx, w.rdb, []string{w.key}, args...).Err(); err != nil {
		return err
	}
	if err := witnessAdmit.EvalSha(ctx, w.rdb, []string{w.key}, args...).Err(); err != nil {
		return err
	}
	return w.rdb.ZRem(ctx, w.key, member).Err()
}

func (w *RedisWitness) member(id uint64) string { return w.proc + ":" + strconv.FormatUint(id, 10) }

func (w *RedisWitness) admit(ctx context.Context, member string, nowMs, atMs, limit int64) ([]int64, error) {
	w.mu.Lock()
	removals := w.pending
	w.pending = nil
	w.mu.Unlock()
	prune, ttl := "", time.Hour.Milliseconds()
	if w.staleAfter > 0 {
		// Decided at or before atMs - stale-after: no process can count it any more.
		prune = strconv.FormatInt(atMs-w.staleAfter, 10)
		ttl = w.staleAfter + time.Minute.Milliseconds() // outlives every request still held
	}
	args := append([]any{member, nowMs, prune, limit, ttl}, toAny(removals)...)
	reply, err := witnessAdmit.Run(ctx, w.rdb, []string{w.key}, args...).Int64Slice()
	if err == nil && len(reply) == 0 {
		err = errors.New("witness script: empty reply")
	}
	if err != nil && len(removals) > 0 {
		w.mu.Lock()
		w.pending = append(w.pending, removals...)
		w.mu.Unlock()
	}
	return reply, err
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
