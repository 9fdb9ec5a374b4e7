package redisconn

import (
	"net"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
)

// Shared opens a rueidis client of client's target when it is a cluster, set up from the same
// options (seeds, TLS, the ACL user, the client name, the protocol, the dial and write
// timeouts): the load's fast path there (limiter.Config.Shared), where rueidis routes each call
// to its key's master and follows MOVED and ASK. The duration is go-redis's read timeout, each
// round's bound. Any other client gives nil: a single node has package wire, and a master
// through Sentinels keeps go-redis, whose Sentinel commands are the ones docs/acl.md grants
// (rueidis's Sentinel client asks the Sentinels for PING, more SENTINEL subcommands and
// UNSUBSCRIBE besides).
func Shared(client redis.UniversalClient) (rueidis.Client, time.Duration, error) {
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
	read := o.ReadTimeout
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
