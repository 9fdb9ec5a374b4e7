// Package redisconn is the one place that turns connection flags, URLs and environment into a
// go-redis client: a single node, a cluster, a master found through Sentinels, TLS and ACL users alike.
package redisconn

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/exitcode"
	"github.com/limitctl/limitctl/internal/rediserr"
)

// DefaultAddr is where a command connects with no target given, like redis-cli.
const DefaultAddr = "127.0.0.1:6379"

// DefaultTimeout bounds connecting and every command.
const DefaultTimeout = 5 * time.Second

// Options are the global connection flags.
type Options struct {
	URL          string
	Addrs        []string
	Cluster      bool
	Username     string
	Password     string
	PasswordFile string
	DB           int
	DBSet        bool // --db was given explicitly
	TLS          bool
	TLSCA        string
	TLSCert      string
	TLSKey       string
	TLSInsecure  bool
	Timeout      time.Duration
	// Sentinels are --sentinel host:port: the master is found through them (with Master, the
	// name they monitor); SentinelUsername and SentinelPassword(File) are the Sentinels' own
	// credentials, apart from the data nodes' Username and Password.
	Sentinels            []string
	Master               string
	SentinelUsername     string
	SentinelPassword     string
	SentinelPasswordFile string
	// PoolSize overrides go-redis's default pool (10 per CPU); the hammer sizes it to its workers.
	PoolSize int
	// NoCheckoutProbe skips go-redis's health probe of a pooled connection at every checkout
	// (a MSG_PEEK recvfrom: one syscall per command). The hammer keeps every connection busy,
	// so a dead one shows up at once as a counted error; the probe only costs throughput.
	NoCheckoutProbe bool
}

// HasTarget reports whether the options name a server; without one the default applies.
func (o Options) HasTarget() bool { return o.URL != "" || len(o.Addrs) > 0 || len(o.Sentinels) > 0 }

// Target describes what a client is connected to, safe to print: never a password.
type Target struct {
	// Kind is redis, cluster or sentinel (and redis-server, memory for the hammer's embedded
	// servers); a sentinel target's Addr is MASTER@sentinel,sentinel...
	Kind string `json:"kind"`
	Addr string `json:"addr"`
}

// UsageError is a problem with the flags themselves: the command exits 2 with a hint. It is
// the one usage-error type every command shares.
type UsageError = exitcode.UsageError

func usagef(format string, args ...any) error { return &UsageError{Msg: fmt.Sprintf(format, args...)} }

// ConnectError says which server could not be reached, with the password removed. When that
// was only the default address, it says so and how to name another: a newcomer's first error.
type ConnectError struct {
	Addr    string
	Default bool // no --url, --addr or REDIS_URL named the target
	Err     error
	secrets []string
}

func (e *ConnectError) Error() string {
	addr := e.Addr
	if e.Default {
		addr += " (the default: no --addr host:port, --url redis://... or REDIS_URL was given)"
	}
	return Scrub(fmt.Sprintf("cannot connect to %s: %s", addr, e.Err.Error()), e.secrets...)
}

func (e *ConnectError) Unwrap() error { return e.Err }

// Config is the resolved form of Options: the client options and a printable target.
type Config struct {
	Cluster bool
	Single  *redis.Options
	Multi   *redis.ClusterOptions
	// Failover is set for a target reached through Sentinels (Single and Multi are nil).
	Failover *redis.FailoverOptions
	Target   Target
	// secrets are the passwords the options hold, scrubbed from every error.
	secrets []string
	// defaultTarget: nothing named the target, so it is 127.0.0.1:6379.
	defaultTarget bool
}

// Resolve validates the options and builds client options without touching the network.
// getenv supplies REDIS_URL and REDISCLI_AUTH (os.Getenv in the program, a map in tests).
// Its errors are *UsageError and never hold a password.
func Resolve(o Options, getenv func(string) string) (*Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	secrets := Secrets(o, getenv)
	cfg, err := resolve(o, getenv)
	if err != nil {
		var ue *UsageError
		if !errors.As(err, &ue) {
			ue = &UsageError{Msg: err.Error()}
		}
		return nil, &UsageError{Msg: scrubSecrets(ue.Msg, secrets)}
	}
	cfg.secrets = secrets
	return cfg, nil
}

