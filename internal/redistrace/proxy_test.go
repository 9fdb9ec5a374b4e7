package redistrace

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/redistest"
)

// startProxyTrace starts a tracer whose proxy forwards to a redis-server of the test's own, and a
// go-redis client of protocol proto through it.
func startProxyTrace(t *testing.T, proto int) (*Tracer, *redis.Client, *redis.Client) {
	t.Helper()
	srv := redistest.Start(t)
	direct := srv.Client(t)
	tr, err := Start(context.Background(), Config{Identities: Identities{RunID: "px9", Keys: 1, Targets: []string{"app"}},
		Proxy: "127.0.0.1:0", Upstream: direct.Options()})
	if err != nil {
		t.Fatal(err)
	}
	tr.Begin(time.Now())
	app := redis.NewClient(&redis.Options{Addr: tr.ProxyAddr(), Protocol: proto})
	t.Cleanup(func() {
		app.Close()
		tr.Stop(context.Background()) //nolint:errcheck // a proxy stops without error
	})
	return tr, app, direct
}

// Through the proxy, under RESP2 and RESP3, the application gets every reply as Redis sent it, and
// the trace keeps each command on the run's identities with the reply that answered it: a
// pipeline's in order, a MULTI/EXEC's from the EXEC's reply, an error as an error; a transaction
// a WATCH aborted ran nothing and shows nothing; other clients' keys are not kept.
func TestProxyForwardsEveryReplyAndSeesEach(t *testing.T) {
	for _, proto := range []int{2, 3} {
		tr, app, direct := startProxyTrace(t, proto)
		ctx := context.Background()
		k := "app:px9.0"
		if err := app.Set(ctx, "someone-else", "x", 0).Err(); err != nil {
			t.Fatal(err)
		}
		if v, err := app.Incr(ctx, k).Result(); v != 1 || err != nil {
			t.Fatalf("RESP%d INCR through the proxy: %d, %v", proto, v, err)
		}
		cmds, err := app.Pipelined(ctx, func(p redis.Pipeliner) error {
			p.Get(ctx, k)
			p.IncrBy(ctx, k, 5)
			p.HGetAll(ctx, "app:px9.0:h")
			p.Do(ctx, "lpush", k, "x") // WRONGTYPE
			return nil
		})
		if len(cmds) != 4 || cmds[0].(*redis.StringCmd).Val() != "1" || cmds[1].(*redis.IntCmd).Val() != 6 || err == nil {
			t.Fatalf("RESP%d pipeline: %v, %v", proto, cmds, err)
		}
		var incr *redis.IntCmd
		if _, err := app.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, k+":w", 0, 0)
			incr = p.Incr(ctx, k)
			return nil
		}); err != nil || incr.Val() != 7 {
			t.Fatalf("RESP%d MULTI/EXEC: %d, %v", proto, incr.Val(), err)
		}
		err = app.Watch(ctx, func(tx *redis.Tx) error {
			tx.Get(ctx, k)
			direct.Incr(ctx, k) // another client writes the key: the EXEC is aborted
			_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error { p.Incr(ctx, k); return nil })
			return err
		}, k)
		if !errors.Is(err, redis.TxFailedErr) {
			t.Fatalf("RESP%d: the WATCHed transaction ran: %v", proto, err)
		}
		big := strings.Repeat("x", 300_000)
		if v, err := app.Set(ctx, k+":big", big, 0).Result(); err != nil || v != "OK" || app.Get(ctx, k+":big").Val() != big {
			t.Fatalf("RESP%d: a large value through the proxy: %v", proto, err)
		}
		if err := tr.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		var seen []string
		for _, c := range tr.cmds {
			if c.Reply.From != FromProxy && c.Name != "WATCH" {
				t.Errorf("RESP%d %s: reply not from the proxy: %+v", proto, c.Name, c.Reply)
			}
			seen = append(seen, c.Name+"="+strings.TrimSpace(string(c.Reply.JSON()))+"/"+c.In)
		}
		want := []string{"INCR=1/", "GET=\"1\"/", "INCRBY=6/", "HGETALL=\"map[]\"/", `LPUSH={"error":"WRONGTYPE Operation against a key holding the wrong kind of value"}/`,
			"SET=\"OK\"/multi", "INCR=7/multi", "WATCH=\"OK\"/", "GET=\"7\"/", "SET=\"OK\"/", "GET=" + `"` + big + `"/`}
		if proto == 2 {
			want[3] = "HGETALL=[]/"
		}
		if strings.Join(seen, " ") != strings.Join(want, " ") {
			t.Errorf("RESP%d: the trace holds\n%v\nwant\n%v", proto, seen, want)
		}
	}
}

// A pipeline far longer than any buffer goes through: the proxy never makes a client that writes
// before it reads wait on its replies.
func TestProxyPassesAPipelineLongerThanItsBuffers(t *testing.T) {
	_, app, _ := startProxyTrace(t, 3)
	ctx := context.Background()
	cmds, err := app.Pipelined(ctx, func(p redis.Pipeliner) error {
		for range 50_000 {
			p.Incr(ctx, "not-ours")
		}
		return nil
	})
	if err != nil || len(cmds) != 50_000 || cmds[len(cmds)-1].(*redis.IntCmd).Val() != 50_000 {
		t.Fatalf("%d replies, %v", len(cmds), err)
	}
}
