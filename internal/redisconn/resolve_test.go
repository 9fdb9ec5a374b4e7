package redisconn

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/redistest"
)

// files are the on-disk inputs Resolve reads: a password file, a CA, a non-PEM file.
type files struct {
	passwordFile, ca, notPEM, clientCert, clientKey, missing string
}

func writeFiles(t testing.TB) files {
	t.Helper()
	dir := t.TempDir()
	ca := redistest.NewCA(t, dir, "ca")
	cert, key := ca.IssueClient(t, dir, "client")
	fs := files{
		passwordFile: filepath.Join(dir, "password"), ca: ca.File, notPEM: filepath.Join(dir, "not.pem"),
		clientCert: cert, clientKey: key, missing: filepath.Join(dir, "missing.pem"),
	}
	if err := os.WriteFile(fs.passwordFile, []byte("file-secret-9\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(fs.notPEM, []byte("just text\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return fs
}

type resolveCase struct {
	name    string
	opts    Options
	env     map[string]string
	wantErr string // a fragment of the usage error; empty means success
	check   func(t *testing.T, c *Config)
}

func resolveCases(fs files) []resolveCase {
	single := func(addr string, db int, user, pw string) func(t *testing.T, c *Config) {
		return func(t *testing.T, c *Config) {
			t.Helper()
			if c.Cluster || c.Single.Addr != addr || c.Single.DB != db || c.Single.Username != user || c.Single.Password != pw {
				t.Errorf("got cluster=%v addr=%s db=%d user=%q password=%q, want %s db %d user %q password %q",
					c.Cluster, c.Single.Addr, c.Single.DB, c.Single.Username, c.Single.Password, addr, db, user, pw)
			}
		}
	}
	tlsOn := func(insecure bool) func(t *testing.T, c *Config) {
		return func(t *testing.T, c *Config) {
			t.Helper()
			if c.Single.TLSConfig == nil || c.Single.TLSConfig.InsecureSkipVerify != insecure {
				t.Errorf("TLS config %+v, want TLS with InsecureSkipVerify=%v", c.Single.TLSConfig, insecure)
			}
		}
	}
	sentinel := func(master string, addrs []string, user, pw, sentinelUser, sentinelPW string, db int) func(t *testing.T, c *Config) {
		return func(t *testing.T, c *Config) {
			t.Helper()
			f := c.Failover
			if f == nil || c.Single != nil || c.Multi != nil {
				t.Fatalf("config %+v, want a failover client only", c)
			}
			if f.MasterName != master || strings.Join(f.SentinelAddrs, ",") != strings.Join(addrs, ",") || f.Username != user || f.Password != pw ||
				f.SentinelUsername != sentinelUser || f.SentinelPassword != sentinelPW || f.DB != db {
				t.Errorf("failover options %+v, want master %s via %v, data user %q password %q, sentinel user %q password %q, db %d",
					f, master, addrs, user, pw, sentinelUser, sentinelPW, db)
			}
			if f.MaxRetries != -1 || f.Protocol != 2 || !f.DisableIdentity {
				t.Errorf("a failover client must not retry, and must speak RESP2 without CLIENT SETINFO: %+v", f)
			}
			if want := (Target{Kind: "sentinel", Addr: master + "@" + strings.Join(addrs, ",")}); c.Target != want {
				t.Errorf("target %+v, want %+v", c.Target, want)
			}
		}
	}
	return []resolveCase{
		{name: "default target", check: single(DefaultAddr, 0, "", "")},
		{name: "url with user, password and db", opts: Options{URL: "redis://ops:s3cret-pw@h.example:7000/2"}, check: single("h.example:7000", 2, "ops", "s3cret-pw")},
		{name: "url password percent-encoded", opts: Options{URL: "redis://ops:a%2Fb%40c@h:1"}, check: single("h:1", 0, "ops", "a/b@c")},
		{name: "url password with a raw @", opts: Options{URL: "redis://ops:p@ss@h:1"}, check: single("h:1", 0, "ops", "p@ss")},
		{name: "--db overrides the url", opts: Options{URL: "redis://h:1/2", DB: 5, DBSet: true}, check: single("h:1", 5, "", "")},
		{name: "flags override url credentials", opts: Options{URL: "redis://a:b@h:1", Username: "u", Password: "flag-pw"}, check: single("h:1", 0, "u", "flag-pw")},
		{name: "REDIS_URL when no target flag", env: map[string]string{"REDIS_URL": "redis://env-host:9"}, check: single("env-host:9", 0, "", "")},
		{name: "--addr beats REDIS_URL", opts: Options{Addrs: []string{"h:2"}}, env: map[string]string{"REDIS_URL": "redis://env-host:9"}, check: single("h:2", 0, "", "")},
		{name: "REDISCLI_AUTH", env: map[string]string{"REDISCLI_AUTH": "env-secret"}, check: single(DefaultAddr, 0, "", "env-secret")},
		{name: "--password beats REDISCLI_AUTH", opts: Options{Password: "flag-pw"}, env: map[string]string{"REDISCLI_AUTH": "env-secret"}, check: single(DefaultAddr, 0, "", "flag-pw")},
		{name: "--password-file, newline trimmed", opts: Options{PasswordFile: fs.passwordFile}, check: single(DefaultAddr, 0, "", "file-secret-9")},
		{name: "rediss verifies", opts: Options{URL: "rediss://h:1"}, check: tlsOn(false)},
		{name: "--tls with a CA", opts: Options{Addrs: []string{"h:1"}, TLS: true, TLSCA: fs.ca}, check: tlsOn(false)},
		{name: "--tls-ca alone implies TLS", opts: Options{Addrs: []string{"h:1"}, TLSCA: fs.ca}, check: tlsOn(false)},
		{name: "--tls-insecure is the only way to skip verification", opts: Options{URL: "rediss://h:1", TLSInsecure: true}, check: tlsOn(true)},
		{name: "client certificate", opts: Options{URL: "rediss://h:1", TLSCert: fs.clientCert, TLSKey: fs.clientKey}, check: func(t *testing.T, c *Config) {
			if len(c.Single.TLSConfig.Certificates) != 1 {
				t.Errorf("client certificate not loaded")
			}
		}},
		{name: "two addrs make a cluster", opts: Options{Addrs: []string{"a:1", "b:2"}}, check: func(t *testing.T, c *Config) {
			if !c.Cluster || c.Target != (Target{Kind: "cluster", Addr: "a:1,b:2"}) {
				t.Errorf("target %+v cluster=%v", c.Target, c.Cluster)
			}
		}},
		{name: "unix socket", opts: Options{URL: "unix:///tmp/r.sock"}, check: func(t *testing.T, c *Config) {
			if c.Target.Addr != "unix:/tmp/r.sock" {
				t.Errorf("target %+v", c.Target)
			}
		}},

		{name: "sentinel flags", opts: Options{Sentinels: []string{"s1:26379", "s2:26380"}, Master: "mymaster", Username: "ops", Password: "data-pw",
			SentinelUsername: "sentinel-user", SentinelPassword: "sentinel-pw", DB: 2, DBSet: true}, check: sentinel("mymaster", []string{"s1:26379", "s2:26380"}, "ops", "data-pw", "sentinel-user", "sentinel-pw", 2)},
		{name: "sentinel url", opts: Options{URL: "redis+sentinel://ops:url-pw@s1:26379,s2,[::1]:5/mymaster/3"},
			check: sentinel("mymaster", []string{"s1:26379", "s2:26379", "[::1]:5"}, "ops", "url-pw", "", "", 3)},
		{name: "flags override the sentinel url", opts: Options{URL: "redis+sentinel://s1/m1", Master: "m2", Password: "flag-pw", DB: 1, DBSet: true},
			check: sentinel("m2", []string{"s1:26379"}, "", "flag-pw", "", "", 1)},
		{name: "sentinel url from REDIS_URL", env: map[string]string{"REDIS_URL": "redis+sentinel://s9:1/m9"}, check: sentinel("m9", []string{"s9:1"}, "", "", "", "", 0)},
		{name: "rediss+sentinel is TLS", opts: Options{URL: "rediss+sentinel://s1/m"}, check: func(t *testing.T, c *Config) {
			if c.Failover == nil || c.Failover.TLSConfig == nil || c.Failover.TLSConfig.InsecureSkipVerify {
				t.Errorf("failover options %+v, want TLS that verifies", c.Failover)
			}
		}},
		{name: "sentinel password file", opts: Options{Sentinels: []string{"s:1"}, Master: "m", SentinelPasswordFile: fs.passwordFile},
			check: sentinel("m", []string{"s:1"}, "", "", "", "file-secret-9", 0)},
		{name: "sentinel without master", opts: Options{Sentinels: []string{"s:1"}}, wantErr: "--master NAME"},
		{name: "master without sentinel", opts: Options{Master: "m"}, wantErr: "need --sentinel"},
		{name: "sentinel and addr", opts: Options{Sentinels: []string{"s:1"}, Master: "m", Addrs: []string{"h:1"}}, wantErr: "--sentinel and --addr"},
		{name: "sentinel and url", opts: Options{Sentinels: []string{"s:1"}, Master: "m", URL: "redis://h:1"}, wantErr: "--sentinel and --url"},
		{name: "sentinel and cluster", opts: Options{Sentinels: []string{"s:1"}, Master: "m", Cluster: true}, wantErr: "not a cluster"},
		{name: "sentinel without port", opts: Options{Sentinels: []string{"s"}, Master: "m"}, wantErr: "bad --sentinel"},
		{name: "sentinel url without master", opts: Options{URL: "redis+sentinel://u:pw-secret@s1:26379"}, wantErr: "no master name"},
		{name: "sentinel url with a query", opts: Options{URL: "redis+sentinel://s1/m?password=query-secret"}, wantErr: "no query parameters"},
		{name: "sentinel url bad db", opts: Options{URL: "redis+sentinel://s1/m/x"}, wantErr: "database"},
		{name: "sentinel url bad port", opts: Options{URL: "redis+sentinel://s1:0,s2/m"}, wantErr: "1-65535"},
		{name: "sentinel url bad password", opts: Options{URL: "redis+sentinel://u:sla/sh-secret@s1/m"}, wantErr: "percent-encoded"},
		{name: "sentinel passwords twice", opts: Options{Sentinels: []string{"s:1"}, Master: "m", SentinelPassword: "x-secret", SentinelPasswordFile: fs.passwordFile}, wantErr: "--sentinel-password-file"},
		{name: "url and addr", opts: Options{URL: "redis://h:1", Addrs: []string{"h:2"}}, wantErr: "--url and --addr"},
		{name: "bad scheme", opts: Options{URL: "http://u:pw-in-http@h:1"}, wantErr: "scheme"},
		{name: "skip_verify in the url", opts: Options{URL: "rediss://h:1?skip_verify=true"}, wantErr: "--tls-insecure"},
		{name: "unknown url option", opts: Options{URL: "redis://h:1?bogus=1"}, wantErr: "unexpected option"},
		{name: "bad db in url", opts: Options{URL: "redis://h:1/x"}, wantErr: "database"},
		{name: "negative timeout", opts: Options{Timeout: -time.Second}, wantErr: "--timeout"},
		{name: "negative db", opts: Options{DB: -1, DBSet: true}, wantErr: "--db"},
		{name: "db on a cluster", opts: Options{Addrs: []string{"a:1", "b:2"}, DB: 1, DBSet: true}, wantErr: "cluster"},
		{name: "unix cluster", opts: Options{URL: "unix:///tmp/r.sock", Cluster: true}, wantErr: "unix socket"},
		{name: "unix tls", opts: Options{URL: "unix:///tmp/r.sock", TLS: true}, wantErr: "TLS over a unix socket"},
		{name: "addr without port", opts: Options{Addrs: []string{"h"}}, wantErr: "host:port"},
		{name: "addr port out of range", opts: Options{Addrs: []string{"h:70000"}}, wantErr: "1-65535"},
		{name: "addr empty host", opts: Options{Addrs: []string{":1"}}, wantErr: "host is empty"},
		{name: "password twice", opts: Options{Password: "flag-pw", PasswordFile: fs.passwordFile}, wantErr: "--password-file"},
		{name: "password file missing", opts: Options{PasswordFile: fs.missing}, wantErr: "no such file"},
		{name: "cert without key", opts: Options{TLSCert: fs.clientCert}, wantErr: "--tls-key"},
		{name: "ca missing", opts: Options{TLS: true, TLSCA: fs.missing}, wantErr: "cannot read --tls-ca"},
		{name: "ca not PEM", opts: Options{TLS: true, TLSCA: fs.notPEM}, wantErr: "no PEM certificate"},
		{name: "key pair not PEM", opts: Options{TLS: true, TLSCert: fs.notPEM, TLSKey: fs.notPEM}, wantErr: "--tls-cert/--tls-key"},
		{name: "password with a space", opts: Options{URL: "redis://u:sp ace-secret@h:1"}, wantErr: "percent-encoded"},
		{name: "password with a slash", opts: Options{URL: "redis://u:sla/sh-secret@h:1"}, wantErr: "percent-encoded"},
		{name: "password with a bad escape", opts: Options{URL: "redis://u:bad%zzescape@h:1"}, wantErr: "percent-encoded"},
		{name: "control character", opts: Options{URL: "redis://u:ctl\x7fsecret@h:1"}, wantErr: "bad --url"},
	}
}

func TestResolve(t *testing.T) {
	fs := writeFiles(t)
	for _, tc := range resolveCases(fs) {
		t.Run(tc.name, func(t *testing.T) {
			getenv := func(k string) string { return tc.env[k] }
			cfg, err := Resolve(tc.opts, getenv)
			if tc.wantErr != "" {
				var ue *UsageError
				if !errors.As(err, &ue) {
					t.Fatalf("err %v (%T), want a UsageError mentioning %q", err, err, tc.wantErr)
				}
				if !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("err %q does not mention %q", err, tc.wantErr)
				}
				for _, secret := range Secrets(tc.opts, getenv) {
					if strings.Contains(err.Error(), secret) {
						t.Errorf("err %q holds the password %q", err, secret)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if tc.check != nil {
				tc.check(t, cfg)
			}
			if cfg.Single != nil && (cfg.Single.MaxRetries != -1 || cfg.Single.Protocol != 2 || !cfg.Single.DisableIdentity) {
				t.Errorf("single-node client must not retry, and must speak RESP2 without CLIENT SETINFO: %+v", cfg.Single)
			}
		})
	}
}

func TestRedact(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"redis://u:pw@h:1", "redis://u:xxxxx@h:1"},
		{"rediss://:pw@h:1/0", "rediss://:xxxxx@h:1/0"},
		{"redis://lonepw@h:1", "redis://xxxxx@h:1"},
		{"unix://u:pw@/tmp/r.sock", "unix://u:xxxxx@/tmp/r.sock"},
		{"REDIS://u:pw@h", "REDIS://u:xxxxx@h"},
		{"redis://u:p@ss@h:1", "redis://u:xxxxx@h:1"},
		{"redis://u:a:b@h", "redis://u:xxxxx@h"},
		{`parse "redis://u:pw@h:x": invalid port`, `parse "redis://u:xxxxx@h:x": invalid port`},
		{"a redis://u:one@h and rediss://v:two@k", "a redis://u:xxxxx@h and rediss://v:xxxxx@k"},
		{"redis://h:1/path@not-creds", "redis://h:1/path@not-creds"},
		{"no url here: user@host", "no url here: user@host"},
		{"redis://", "redis://"},
		{"expected redis://host:port[/db] with user:password@ before the host", "expected redis://host:port[/db] with user:password@ before the host"},
	} {
		if got := Redact(tc.in); got != tc.want {
			t.Errorf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestScrub(t *testing.T) {
	for _, tc := range []struct {
		in, secret, want string
	}{
		{"WRONGPASS for hunter2", "hunter2", "WRONGPASS for xxxxx"},
		{`invalid escape "a\"b"`, `a"b`, `invalid escape "xxxxx"`},
		{"pass=a%2Fb", "a/b", "pass=xxxxx"},
		{"xx-secret-xx", "xx", "*****-secret-*****"},
		{"redis://u:pw@h and pw", "pw", "redis://u:xxxxx@h and xxxxx"},
	} {
		if got := Scrub(tc.in, tc.secret); got != tc.want {
			t.Errorf("Scrub(%q, %q) = %q, want %q", tc.in, tc.secret, got, tc.want)
		}
	}
}

func TestSecretsFromEverySource(t *testing.T) {
	fs := writeFiles(t)
	env := map[string]string{"REDISCLI_AUTH": "env-pw", "REDIS_URL": "redis://u:envurl%2Fpw@h:1"}
	got := Secrets(Options{Password: "flag-pw", PasswordFile: fs.passwordFile, URL: "rediss://u:url-pw@h:2"}, func(k string) string { return env[k] })
	joined := strings.Join(got, " ")
	for _, want := range []string{"flag-pw", "env-pw", "file-secret-9", "url-pw", "envurl/pw", "envurl%2Fpw"} {
		if !strings.Contains(" "+joined+" ", " "+want+" ") {
			t.Errorf("Secrets = %q, lacks %q", got, want)
		}
	}
}

// A SCAN pattern built from a name matches that name's characters only.
func TestGlobEscapeQuotesMatchSpecialCharacters(t *testing.T) {
	if got := GlobEscape(`a*b?c[d]e\f`); got != `a\*b\?c\[d\]e\\f` {
		t.Errorf("GlobEscape: %q", got)
	}
}

// Every client limitctl opens follows one policy (applyPolicy): never a retry, set explicitly
// (a cluster's 0 means none only through go-redis's rewrite of it), RESP2 without CLIENT
// SETINFO, one dial attempt, and the unprobed dialer exactly when the hammer asks for it.
func TestEveryClientFollowsOnePolicy(t *testing.T) {
	type policy struct {
		retries, protocol, dials int
		noIdentity, dialer       bool
	}
	want := func(dialer bool) policy { return policy{-1, 2, 1, true, dialer} }
	noEnv := func(string) string { return "" }
	for _, unprobed := range []bool{false, true} {
		got := map[string]policy{}
		single, err := Resolve(Options{Addrs: []string{"h:1"}, NoCheckoutProbe: unprobed}, noEnv)
		if err != nil {
			t.Fatal(err)
		}
		s := single.Single
		got["single node"] = policy{s.MaxRetries, s.Protocol, s.DialerRetries, s.DisableIdentity, s.Dialer != nil}
		cluster, err := Resolve(Options{Addrs: []string{"h:1", "h:2"}, NoCheckoutProbe: unprobed}, noEnv)
		if err != nil {
			t.Fatal(err)
		}
		c := cluster.Multi
		got["cluster"] = policy{c.MaxRetries, c.Protocol, c.DialerRetries, c.DisableIdentity, c.Dialer != nil}
		c = clusterBehind(s)
		got["cluster behind a node"] = policy{c.MaxRetries, c.Protocol, c.DialerRetries, c.DisableIdentity, c.Dialer != nil}
		sentinel, err := Resolve(Options{Sentinels: []string{"h:26379"}, Master: "m", NoCheckoutProbe: unprobed}, noEnv)
		if err != nil {
			t.Fatal(err)
		}
		f := sentinel.Failover
		got["master through Sentinels"] = policy{f.MaxRetries, f.Protocol, f.DialerRetries, f.DisableIdentity, f.Dialer != nil}
		n := sentinelNodeOptions(f, "h:26379")
		got["a Sentinel"] = policy{n.MaxRetries, n.Protocol, n.DialerRetries, n.DisableIdentity, n.Dialer != nil}
		for name, p := range got {
			// A Sentinel is asked a question, never sent load: no unprobed dialer there.
			if w := want(unprobed && name != "a Sentinel"); p != w {
				t.Errorf("unprobed %v, %s: %+v, want %+v", unprobed, name, p, w)
			}
		}
	}
}