func resolve(o Options, getenv func(string) string) (*Config, error) {
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Timeout < 0 {
		return nil, usagef("--timeout must be positive, got %s", o.Timeout)
	}
	if o.URL != "" && len(o.Addrs) > 0 {
		return nil, usagef("--url and --addr name the target twice; give one of them")
	}
	if len(o.Sentinels) > 0 && (o.URL != "" || len(o.Addrs) > 0) {
		return nil, usagef("--sentinel and --%s name the target twice; with --sentinel the Sentinels name the master", map[bool]string{true: "url", false: "addr"}[o.URL != ""])
	}
	if o.URL == "" && len(o.Addrs) == 0 && len(o.Sentinels) == 0 {
		o.URL = getenv("REDIS_URL")
	}
	named := o.URL != "" || len(o.Addrs) > 0 || len(o.Sentinels) > 0
	if o.Password != "" && o.PasswordFile != "" {
		return nil, usagef("--password and --password-file both given; give one of them")
	}
	if o.PasswordFile != "" {
		b, err := os.ReadFile(o.PasswordFile)
		if err != nil {
			return nil, usagef("cannot read --password-file %s: %v", o.PasswordFile, unwrapPathError(err))
		}
		o.Password = strings.TrimRight(string(b), "\r\n")
	}
	if o.Password == "" {
		o.Password = getenv("REDISCLI_AUTH")
	}
	if o.SentinelPassword != "" && o.SentinelPasswordFile != "" {
		return nil, usagef("--sentinel-password and --sentinel-password-file both given; give one of them")
	}
	if o.SentinelPasswordFile != "" {
		b, err := os.ReadFile(o.SentinelPasswordFile)
		if err != nil {
			return nil, usagef("cannot read --sentinel-password-file %s: %v", o.SentinelPasswordFile, unwrapPathError(err))
		}
		o.SentinelPassword = strings.TrimRight(string(b), "\r\n")
	}
	if len(o.Sentinels) > 0 || isSentinelURL(o.URL) {
		return resolveSentinel(o)
	}
	if o.Master != "" || o.SentinelUsername != "" || o.SentinelPassword != "" {
		return nil, usagef("--master and the --sentinel-* credentials need --sentinel host:port (or a redis+sentinel:// URL): the Sentinels that know the master")
	}
	if o.DBSet && o.DB < 0 {
		return nil, usagef("--db must be 0 or more, got %d", o.DB)
	}
	if (o.TLSCert == "") != (o.TLSKey == "") {
		return nil, usagef("--tls-cert and --tls-key go together; give both or neither")
	}
	cluster := o.Cluster || len(o.Addrs) > 1
	if cluster && o.DBSet && o.DB != 0 {
		return nil, usagef("--db %d cannot be used with a cluster (a cluster has only database 0); drop --db or --cluster", o.DB)
	}
	for _, a := range o.Addrs {
		if err := checkAddr(a); err != nil {
			return nil, err
		}
	}

	var tlsConf *tls.Config
	wantTLS := o.TLS || o.TLSCA != "" || o.TLSCert != "" || o.TLSInsecure
	if o.URL != "" {
		u, err := url.Parse(o.URL)
		if err != nil {
			detail := unwrapURLError(err)
			if rawPassword(o.URL) != "" {
				// net/url's detail may quote part of a malformed password ("invalid port \":pa\"").
				detail = "it does not parse; a password holding / ? # @ % or spaces must be percent-encoded (/ is %2F)"
			}
			return nil, usagef("bad --url %s: %s (expected redis://host:port[/db], rediss://... or unix:///path, with user:password@ before the host when needed)", redactURL(o.URL), detail)
		}
		switch u.Scheme {
		case "redis", "unix":
		case "rediss":
			wantTLS = true
		default:
			return nil, usagef("bad --url %s: scheme %q is not redis://, rediss:// or unix://", redactURL(o.URL), u.Scheme)
		}
		if u.Query().Has("skip_verify") {
			// go-redis would honour it; verification is only ever skipped by the explicit flag.
			return nil, usagef("bad --url %s: skip_verify is not accepted; pass --tls-insecure to skip certificate verification", redactURL(o.URL))
		}
		if u.Scheme == "unix" && cluster {
			return nil, usagef("a unix socket cannot be a cluster; drop --cluster")
		}
		if p := u.Port(); u.Scheme != "unix" && p != "" {
			if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
				return nil, usagef("bad --url %s: port must be 1-65535", redactURL(o.URL))
			}
		}
	}
	if wantTLS {
		var err error
		if tlsConf, err = buildTLS(o); err != nil {
			return nil, err
		}
	}

	cfg := &Config{Cluster: cluster, defaultTarget: !named}
	if cluster {
		co, err := clusterOptions(o)
		if err != nil {
			return nil, err
		}
		if tlsConf != nil {
			co.TLSConfig = tlsConf
		}
		co.DialTimeout, co.ReadTimeout, co.WriteTimeout = o.Timeout, o.Timeout, o.Timeout
		if o.PoolSize > 0 {
			co.PoolSize = o.PoolSize
		}
		applyPolicy(co, o.NoCheckoutProbe)
		cfg.Multi = co
		cfg.Target = Target{Kind: "cluster", Addr: strings.Join(co.Addrs, ",")}
		return cfg, nil
	}
	so, err := singleOptions(o)
	if err != nil {
		return nil, err
	}
	if tlsConf != nil {
		if so.Network == "unix" {
			return nil, usagef("TLS over a unix socket is not supported; use rediss://host:port")
		}
		so.TLSConfig = tlsConf
	}
	so.DialTimeout, so.ReadTimeout, so.WriteTimeout = o.Timeout, o.Timeout, o.Timeout
	if o.PoolSize > 0 {
		so.PoolSize = o.PoolSize
	}
	applyPolicy(so, o.NoCheckoutProbe)
	cfg.Single = so
	cfg.Target = Target{Kind: "redis", Addr: so.Addr}
	if so.Network == "unix" {
		cfg.Target.Addr = "unix:" + so.Addr
	}
	return cfg, nil
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func unwrapURLError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

