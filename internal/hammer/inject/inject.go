// Package inject causes the faults --inject names at their points of a run: scripts flushed,
// the server paused, killed or restarted.
package inject

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/embedded"
	"github.com/limitctl/limitctl/internal/exitcode"
	"github.com/limitctl/limitctl/internal/human"
	"github.com/limitctl/limitctl/internal/redisconn"
)

// Event is a fault the hammer causes at a point of the run, so people can watch the
// strategies live through it: flush-scripts@2s, pause@3s:500ms, kill@4s, restart@5s.
type Event struct {
	Kind string
	At   time.Duration
	For  time.Duration // pause: how long
}

// Parse reads --inject values (each may hold several, comma-separated) into events in
// time order. kill and restart need the spawned server, so they are refused with a target.
func Parse(specs []string, hasTarget bool) ([]Event, error) {
	var out []Event
	for _, spec := range specs {
		for _, one := range strings.Split(spec, ",") {
			one = strings.TrimSpace(one)
			kind, when, ok := strings.Cut(one, "@")
			if !ok {
				return nil, exitcode.Usagef("--inject %q: want EVENT@TIME, e.g. flush-scripts@2s", one)
			}
			ev := Event{Kind: kind}
			at, arg, hasArg := strings.Cut(when, ":")
			var err error
			if ev.At, err = time.ParseDuration(at); err != nil || ev.At < 0 {
				return nil, exitcode.Usagef("--inject %q: bad time %q (e.g. 2s, 1500ms)", one, at)
			}
			switch kind {
			case "flush-scripts", "kill", "restart":
				if hasArg {
					return nil, exitcode.Usagef("--inject %q: %s takes no duration", one, kind)
				}
				if kind != "flush-scripts" && hasTarget {
					return nil, exitcode.Usagef("--inject %s works only on the spawned embedded redis-server, not on --url/--addr", kind)
				}
			case "pause":
				if !hasArg {
					return nil, exitcode.Usagef("--inject %q: pause needs a length, e.g. pause@3s:500ms", one)
				}
				if ev.For, err = time.ParseDuration(arg); err != nil || ev.For <= 0 || ev.For > time.Minute {
					return nil, exitcode.Usagef("--inject %q: bad pause length %q (up to 1m)", one, arg)
				}
			default:
				return nil, exitcode.Usagef("--inject %q: unknown event %q (flush-scripts, pause, kill, restart)", one, kind)
			}
			out = append(out, ev)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At < out[j].At })
	return out, nil
}

// Restarts reports whether the events kill or restart the server.
func Restarts(events []Event) bool {
	for _, ev := range events {
		if ev.Kind == "kill" || ev.Kind == "restart" {
			return true
		}
	}
	return false
}

// Start fires the events at their times from the run's start; the returned func waits
// for the injector to stop. Each event reports one line to notice.
func Start(ctx context.Context, events []Event, rdb redis.UniversalClient, spawned *embedded.Server, notice func(string)) func() {
	if len(events) == 0 {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		start := time.Now()
		for _, ev := range events {
			t := time.NewTimer(time.Until(start.Add(ev.At)))
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			notice(fmt.Sprintf("inject %s at %s: %s", ev.Kind, ev.At, fire(ctx, ev, rdb, spawned)))
		}
	}()
	return func() { cancel(); wg.Wait() }
}

func fire(ctx context.Context, ev Event, rdb redis.UniversalClient, spawned *embedded.Server) string {
	switch ev.Kind {
	case "flush-scripts":
		nodes, release, err := redisconn.AllNodes(ctx, rdb)
		defer release()
		if err != nil {
			return "failed: " + human.FirstLine(err.Error())
		}
		for _, n := range nodes {
			if err := n.ScriptFlush(ctx).Err(); err != nil {
				return "failed: " + human.FirstLine(err.Error())
			}
		}
		return fmt.Sprintf("SCRIPT FLUSH on %d node(s)", len(nodes))
	case "pause":
		masters, err := redisconn.Masters(ctx, rdb)
		if err != nil {
			return "failed: " + human.FirstLine(err.Error())
		}
		for _, m := range masters {
			if err := m.Do(ctx, "CLIENT", "PAUSE", ev.For.Milliseconds(), "WRITE").Err(); err != nil {
				return "failed: " + human.FirstLine(err.Error())
			}
		}
		return fmt.Sprintf("CLIENT PAUSE %s WRITE", ev.For)
	case "kill", "restart":
		if spawned == nil || spawned.Process() == nil {
			return "skipped: needs the spawned redis-server"
		}
		if ev.Kind == "kill" {
			spawned.Process().Kill()
			return "redis-server killed"
		}
		if err := spawned.Process().Restart(); err != nil {
			return "failed: " + human.FirstLine(err.Error())
		}
		return "redis-server restarted (empty: scripts and keys are gone)"
	}
	return "unknown event"
}
