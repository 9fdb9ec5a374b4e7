// Command loadproto drives a Redis Cluster with the hammer's load (EVALSHA of fixed_window, limit
// 0: every call the same rejection) through one of the candidate fast paths, so that
// hack/bench-hammer.sh can measure each side by side with redis-benchmark --cluster (issue 33):
//
//	wire          internal/wire with slot routing: a connection per master per loop, each round
//	              split by the keys' slots (CRC16), MOVED answered by reading CLUSTER SLOTS again
//	rueidis-multi rueidis's cluster client, each round one DoMulti (as behind limiter.Batch)
//	rueidis-auto  rueidis's cluster client, every worker calling Do (its auto-pipelining)
//	goredis-pipe  go-redis's ClusterClient, each round one Pipeline (what the hammer does today)
//	goredis-auto  go-redis's ClusterClient AutoPipeline, every worker calling Do
//
// Round modes run -conns loops of -workers/-conns calls a round; the auto modes run -workers
// goroutines of one call each. It prints the calls answered and the errors when -duration ends;
// the server's own counters are what the script compares.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"

	"github.com/limitctl/limitctl/internal/wire"
	"github.com/limitctl/limitctl/scripts"
)

func main() {
	mode := flag.String("mode", "wire", "wire, rueidis-multi, rueidis-auto, goredis-pipe or goredis-auto")
	seed := flag.String("addr", "127.0.0.1:7000", "a seed node of the cluster")
	workers := flag.Int("workers", 256, "calls in flight")
	conns := flag.Int("conns", 8, "loops (round modes): each sends workers/conns calls a round")
	keys := flag.Int("keys", 256, "keys, each of its own hash tag")
	duration := flag.Duration("duration", 10*time.Second, "how long to run")
	flag.Parse()

	sha := scripts.SHA1(scripts.FixedWindow)
	names := make([]string, *keys)
	for i := range names {
		names[i] = fmt.Sprintf("proto:{%d}:counter", i)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *duration)
	defer cancel()
	var calls, failed atomic.Int64
	count := func(err error) {
		if err != nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
			if failed.Add(1) == 1 {
				fmt.Fprintln(os.Stderr, "first error:", err)
			}
			return
		}
		calls.Add(1)
	}
	key := func() string { return names[rand.IntN(len(names))] }
	perRound := max(*workers/max(*conns, 1), 1)
	var loop func()
	loops := *conns
	switch *mode {
	case "wire":
		loop = func() {
			r, err := newRouter(ctx, &redis.Options{Addr: *seed})
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			for ctx.Err() == nil {
				r.round(ctx, sha, perRound, key, count)
			}
		}
	case "rueidis-multi", "rueidis-auto":
		c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{*seed}, ShuffleInit: true})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer c.Close()
		cmd := func() rueidis.Completed {
			return c.B().Evalsha().Sha1(sha).Numkeys(1).Key(key()).Arg("0", "60000").Build()
		}
		if *mode == "rueidis-auto" {
			loops = *workers
			loop = func() {
				for ctx.Err() == nil {
					count(c.Do(ctx, cmd()).Error())
				}
			}
			break
		}
		loop = func() {
			batch := make(rueidis.Commands, perRound)
			for ctx.Err() == nil {
				for i := range batch {
					batch[i] = cmd()
				}
				for _, res := range c.DoMulti(ctx, batch...) {
					count(res.Error())
				}
			}
		}
	case "goredis-pipe", "goredis-auto":
		c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{*seed}, PoolSize: *workers})
		defer c.Close()
		if *mode == "goredis-auto" {
			ap, err := c.AutoPipeline()
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			defer ap.Close()
			loops = *workers
			loop = func() {
				for ctx.Err() == nil {
					count(ap.EvalSha(ctx, sha, []string{key()}, 0, 60000).Err())
				}
			}
			break
		}
		loop = func() {
			for ctx.Err() == nil {
				p := c.Pipeline()
				for range perRound {
					p.EvalSha(ctx, sha, []string{key()}, 0, 60000)
				}
				cmds, _ := p.Exec(ctx)
				for _, cmd := range cmds {
					count(cmd.Err())
				}
			}
		}
	default:
		fmt.Fprintln(os.Stderr, "unknown -mode", *mode)
		os.Exit(2)
	}
	var wg sync.WaitGroup
	for range loops {
		wg.Go(loop)
	}
	wg.Wait()
	fmt.Printf("%s calls %d errors %d\n", *mode, calls.Load(), failed.Load())
}

// router is the wire prototype's view of a cluster: which master owns each slot, and one
// connection to each.
type router struct {
	opt   *redis.Options
	owner [16384]string
	conns map[string]*wire.Conn
	// a round's calls per connection, in the order sent
	sent map[string][]string
}

func newRouter(ctx context.Context, opt *redis.Options) (*router, error) {
	r := &router{opt: opt, conns: map[string]*wire.Conn{}, sent: map[string][]string{}}
	return r, r.refresh(ctx)
}

// refresh reads CLUSTER SLOTS from any node it can reach.
func (r *router) refresh(ctx context.Context) error {
	seeds := []string{r.opt.Addr}
	for addr := range r.conns {
		seeds = append(seeds, addr)
	}
	var last error
	for _, addr := range seeds {
		c, err := r.conn(ctx, addr)
		if err != nil {
			last = err
			continue
		}
		v, err := c.Call(ctx, "cluster", "slots")
		if err != nil {
			last = err
			continue
		}
		for _, rng := range v.([]any) {
			rng := rng.([]any)
			node := rng[2].([]any)
			host, port := node[0].(string), node[1].(int64)
			for s := rng[0].(int64); s <= rng[1].(int64); s++ {
				r.owner[s] = host + ":" + strconv.FormatInt(port, 10)
			}
		}
		return nil
	}
	return last
}

func (r *router) conn(ctx context.Context, addr string) (*wire.Conn, error) {
	if c := r.conns[addr]; c != nil && c.Err() == nil {
		return c, nil
	}
	o := *r.opt
	o.Addr = addr
	c, err := wire.Dial(ctx, &o)
	if err != nil {
		return nil, err
	}
	r.conns[addr] = c
	return c, nil
}

// round sends n calls, each to its key's master, all in flight at once, then reads every reply.
func (r *router) round(ctx context.Context, sha string, n int, key func() string, count func(error)) {
	for addr := range r.sent {
		r.sent[addr] = r.sent[addr][:0]
	}
	for range n {
		k := key()
		addr := r.owner[wire.Slot(k)]
		c, err := r.conn(ctx, addr)
		if err != nil {
			count(err)
			continue
		}
		c.Append("evalsha", sha, 1, k, 0, 60000)
		r.sent[addr] = append(r.sent[addr], k)
	}
	for addr, ks := range r.sent {
		if len(ks) > 0 {
			if err := r.conns[addr].Flush(ctx); err != nil {
				for range ks {
					count(err)
				}
				r.sent[addr] = ks[:0]
			}
		}
	}
	moved := false
	for addr, ks := range r.sent {
		for range ks {
			_, err := r.conns[addr].Read()
			if redis.HasErrorPrefix(err, "MOVED") || redis.HasErrorPrefix(err, "ASK") {
				moved = true
			}
			count(err)
		}
	}
	if moved {
		r.refresh(ctx) //nolint:errcheck // the next round's calls find out
	}
}
