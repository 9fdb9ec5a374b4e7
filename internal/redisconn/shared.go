package redisconn

import (
	"context"
	"net"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
)

// Shared opens a rueidis client of client's target when it is a cluster, set up from the same
// options (seeds, TLS, the ACL user, the client name, the protocol, the dial and write
// timeouts): the load's fast path there (limiter.Config.Shared), where rueidis routes each call
// to its key's master and follows MOVED and ASK; or when it is a master through Sentinels, a
// single client of the master they name that follows their failovers (following: rueidis's own
// Sentinel client asks them for PING, more SENTINEL subcommands and UNSUBSCRIBE, beyond what
// docs/acl.md grants). The duration is go-redis's read timeout, each round's bound. Any other
// client gives nil: a single node has package wire.
func Shared(client redis.UniversalClient) (SharedClient, time.Duration, error) {
	if single, ok := client.(*redis.Client); ok {
		fo, ok := failoverOf(single)
		if !ok {
			return nil, 0, nil
		}
		f, err := newFollowing(fo.opts)
		if err != nil {
			return nil, 0, err
		}
		return f, roundTimeout(fo.opts.ReadTimeout), nil
	}
	c, ok := client.(*redis.ClusterClient)
	if !ok {
		return nil, 0, nil
	}
	o := c.Options()
	opt := rueidis.ClientOption{
		InitAddress: o.Addrs, Username: o.Username, Password: o.Password, ClientName: o.ClientName,
		TLSConfig: o.TLSConfig, Dialer: net.Dialer{Timeout: o.DialTimeout}, ConnWriteTimeout: o.WriteTimeout,
		AlwaysRESP2: o.Protocol == 2,
	}
	// No client-side cache (the load reads nothing twice) and no retry of a call that may have
	// run: a call's outcome is what the server answered it, as on every other path.
	opt.DisableCache, opt.DisableRetry, opt.ShuffleInit = true, true, true
	rc, err := rueidis.NewClient(opt)
	if err != nil {
		return nil, 0, err
	}
	return rc, roundTimeout(o.ReadTimeout), nil
}

// SharedClient is the load's rueidis client as Shared gives it: the command builder, one
// pipeline of commands, and Close. Nothing else, so that no call reaches a master the
// Sentinels have replaced.
type SharedClient interface {
	B() rueidis.Builder
	DoMulti(ctx context.Context, multi ...rueidis.Completed) []rueidis.RedisResult
	Close()
}

// roundTimeout is a round's bound from go-redis's read timeout: its default for 0, none for -1.
func roundTimeout(read time.Duration) time.Duration {
	if read == 0 {
		return 3 * time.Second // go-redis's default
	}
	return max(read, 0)
}
