package redisconn

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/redistest"
)

const (
	nodePassword     = "node-pw-never-printed"
	sentinelPassword = "sentinel-pw-never-printed"
)

// Through real Sentinels (three redis-server --sentinel processes, a master and a replica):
// limitctl reaches the master the Sentinels name, by flags or by URL, reports the node it
// reached, and follows a SENTINEL FAILOVER; every failure is one line without a password.
func TestSentinelFindsAndFollowsTheMaster(t *testing.T) {
	if testing.Short() {
		t.Skip("slow (Sentinels, a failover): make test runs it, -short skips it")
	}
	s := redistest.StartSentinel(t, redistest.SentinelOptions{Password: nodePassword, SentinelPassword: sentinelPassword})
	ctx := context.Background()
	flags := Options{Sentinels: s.Addrs(), Master: s.Name, Password: nodePassword, SentinelPassword: sentinelPassword, Timeout: 2 * time.Second}
	url := Options{URL: "redis+sentinel://:" + nodePassword + "@" + strings.Join(s.Addrs(), ",") + "/" + s.Name + "/1",
		SentinelPassword: sentinelPassword, Timeout: 2 * time.Second}
	noEnv := func(string) string { return "" }

	c, target, err := Open(ctx, flags, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if want := (Target{Kind: "sentinel", Addr: s.Name + "@" + strings.Join(s.Addrs(), ",")}); target != want {
		t.Errorf("target %+v, want %+v", target, want)
	}
	if _, ok := DirectOptions(c); ok {
		t.Error("a client through Sentinels has direct options: a connection of its own would keep writing to a replaced master")
	}
	if _, ok := DirectOptions(Twin(c, 2)); ok {
		t.Error("the twin of a client through Sentinels has direct options")
	}
	masters, err := Masters(ctx, c)
	if err != nil || len(masters) != 1 || NodeAddr(masters[0]) != s.Nodes[0].Addr {
		t.Fatalf("masters %v (%v), want the one master at %s", masters, err, s.Nodes[0].Addr)
	}
	nodes, release, err := AllNodes(ctx, c)
	if err != nil || len(nodes) != 2 || NodeAddr(nodes[1]) != s.Nodes[1].Addr {
		t.Fatalf("all nodes %v (%v), want the master and the replica %s", nodes, err, s.Nodes[1].Addr)
	}
	if role, err := Role(ctx, nodes[1]); err != nil || role != "replica" {
		t.Errorf("the replica's client reaches a %q (%v): it must not dial the master", role, err)
	}
	release()

	uc, _, err := Open(ctx, url, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	defer uc.Close()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(uc.Set(ctx, "via-url", "db1", 0).Err())
	if n, _ := s.NodeClient(t, s.Nodes[0].Addr).Exists(ctx, "via-url").Result(); n != 0 {
		t.Errorf("the URL's /1 went to database 0")
	}
	twin := Twin(c, 4)
	defer twin.Close()
	must(twin.Set(ctx, "k", "before", 0).Err())

	promoted := s.Failover(t)
	for _, client := range []redis.UniversalClient{c, twin} {
		// The first command after the switch may fail on a connection the old master dropped;
		// go-redis then asks the Sentinels again.
		deadline := time.Now().Add(10 * time.Second)
		for client.Set(ctx, "k", "after", 0).Err() != nil {
			if time.Now().After(deadline) {
				t.Fatalf("no write reaches the new master 10s after the failover")
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	if v, _ := s.NodeClient(t, promoted).Get(ctx, "k").Result(); v != "after" {
		t.Errorf("the write after the failover did not reach the new master %s (GET k = %q)", promoted, v)
	}
	masters, err = Masters(ctx, c)
	if err != nil || NodeAddr(masters[0]) != promoted {
		t.Errorf("after the failover the node is %s (%v), want %s", NodeAddr(masters[0]), err, promoted)
	}
}

func TestSentinelFailuresSayWhatIsWrong(t *testing.T) {
	if testing.Short() {
		t.Skip("slow (Sentinels): make test runs it, -short skips it")
	}
	s := redistest.StartSentinel(t, redistest.SentinelOptions{Password: nodePassword, SentinelPassword: sentinelPassword})
	ctx := context.Background()
	noEnv := func(string) string { return "" }
	good := Options{Sentinels: s.Addrs(), Master: s.Name, Password: nodePassword, SentinelPassword: sentinelPassword, Timeout: time.Second}
	for _, tc := range []struct {
		name  string
		opts  func(o Options) Options
		usage bool
		want  string
	}{
		{"unknown master name", func(o Options) Options { o.Master = "nosuch"; return o }, true,
			`no Sentinel knows a master named "nosuch" (they monitor ` + s.Name + `)`},
		{"no sentinel password", func(o Options) Options { o.SentinelPassword = ""; return o }, false, "--sentinel-password"},
		{"wrong sentinel password", func(o Options) Options { o.SentinelPassword = "not-" + sentinelPassword; return o }, false, "refused the credentials"},
		{"wrong data password", func(o Options) Options { o.Password = "not-" + nodePassword; return o }, false, "cannot connect to master " + s.Name + " at " + s.Nodes[0].Addr},
		{"no sentinel answers", func(o Options) Options {
			o.Sentinels = []string{"127.0.0.1:" + strconv.Itoa(redistest.FreePort(t))}
			return o
		}, false, "no Sentinel answers at"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.opts(good)
			_, _, err := Open(ctx, o, noEnv)
			if err == nil {
				t.Fatal("connected")
			}
			var ue *UsageError
			if errors.As(err, &ue) != tc.usage || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %q (usage %v), want one mentioning %q (usage %v)", err, errors.As(err, &ue), tc.want, tc.usage)
			}
			for _, p := range []string{nodePassword, sentinelPassword} {
				if strings.Contains(err.Error(), p) {
					t.Errorf("err %q holds a password", err)
				}
			}
		})
	}
}

// A query is refused whole, and never printed: go-redis's failover URLs carry the data nodes'
// password there (?password=...), where no credential redaction looks.
func TestSentinelURLQueryIsNotPrinted(t *testing.T) {
	_, err := Resolve(Options{URL: "redis+sentinel://s1:26379/m?password=query-secret-7"}, func(string) string { return "" })
	if err == nil || !strings.Contains(err.Error(), "no query parameters") || strings.Contains(err.Error(), "query-secret-7") {
		t.Errorf("err %v, want the query refused without printing it", err)
	}
}
