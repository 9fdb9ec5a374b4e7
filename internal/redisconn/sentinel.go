package redisconn

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"weak"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/rediserr"
)

// Sentinel: the master is whatever the Sentinels say it is now, as redis-cli users find it with
// SENTINEL get-master-addr-by-name. go-redis's failover client asks them on every new connection
// and drops its connections to the old master when they announce a failover (+switch-master).
//
// The URL form, redis+sentinel://[user:password@]host[:port][,host[:port]...]/MASTER[/DB], with
// rediss+sentinel:// for TLS to both the Sentinels and the data nodes, is the one redis-py's
// users pass around (Redis-Sentinel-Url, RedisVL, Prefect): go-redis has no parser for it
// (its ParseFailoverURL reads redis://host?master_name=...&addr=..., which cannot be told from
// a plain redis:// URL, and takes the data nodes' password as a query parameter, where no
// redaction looks). The credentials in the URL are the data nodes', as with redis://; the
// Sentinels' own come from --sentinel-username and --sentinel-password(-file) only.

// DefaultSentinelPort is where a Sentinel listens when a redis+sentinel:// host names no port.
const DefaultSentinelPort = "26379"

// sentinelSchemes are the URL schemes of a Sentinel target; the value says TLS.
var sentinelSchemes = map[string]bool{"redis+sentinel": false, "rediss+sentinel": true}

// isSentinelURL reports whether a URL names its target through Sentinels.
func isSentinelURL(raw string) bool {
	scheme, _, ok := strings.Cut(raw, "://")
	_, sentinel := sentinelSchemes[strings.ToLower(scheme)]
	return ok && sentinel
}

// sentinelTarget is a Sentinel target read from the flags or a redis+sentinel:// URL.
type sentinelTarget struct {
	addrs              []string
	master             string
	username, password string // the data nodes' credentials from the URL
	db                 int
	dbSet              bool
	tls                bool
}

// parseSentinelURL reads redis+sentinel://[user:password@]host[:port][,...]/MASTER[/DB].
func parseSentinelURL(raw string) (sentinelTarget, error) {
	shown, _, _ := strings.Cut(redactURL(raw), "?") // a query is refused, and may hold a password
	bad := func(format string, args ...any) error {
		return usagef("bad --url %s: %s (expected redis+sentinel://[user:password@]host[:port][,host[:port]...]/MASTER[/db])",
			shown, fmt.Sprintf(format, args...))
	}
	// net/url cannot read a list of hosts ("a:1,b:2" has no valid port): the hosts are split off
	// here, and the credentials and the path read by net/url around one placeholder host.
	scheme, rest, _ := strings.Cut(raw, "://")
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	authority, tail := rest[:end], rest[end:]
	userinfo := ""
	if at := strings.LastIndexByte(authority, '@'); at >= 0 {
		userinfo, authority = authority[:at+1], authority[at+1:]
	}
	encode := "it does not parse; a password holding / ? # @ % or spaces must be percent-encoded (/ is %2F)"
	u, err := url.Parse(scheme + "://" + userinfo + "sentinels" + tail)
	if err != nil {
		if rawPassword(raw) != "" {
			return sentinelTarget{}, bad("%s", encode)
		}
		return sentinelTarget{}, bad("%s", unwrapURLError(err))
	}
	st := sentinelTarget{tls: sentinelSchemes[strings.ToLower(scheme)]}
	if u.User != nil {
		st.username = u.User.Username()
		st.password, _ = u.User.Password()
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return sentinelTarget{}, bad("a Sentinel URL takes no query parameters; use the flags (--sentinel-username, --timeout, ...)")
	}
	for _, h := range strings.Split(authority, ",") {
		if _, _, err := net.SplitHostPort(h); err != nil && h != "" {
			h = net.JoinHostPort(strings.Trim(h, "[]"), DefaultSentinelPort)
		}
		if err := checkSentinelAddr(h); err != nil {
			if strings.Contains(tail, "@") { // an unencoded / in the password cut the URL short
				return sentinelTarget{}, bad("%s", encode)
			}
			return sentinelTarget{}, bad("%s", err.(*UsageError).Msg)
		}
		st.addrs = append(st.addrs, h)
	}
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	switch {
	case parts[0] == "":
		return sentinelTarget{}, bad("no master name: end the URL in /MASTER, the name the Sentinels monitor")
	case len(parts) > 2:
		return sentinelTarget{}, bad("the path is /MASTER or /MASTER/DB")
	case len(parts) == 2:
		db, err := strconv.Atoi(parts[1])
		if err != nil || db < 0 {
			return sentinelTarget{}, bad("database %q is not a number 0 or more", parts[1])
		}
		st.db, st.dbSet = db, true
	}
	st.master = parts[0]
	return st, nil
}

