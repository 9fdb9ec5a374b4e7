package redisconn

import (
	"context"
	"fmt"
	"net"
	"sort"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/rediserr"
)

// Masters returns a client per master: every master of a cluster, or the one server.
func Masters(ctx context.Context, c redis.UniversalClient) ([]*redis.Client, error) {
	return nodesOf(ctx, c, false)
}

// AllNodes returns a client per node, replicas included: a cluster's from its slot map, a
// single server's from its INFO replication (the replicas it reports online). release closes
// the clients AllNodes opened for those replicas.
func AllNodes(ctx context.Context, c redis.UniversalClient) (nodes []*redis.Client, release func(), err error) {
	release = func() {}
	single, ok := c.(*redis.Client)
	if !ok {
		nodes, err = nodesOf(ctx, c, true)
		return nodes, release, err
	}
	replicas, err := replicaAddrs(ctx, single)
	if err != nil {
		return nil, release, err
	}
	nodes = []*redis.Client{single}
	var opened []*redis.Client
	for _, addr := range replicas {
		o := *single.Options()
		o.Addr = addr
		if _, ok := failoverOf(single); ok {
			o.Dialer = nil // the failover client's dialer would reach the master, whatever Addr says
		}
		r := redis.NewClient(&o)
		opened = append(opened, r)
		nodes = append(nodes, r)
	}
	return nodes, func() {
		for _, r := range opened {
			r.Close()
		}
	}, nil
}

// replicaAddrs reads the online replicas a server reports (INFO replication's slaveN lines). A
// server that refuses INFO (an ACL without it) is taken to have none.
func replicaAddrs(ctx context.Context, c *redis.Client) ([]string, error) {
	if c.Options().Network == "unix" {
		return nil, nil
	}
	info, err := c.Info(ctx, "replication").Result()
	if err != nil {
		if rediserr.Is(err, rediserr.Permission) {
			return nil, nil
		}
		return nil, err
	}
	var addrs []string
	for _, line := range strings.Split(info, "\n") {
		name, fields, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "slave") || strings.HasPrefix(name, "slave_") {
			continue
		}
		kv := map[string]string{}
		for _, f := range strings.Split(fields, ",") {
			k, v, _ := strings.Cut(f, "=")
			kv[k] = v
		}
		if kv["state"] == "online" && kv["ip"] != "" && kv["port"] != "" {
			addrs = append(addrs, net.JoinHostPort(kv["ip"], kv["port"]))
		}
	}
	sort.Strings(addrs)
	return addrs, nil
}

func nodesOf(ctx context.Context, c redis.UniversalClient, replicas bool) ([]*redis.Client, error) {
	switch cc := c.(type) {
	case *redis.ClusterClient:
		// Fresh slots, so a failover that just happened is reflected.
		cc.ReloadState(ctx)
		var mu sync.Mutex
		var out []*redis.Client
		collect := func(ctx context.Context, n *redis.Client) error {
			mu.Lock()
			out = append(out, n)
			mu.Unlock()
			return nil
		}
		var err error
		if replicas {
			err = cc.ForEachShard(ctx, collect)
		} else {
			err = cc.ForEachMaster(ctx, collect)
		}
		if err != nil {
			return nil, err
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Options().Addr < out[j].Options().Addr })
		return out, nil
	case *redis.Client:
		return []*redis.Client{cc}, nil
	}
	return nil, fmt.Errorf("unsupported client type %T", c)
}

// Role asks a node whether it is a master or a replica (ROLE).
func Role(ctx context.Context, n *redis.Client) (string, error) {
	v, err := n.Do(ctx, "ROLE").Slice()
	if err != nil {
		return "", err
	}
	if len(v) == 0 {
		return "", fmt.Errorf("empty ROLE reply")
	}
	role, _ := v[0].(string)
	if role == "slave" {
		role = "replica"
	}
	return strings.ToLower(role), nil
}

// NodeAddr is a node's printable address: for a client through Sentinels, the master it last
// connected to.
func NodeAddr(n *redis.Client) string {
	if fo, ok := failoverOf(n); ok {
		if m := fo.master.Load(); m != nil {
			return *m
		}
	}
	o := n.Options()
	if o.Network == "unix" {
		return "unix:" + o.Addr
	}
	return o.Addr
}

// GlobEscape quotes the characters SCAN's MATCH gives a meaning (* ? [ ] \), so a pattern
// built from a name matches that name's characters only.
func GlobEscape(s string) string {
	var b strings.Builder
	for _, c := range s {
		if strings.ContainsRune(`*?[]\`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}
