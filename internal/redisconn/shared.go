package redisconn

import (
	"net"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
)

// Shared opens a rueidis client of client's target when it is a cluster or a master through
// Sentinels, set up from the same options (seeds or Sentinels, TLS, the ACL user, the client
// name, the protocol, the dial and write timeouts): the load's fast path there (limiter.Config.Shared), where
// rueidis routes each call to its key's master and follows MOVED, ASK and failovers. The
// duration is go-redis's read timeout, each round's bound. A single node (package wire serves
// it) or another client gives nil.
func Shared(client redis.UniversalClient) (rueidis.Client, time.Duration, error) {
	var opt rueidis.ClientOption
	var read time.Duration
	switch c := client.(type) {
	case *redis.ClusterClient:
		o := c.Options()
		opt = rueidis.ClientOption{
			InitAddress: o.Addrs, Username: o.Username, Password: o.Password, ClientName: o.ClientName,
			TLSConfig: o.TLSConfig, Dialer: net.Dialer{Timeout: o.DialTimeout}, ConnWriteTimeout: o.WriteTimeout,
			AlwaysRESP2: o.Protocol == 2,
		}
		read = o.ReadTimeout
	case *redis.Client:
		fo, ok := failoverOf(c)
		if !ok {
			return nil, 0, nil
		}
		o := fo.opts
		opt = rueidis.ClientOption{
			InitAddress: o.SentinelAddrs, Username: o.Username, Password: o.Password, ClientName: o.ClientName,
			SelectDB: o.DB, TLSConfig: o.TLSConfig, Dialer: net.Dialer{Timeout: o.DialTimeout},
			ConnWriteTimeout: o.WriteTimeout, AlwaysRESP2: o.Protocol == 2,
			Sentinel: rueidis.SentinelOption{
				MasterSet: o.MasterName, Username: o.SentinelUsername, Password: o.SentinelPassword,
				TLSConfig: o.TLSConfig, Dialer: net.Dialer{Timeout: o.DialTimeout},
			},
		}
		read = o.ReadTimeout
	default:
		return nil, 0, nil
	}
	// No client-side cache (the load reads nothing twice) and no retry of a call that may have
	// run: a call's outcome is what the server answered it, as on every other path.
	opt.DisableCache, opt.DisableRetry, opt.ShuffleInit = true, true, true
	if read == 0 {
		read = 3 * time.Second // go-redis's default
	}
	if read < 0 {
		read = 0
	}
	rc, err := rueidis.NewClient(opt)
	return rc, read, err
}