func checkAddr(a string) error {
	host, port, err := net.SplitHostPort(a)
	if err != nil {
		return usagef("bad --addr %q: want host:port", a)
	}
	if host == "" {
		return usagef("bad --addr %q: host is empty", a)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return usagef("bad --addr %q: port must be 1-65535", a)
	}
	return nil
}

func singleOptions(o Options) (*redis.Options, error) {
	so := &redis.Options{Addr: DefaultAddr}
	if o.URL != "" {
		parsed, err := redis.ParseURL(o.URL)
		if err != nil {
			return nil, usagef("bad --url %s: %s", redactURL(o.URL), err.Error())
		}
		so = parsed
		// ParseURL builds its own TLS config for rediss://; ours (with --tls-ca etc.) replaces it.
		so.TLSConfig = nil
	} else if len(o.Addrs) == 1 {
		so.Addr = o.Addrs[0]
	}
	if o.Username != "" {
		so.Username = o.Username
	}
	if o.Password != "" {
		so.Password = o.Password
	}
	if o.DBSet {
		so.DB = o.DB
	}
	return so, nil
}

func clusterOptions(o Options) (*redis.ClusterOptions, error) {
	co := &redis.ClusterOptions{Addrs: o.Addrs}
	if o.URL != "" {
		parsed, err := redis.ParseClusterURL(o.URL)
		if err != nil {
			return nil, usagef("bad --url %s: %s", redactURL(o.URL), err.Error())
		}
		co = parsed
		co.TLSConfig = nil
	}
	if len(co.Addrs) == 0 {
		co.Addrs = []string{DefaultAddr}
	}
	if o.Username != "" {
		co.Username = o.Username
	}
	if o.Password != "" {
		co.Password = o.Password
	}
	return co, nil
}