func checkSentinelAddr(a string) error {
	if err := checkAddr(a); err != nil {
		return usagef("%s", strings.Replace(err.(*UsageError).Msg, "--addr", "--sentinel", 1))
	}
	return nil
}

// sentinelOptions builds the failover client's options from the flags and the URL (flags win,
// as with redis://): the data nodes' credentials and database, the Sentinels' own credentials.
func sentinelOptions(o Options, st sentinelTarget) *redis.FailoverOptions {
	fo := &redis.FailoverOptions{
		MasterName: st.master, SentinelAddrs: st.addrs,
		Username: st.username, Password: st.password, DB: st.db,
		SentinelUsername: o.SentinelUsername, SentinelPassword: o.SentinelPassword,
	}
	if o.Master != "" {
		fo.MasterName = o.Master
	}
	if o.Username != "" {
		fo.Username = o.Username
	}
	if o.Password != "" {
		fo.Password = o.Password
	}
	if o.DBSet {
		fo.DB = o.DB
	}
	return fo
}

// failover is what redisconn keeps about a failover client it opened: its options (to open a
// twin with its own pool) and the master it last connected to (what NodeAddr prints).
type failover struct {
	opts   redis.FailoverOptions
	master atomic.Pointer[string]
}

// failovers maps each failover client to its failover, weakly: an entry goes when its client is
// collected.
var failovers sync.Map // weak.Pointer[redis.Client] -> *failover

// newFailoverClient opens a failover client whose dialer records the master it reaches (the
// failover client resolves the address through the Sentinels, then dials it with this dialer).
func newFailoverClient(opts redis.FailoverOptions) *redis.Client {
	fo := &failover{opts: opts}
	dial := opts.Dialer
	if dial == nil {
		d := &net.Dialer{Timeout: opts.DialTimeout}
		dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
			if opts.TLSConfig != nil {
				return (&tls.Dialer{NetDialer: d, Config: opts.TLSConfig}).DialContext(ctx, network, addr)
			}
			return d.DialContext(ctx, network, addr)
		}
	}
	opts.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err == nil {
			fo.master.Store(&addr)
		}
		return conn, err
	}
	c := redis.NewFailoverClient(&opts)
	key := weak.Make(c)
	failovers.Store(key, fo)
	runtime.AddCleanup(c, func(k weak.Pointer[redis.Client]) { failovers.Delete(k) }, key)
	return c
}

// failoverOf returns the failover behind a client redisconn opened through Sentinels.
func failoverOf(c *redis.Client) (*failover, bool) {
	v, ok := failovers.Load(weak.Make(c))
	if !ok {
		return nil, false
	}
	return v.(*failover), true
}

// sentinelClient is a client of one Sentinel with the Sentinels' credentials, TLS and timeouts.
func sentinelClient(fo *redis.FailoverOptions, addr string) *redis.SentinelClient {
	return redis.NewSentinelClient(sentinelNodeOptions(fo, addr))
}

// sentinelNodeOptions are the options of a client of the Sentinel at addr.
func sentinelNodeOptions(fo *redis.FailoverOptions, addr string) *redis.Options {
	so := &redis.Options{
		Addr: addr, Username: fo.SentinelUsername, Password: fo.SentinelPassword, TLSConfig: fo.TLSConfig,
		DialTimeout: fo.DialTimeout, ReadTimeout: fo.ReadTimeout, WriteTimeout: fo.WriteTimeout,
	}
	applyPolicy(so, false)
	return so
}

