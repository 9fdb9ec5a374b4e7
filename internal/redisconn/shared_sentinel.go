package redisconn

import (
	"context"
	"crypto/tls"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
)

// following is the load's rueidis client of a master found through Sentinels: a single client
// whose every connection is dialled to the master the Sentinels name then (SENTINEL
// get-master-addr-by-name, as go-redis's failover client asks), and which follows a failover
// as that client does: subscribed to +switch-master, it opens a client of the new master the
// moment the Sentinels announce it and closes the old one, so that no decision goes on being
// made on the old master (its calls in flight fail, as the failover client's do when it drops
// its pool). It asks the Sentinels nothing beyond what docs/acl.md's Sentinel rule grants.
type following struct {
	opts   redis.FailoverOptions
	cur    atomic.Pointer[rueidis.Client]
	mu     sync.Mutex // one swap at a time, none after Close
	closed bool
	stop   context.CancelFunc
}

// newFollowing opens the client of the master the Sentinels of opts name, and starts following
// their +switch-master announcements.
func newFollowing(opts redis.FailoverOptions) (*following, error) {
	f := &following{opts: opts}
	c, err := f.open()
	if err != nil {
		return nil, err
	}
	f.cur.Store(&c)
	ctx, cancel := context.WithCancel(context.Background())
	f.stop = cancel
	go f.follow(ctx)
	return f, nil
}

// open opens a single client (no CLUSTER SLOTS probe) whose dials ask the Sentinels where the
// master is, set up from the failover client's options as Shared sets up a cluster's.
func (f *following) open() (rueidis.Client, error) {
	o := f.opts
	return rueidis.NewClient(rueidis.ClientOption{
		InitAddress: []string{o.MasterName}, ForceSingleClient: true,
		Username: o.Username, Password: o.Password, SelectDB: o.DB, ClientName: o.ClientName,
		TLSConfig: o.TLSConfig, Dialer: net.Dialer{Timeout: o.DialTimeout}, ConnWriteTimeout: o.WriteTimeout,
		// As the failover client is set up: RESP2, no CLIENT SETINFO.
		AlwaysRESP2: o.Protocol == 2, ClientSetInfo: rueidis.DisableClientSetInfo,
		DisableCache: true, DisableRetry: true,
		DialCtxFn: func(ctx context.Context, _ string, d *net.Dialer, conf *tls.Config) (net.Conn, error) {
			master, err := askSentinels(ctx, &f.opts)
			if err != nil {
				return nil, err
			}
			if conf != nil {
				return (&tls.Dialer{NetDialer: d, Config: conf}).DialContext(ctx, "tcp", master)
			}
			return d.DialContext(ctx, "tcp", master)
		},
	})
}

// follow listens for +switch-master on the first Sentinel that takes the subscription (another
// after one fails) until ctx ends, and swaps the client when the master named is this one's.
func (f *following) follow(ctx context.Context) {
	for ctx.Err() == nil {
		for _, addr := range f.opts.SentinelAddrs {
			sc := sentinelClient(&f.opts, addr)
			ps := sc.Subscribe(ctx, "+switch-master")
			if _, err := ps.Receive(ctx); err == nil {
				done := context.AfterFunc(ctx, func() { ps.Close() })
				for msg := range ps.Channel() {
					if name, _, _ := strings.Cut(msg.Payload, " "); name == f.opts.MasterName {
						f.swap()
					}
				}
				done()
			}
			ps.Close()
			sc.Close()
			if ctx.Err() != nil {
				return
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// swap replaces the client by one of the master the Sentinels name now and closes the old one;
// if the new one cannot be had, the old one stays (its next dial asks the Sentinels again).
func (f *following) swap() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return
	}
	c, err := f.open()
	if err != nil {
		return
	}
	old := f.cur.Swap(&c)
	(*old).Close()
}

func (f *following) current() rueidis.Client { return *f.cur.Load() }

// B returns a command builder.
func (f *following) B() rueidis.Builder { return f.current().B() }

// DoMulti sends multi to the current master in one pipeline.
func (f *following) DoMulti(ctx context.Context, multi ...rueidis.Completed) []rueidis.RedisResult {
	return f.current().DoMulti(ctx, multi...)
}

// Close stops following and closes the client.
func (f *following) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return
	}
	f.closed = true
	f.stop()
	f.current().Close()
}
