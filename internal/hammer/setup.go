package hammer

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/contract"
	"github.com/limitctl/limitctl/internal/exitcode"
	"github.com/limitctl/limitctl/internal/limiter"
)

// setup runs the custom script's set-up steps (--script-setup, --script-setup-file) in the
// order given on every key the custom strategy uses, its probe's included, before any load:
// the state a library's own initialising call creates first (Redisson's trySetPermits,
// Bottleneck's init). Each step writes under {key}, so the clean-up deletes what it wrote; a
// command whose key arguments (as COMMAND GETKEYS names them) are not the run's own is
// refused before it runs. A step Redis refuses stops the run, naming the step, the key and
// Redis's reply.
func (s *session) setup(ctx context.Context) error {
	keys := []string{s.keys.Probe(string(limiter.Custom))}
	for i := range max(1, s.opts.Keys) {
		keys = append(keys, s.keys.Key(string(limiter.Custom), i))
	}
	return s.setupKeys(ctx, keys)
}

// setupKeys runs every set-up step, in order, on each of keys.
func (s *session) setupKeys(ctx context.Context, keys []string) error {
	c := s.opts.Contract
	if c == nil || len(c.Setup) == 0 || !slices.Contains(s.opts.Strategies, limiter.Custom) {
		return nil
	}
	static := contract.Static{Limit: s.opts.Limit, Burst: s.opts.Limit, Cost: 1, RatePerS: s.cfg.Rate, Window: s.opts.Window, StaleAfter: s.opts.StaleAfter}
	for _, step := range c.Setup {
		bound, err := step.Bind(static)
		if err != nil {
			return exitcode.Usagef("%v", err)
		}
		var script *redis.Script
		if step.Source != "" {
			script = redis.NewScript(step.Source)
		}
		for _, key := range keys {
			if err := s.setupKey(ctx, bound, script, key); err != nil {
				return err
			}
		}
	}
	return nil
}

// setupKey runs one step on one key. A nil reply is an answer, not a failure; an interrupt
// stays one (exit 130).
func (s *session) setupKey(ctx context.Context, b *contract.BoundSetup, script *redis.Script, key string) error {
	now := s.deps.Now()
	var err error
	if keys, args, ok := b.Script(key, now); ok {
		err = script.Run(ctx, s.rdb, keys, args...).Err()
	} else {
		words := b.Command(key, now)
		if err := s.ownsKeysOf(ctx, b.Setup, words); err != nil {
			return err
		}
		err = s.rdb.Do(ctx, words...).Err()
	}
	switch {
	case err == nil || errors.Is(err, redis.Nil):
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return fmt.Errorf("%s on %s: %s", b.Setup, key, redisReason(err))
}

// ownsKeysOf refuses a set-up command that names a key the run does not own ('SET users:1
// {key}' writes users:1). The server says which arguments are keys; when it cannot say
// (COMMAND not permitted, a command of no keys, a call Redis then refuses anyway), the command's
// own use of {key} is what was checked.
func (s *session) ownsKeysOf(ctx context.Context, step *contract.Setup, words []any) error {
	keys, err := s.rdb.CommandGetKeys(ctx, words...).Result()
	var refusal redis.Error
	if errors.As(err, &refusal) {
		return nil // Redis's answer, not the network's
	} else if err != nil {
		return fmt.Errorf("%s: COMMAND GETKEYS: %s", step, redisReason(err))
	}
	for _, k := range keys {
		if !s.keys.Owns(k) {
			return exitcode.Usagef("%s writes %s, which is not one of the run's keys: name every key from {key} (e.g. '{key}:config'), so the run never touches a key of yours", step, k)
		}
	}
	return nil
}