func buildTLS(o Options) (*tls.Config, error) {
	conf := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: o.TLSInsecure} //nolint:gosec // only with the explicit --tls-insecure flag
	if o.TLSCA != "" {
		pem, err := os.ReadFile(o.TLSCA)
		if err != nil {
			return nil, usagef("cannot read --tls-ca %s: %v", o.TLSCA, unwrapPathError(err))
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, usagef("--tls-ca %s holds no PEM certificate", o.TLSCA)
		}
		conf.RootCAs = pool
	}
	if o.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(o.TLSCert, o.TLSKey)
		if err != nil {
			return nil, usagef("cannot load --tls-cert/--tls-key: %v", err)
		}
		conf.Certificates = []tls.Certificate{cert}
	}
	return conf, nil
}

// Open resolves the options, connects, and checks the server answers within the timeout.
// A single address that turns out to be a cluster node is opened as a cluster, as redis-cli -c would.
func Open(ctx context.Context, o Options, getenv func(string) string) (redis.UniversalClient, Target, error) {
	cfg, err := Resolve(o, getenv)
	if err != nil {
		return nil, Target{}, err
	}
	return Connect(ctx, cfg)
}

// Connect opens a client for a resolved configuration and pings it.
func Connect(ctx context.Context, cfg *Config) (redis.UniversalClient, Target, error) {
	if cfg.Failover != nil {
		return connectSentinel(ctx, cfg)
	}
	if cfg.Cluster {
		c := redis.NewClusterClient(cfg.Multi)
		// Follows MOVED and ASK, but never re-sends a decision after a timeout or EOF (sentonce.go).
		c.AddHook(sentOnce{})
		pctx, cancel := context.WithTimeout(ctx, cfg.Multi.DialTimeout+cfg.Multi.ReadTimeout)
		defer cancel()
		err := c.ForEachShard(pctx, func(ctx context.Context, shard *redis.Client) error {
			return shard.Ping(ctx).Err()
		})
		if err != nil {
			c.Close()
			return nil, Target{}, cfg.connectError(pctx, err)
		}
		return c, cfg.Target, nil
	}
	c := redis.NewClient(cfg.Single)
	pctx, cancel := context.WithTimeout(ctx, cfg.Single.DialTimeout+cfg.Single.ReadTimeout)
	defer cancel()
	if err := c.Ping(pctx).Err(); err != nil {
		c.Close()
		return nil, Target{}, cfg.connectError(pctx, err)
	}
	if cfg.Single.Network != "unix" && isClusterNode(pctx, c) {
		c.Close()
		if cfg.Single.DB != 0 {
			return nil, Target{}, usagef("%s is a cluster node; a cluster has only database 0, drop --db", cfg.Target.Addr)
		}
		return Connect(ctx, &Config{Cluster: true, Multi: clusterBehind(cfg.Single), Target: Target{Kind: "cluster", Addr: cfg.Single.Addr}, secrets: cfg.secrets})
	}
	return c, cfg.Target, nil
}

// clusterBehind is the cluster a single node's options reach when the node is one of a
// cluster's: the same credentials, TLS, timeouts, pool and dialer.
func clusterBehind(so *redis.Options) *redis.ClusterOptions {
	co := &redis.ClusterOptions{
		Addrs: []string{so.Addr}, Username: so.Username, Password: so.Password,
		TLSConfig: so.TLSConfig, DialTimeout: so.DialTimeout, ReadTimeout: so.ReadTimeout,
		WriteTimeout: so.WriteTimeout, PoolSize: so.PoolSize,
	}
	applyPolicy(co, false)
	co.Dialer = so.Dialer // the hammer's (no checkout probe) carries over to every node
	return co
}