// askSentinels finds the master's address as the failover client will, one Sentinel after
// another, so that a failure says what is wrong: no Sentinel answers, they refuse the
// credentials, or none monitors a master of that name (and which names they do monitor).
func askSentinels(ctx context.Context, fo *redis.FailoverOptions) (string, error) {
	var unreachable, refused, denied []string
	var lastErr, deniedErr error
	monitored := map[string]bool{}
	for _, addr := range fo.SentinelAddrs {
		sc := sentinelClient(fo, addr)
		master, err := sc.GetMasterAddrByName(ctx, fo.MasterName).Result()
		if err == nil && len(master) == 2 {
			sc.Close()
			return net.JoinHostPort(master[0], master[1]), nil
		}
		switch {
		case errors.Is(err, redis.Nil):
			if masters, err := sc.Masters(ctx).Result(); err == nil {
				for _, m := range masters {
					if fields, ok := m.([]any); ok {
						for i := 0; i+1 < len(fields); i += 2 {
							if k, _ := fields[i].(string); k == "name" {
								name, _ := fields[i+1].(string)
								monitored[name] = true
							}
						}
					}
				}
			}
		case rediserr.IsACLRefusal(err):
			denied = append(denied, addr)
			deniedErr = err
		case rediserr.IsAuthFailure(err):
			refused = append(refused, addr)
			lastErr = err
		case err != nil:
			unreachable = append(unreachable, addr)
			lastErr = err
		}
		sc.Close()
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
	}
	if len(denied) > 0 {
		return "", fmt.Errorf("the Sentinels at %s refused SENTINEL get-master-addr-by-name to this user (%w); docs/acl.md gives the Sentinel user's rule",
			strings.Join(denied, ","), deniedErr)
	}
	if len(refused) > 0 {
		return "", fmt.Errorf("the Sentinels at %s refused the credentials (%w); the Sentinels' own user and password are --sentinel-username and --sentinel-password, apart from the data nodes' --username and --password",
			strings.Join(refused, ","), lastErr)
	}
	if len(unreachable) == len(fo.SentinelAddrs) {
		return "", fmt.Errorf("no Sentinel answers at %s: %w", strings.Join(unreachable, ","), lastErr)
	}
	names := make([]string, 0, len(monitored))
	for n := range monitored {
		names = append(names, n)
	}
	sort.Strings(names)
	they := "they monitor none"
	if len(names) > 0 {
		they = "they monitor " + strings.Join(names, ", ")
	}
	return "", &UsageError{Msg: fmt.Sprintf("no Sentinel knows a master named %q (%s): give the name with --master", fo.MasterName, they)}
}

// resolveSentinel is Resolve for a target reached through Sentinels: --sentinel and --master,
// or a redis+sentinel:// URL.
func resolveSentinel(o Options) (*Config, error) {
	if o.Cluster {
		return nil, usagef("--cluster and --sentinel: a Sentinel target is one master and its replicas, not a cluster; drop one of them")
	}
	if o.DBSet && o.DB < 0 {
		return nil, usagef("--db must be 0 or more, got %d", o.DB)
	}
	if (o.TLSCert == "") != (o.TLSKey == "") {
		return nil, usagef("--tls-cert and --tls-key go together; give both or neither")
	}
	var st sentinelTarget
	if o.URL != "" {
		var err error
		if st, err = parseSentinelURL(o.URL); err != nil {
			return nil, err
		}
	} else {
		for _, a := range o.Sentinels {
			if err := checkSentinelAddr(a); err != nil {
				return nil, err
			}
		}
		st.addrs = o.Sentinels
	}
	if o.Master == "" && st.master == "" {
		return nil, usagef("--sentinel needs --master NAME: the name the Sentinels monitor (SENTINEL masters lists them)")
	}
	fo := sentinelOptions(o, st)
	if st.tls || o.TLS || o.TLSCA != "" || o.TLSCert != "" || o.TLSInsecure {
		conf, err := buildTLS(o)
		if err != nil {
			return nil, err
		}
		fo.TLSConfig = conf
	}
	fo.DialTimeout, fo.ReadTimeout, fo.WriteTimeout = o.Timeout, o.Timeout, o.Timeout
	if o.PoolSize > 0 {
		fo.PoolSize = o.PoolSize
	}
	applyPolicy(fo, o.NoCheckoutProbe)
	return &Config{Failover: fo, Target: Target{Kind: "sentinel", Addr: fo.MasterName + "@" + strings.Join(fo.SentinelAddrs, ",")}}, nil
}

// connectSentinel asks the Sentinels for the master, opens the failover client and pings the
// master through it.
func connectSentinel(ctx context.Context, cfg *Config) (redis.UniversalClient, Target, error) {
	fo := cfg.Failover
	pctx, cancel := context.WithTimeout(ctx, time.Duration(len(fo.SentinelAddrs)+1)*(fo.DialTimeout+fo.ReadTimeout))
	defer cancel()
	master, err := askSentinels(pctx, fo)
	if err != nil {
		var ue *UsageError
		if errors.As(err, &ue) {
			return nil, Target{}, &UsageError{Msg: Scrub(ue.Msg, cfg.secrets...)}
		}
		return nil, Target{}, &ConnectError{Addr: cfg.Target.Addr, Err: contextual(err, pctx), secrets: cfg.secrets}
	}
	c := newFailoverClient(*fo)
	if err := c.Ping(pctx).Err(); err != nil {
		c.Close()
		ce := cfg.connectError(pctx, err).(*ConnectError)
		ce.Addr = fmt.Sprintf("master %s at %s", fo.MasterName, master)
		return nil, Target{}, ce
	}
	return c, cfg.Target, nil
}
