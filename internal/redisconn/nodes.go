package redisconn

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// Masters returns a client per master: every master of a cluster, or the one server.
func Masters(ctx context.Context, c redis.UniversalClient) ([]*redis.Client, error) {
	return nodes(ctx, c, false)
}

// AllNodes returns a client per node, replicas included.
func AllNodes(ctx context.Context, c redis.UniversalClient) ([]*redis.Client, error) {
	return nodes(ctx, c, true)
}

func nodes(ctx context.Context, c redis.UniversalClient, replicas bool) ([]*redis.Client, error) {
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

// NodeAddr is a node's printable address.
func NodeAddr(n *redis.Client) string {
	o := n.Options()
	if o.Network == "unix" {
		return "unix:" + o.Addr
	}
	return o.Addr
}