// applyPolicy sets how every client limitctl opens talks to Redis (opts is a *redis.Options,
// *redis.ClusterOptions or *redis.FailoverOptions: a node, a cluster, a master through
// Sentinels, a Sentinel itself):
//   - no retry (MaxRetries -1, which every kind of options reads as none; a cluster's 0 means
//     none only through go-redis rewriting it to -1, a single node's 0 means three): a limiter
//     decision re-sent behind the caller's back, after a timeout or a dropped connection, would
//     count one request twice if the first reached Redis;
//   - RESP2 and no CLIENT SETINFO (Protocol 2, DisableIdentity): the fewest commands an ACL user
//     must be allowed (no HELLO 3, no CLIENT); docs/acl.md tests the rules;
//   - one dial attempt (DialerRetries 1): a target that does not answer says so within the
//     timeout, not after go-redis's default five attempts;
//   - unprobed, the dialer of unprobedConn: the hammer's load, whose connections go back to the
//     pool thousands of times a second, skips go-redis's health check at each checkout.
func applyPolicy(opts any, unprobed bool) {
	const noRetries, resp2, oneDial = -1, 2, 1
	switch o := opts.(type) {
	case *redis.Options:
		o.MaxRetries, o.Protocol, o.DisableIdentity, o.DialerRetries = noRetries, resp2, true, oneDial
		if unprobed {
			o.Dialer = unprobedDialer(o.TLSConfig, o.DialTimeout)
		}
	case *redis.ClusterOptions:
		o.MaxRetries, o.Protocol, o.DisableIdentity, o.DialerRetries = noRetries, resp2, true, oneDial
		if unprobed {
			o.Dialer = unprobedDialer(o.TLSConfig, o.DialTimeout)
		}
	case *redis.FailoverOptions:
		o.MaxRetries, o.Protocol, o.DisableIdentity, o.DialerRetries = noRetries, resp2, true, oneDial
		if unprobed {
			o.Dialer = unprobedDialer(o.TLSConfig, o.DialTimeout)
		}
	default:
		panic(fmt.Sprintf("redisconn: no client policy for %T", opts))
	}
}

func isClusterNode(ctx context.Context, c *redis.Client) bool {
	// HELLO needs no ACL permission and names the server's mode; INFO is for servers before 6.
	if reply, err := c.Do(ctx, "HELLO", "2").Slice(); err == nil {
		for i := 0; i+1 < len(reply); i += 2 {
			if key, _ := reply[i].(string); key == "mode" {
				mode, _ := reply[i+1].(string)
				return mode == "cluster"
			}
		}
	}
	info, err := c.Info(ctx, "cluster").Result()
	if err != nil {
		return false
	}
	return strings.Contains(info, "cluster_enabled:1")
}

// connectError says why the first contact failed, with a hint for the TLS mistakes people
// make, told apart by the errors' types (crypto/tls, crypto/x509) and the alert the server sent.
func (cfg *Config) connectError(ctx context.Context, err error) error {
	tlsConf := cfg.tlsConfig()
	tlsOn, hasCert := tlsConf != nil, tlsConf != nil && len(tlsConf.Certificates) > 0
	// Under TLS 1.3 a server that refuses the client's certificate says so after the handshake;
	// the client often sees only the connection dropped under its first command.
	dropped := rediserr.Dropped(err)
	alert, alerted := tlsAlert(err)
	var unknownCA x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	var notTLS tls.RecordHeaderError
	hint := ""
	switch {
	case alerted && alert == alertCertificateRequired:
		hint = "the server requires a client certificate: pass --tls-cert and --tls-key"
	case tlsOn && !hasCert && dropped:
		hint = "the server closed the TLS connection; if it requires a client certificate, pass --tls-cert and --tls-key"
	case tlsOn && hasCert && (dropped || alerted):
		hint = "the server refused the TLS connection; is the client certificate signed by a CA the server trusts?"
	case errors.As(err, &hostname):
		hint = "connect by a host name or IP address the server's certificate is issued for"
	case errors.As(err, &unknownCA):
		hint = "the server's certificate is not signed by a trusted CA: give that CA with --tls-ca, or skip verification with --tls-insecure"
	case errors.As(err, &invalid), errors.As(err, &verify):
		hint = "the server's certificate was refused; --tls-insecure skips verification"
	case tlsOn && (errors.Is(err, context.DeadlineExceeded) || errors.As(err, &notTLS)):
		hint = "no TLS handshake: if the server's port is plain text, connect with redis:// and without --tls"
	case !tlsOn && dropped:
		hint = "if the server expects TLS, connect with rediss:// or --tls"
	}
	err = contextual(err, ctx)
	if hint != "" {
		err = fmt.Errorf("%w (%s)", err, hint)
	}
	return &ConnectError{Addr: cfg.Target.Addr, Default: cfg.defaultTarget, Err: err, secrets: cfg.secrets}
}

// alertCertificateRequired is the TLS 1.3 alert a server sends when it wants a client
// certificate and got none (RFC 8446, section 6).
const alertCertificateRequired = 116

// tlsAlert is the alert the server sent, if it sent one: crypto/tls reports a received alert
// as a net.OpError of Op "remote error" holding the alert's number (of a type it does not
// export, so its number is read by reflection).
func tlsAlert(err error) (uint64, bool) {
	var remote *net.OpError
	if !errors.As(err, &remote) || remote.Op != "remote error" || remote.Err == nil {
		return 0, false
	}
	if v := reflect.ValueOf(remote.Err); v.CanUint() {
		return v.Uint(), true
	}
	return 0, false
}

func (cfg *Config) tlsConfig() *tls.Config {
	if cfg.Single != nil {
		return cfg.Single.TLSConfig
	}
	if cfg.Multi != nil {
		return cfg.Multi.TLSConfig
	}
	if cfg.Failover != nil {
		return cfg.Failover.TLSConfig
	}
	return nil
}

// contextual says the timeout ran out when the error alone does not: a socket's own timeout
// says "i/o timeout", a cancelled context only "context deadline exceeded".
func contextual(err error, ctx context.Context) error {
	if ctx.Err() == context.DeadlineExceeded && !rediserr.NetTimeout(err) {
		return fmt.Errorf("no answer before the timeout: %w", err)
	}
	return err
}

// unprobedConn hides the socket's syscall.Conn, which is what go-redis's checkout probe needs.
// Like any net.Conn it may be read and written at once (a RESP proxy forwards both ways on it),
// so its flag is atomic.
type unprobedConn struct {
	net.Conn
	wrote atomic.Bool
}

// Write sends a request.
func (c *unprobedConn) Write(b []byte) (int, error) {
	c.wrote.Store(true)
	return c.Conn.Write(b)
}

// Read yields once after a request before reading its reply: the other workers write theirs
// meanwhile, and the reply has usually arrived by then, which saves a read that would find
// nothing (EAGAIN) and a trip through the poller.
func (c *unprobedConn) Read(b []byte) (int, error) {
	if c.wrote.Load() && c.wrote.Swap(false) {
		runtime.Gosched()
	}
	return c.Conn.Read(b)
}

func unprobedDialer(tlsConf *tls.Config, timeout time.Duration) func(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &net.Dialer{Timeout: timeout, KeepAlive: 5 * time.Minute}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		var conn net.Conn
		var err error
		if tlsConf != nil {
			conn, err = (&tls.Dialer{NetDialer: d, Config: tlsConf}).DialContext(ctx, network, addr)
		} else {
			conn, err = d.DialContext(ctx, network, addr)
		}
		if err != nil {
			return nil, err
		}
		return &unprobedConn{Conn: conn}, nil
	}
}

// QuietLogger discards go-redis's own log lines: a command reports failures itself, in one line.
type QuietLogger struct{}

// Printf implements go-redis's logger.
func (QuietLogger) Printf(context.Context, string, ...any) {}
