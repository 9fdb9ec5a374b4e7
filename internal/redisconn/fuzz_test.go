package redisconn

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"
)

// Fuzzed options pick files from a fixed set, so a fuzzer never reads arbitrary paths.
const (
	fileNone = iota
	fileGood
	fileMissing
	fileNotPEM
)

func pick(fs files, choice uint8, good string) string {
	switch choice % 4 {
	case fileGood:
		return good
	case fileMissing:
		return fs.missing
	case fileNotPEM:
		return fs.notPEM
	}
	return ""
}

func choiceOf(fs files, path string) uint8 {
	switch path {
	case "":
		return fileNone
	case fs.missing:
		return fileMissing
	case fs.notPEM:
		return fileNotPEM
	}
	return fileGood
}

// Flag bits of the fuzzed options.
const (
	bitCluster = 1 << iota
	bitTLS
	bitInsecure
	bitDBSet
)

// fuzzOptions builds Options from fuzzed values; files are chosen by the low bits of choices.
func fuzzOptions(fs files, rawURL, addrs, username, password string, flags, choices uint8, db int, timeoutMs int64, sentinels, master, sentinelPassword string) Options {
	o := Options{
		URL: rawURL, Username: username, Password: password, DB: db, Timeout: time.Duration(timeoutMs) * time.Millisecond,
		Cluster: flags&bitCluster != 0, TLS: flags&bitTLS != 0, TLSInsecure: flags&bitInsecure != 0, DBSet: flags&bitDBSet != 0,
		Master: master, SentinelPassword: sentinelPassword,
	}
	if addrs != "" {
		o.Addrs = strings.Split(addrs, ",")
	}
	if sentinels != "" {
		o.Sentinels = strings.Split(sentinels, ",")
	}
	o.PasswordFile = pick(fs, choices, fs.passwordFile)
	o.TLSCA = pick(fs, choices>>2, fs.ca)
	o.TLSCert = pick(fs, choices>>4, fs.clientCert)
	o.TLSKey = pick(fs, choices>>6, fs.clientKey)
	return o
}

// FuzzResolve: Resolve never panics, fails only with a UsageError that holds no password, and
// the Target it returns does not depend on the credentials (so it cannot print them).
func FuzzResolve(f *testing.F) {
	fs := writeFiles(f)
	for _, tc := range resolveCases(fs) {
		o := tc.opts
		var flags uint8
		for bit, on := range map[uint8]bool{bitCluster: o.Cluster, bitTLS: o.TLS, bitInsecure: o.TLSInsecure, bitDBSet: o.DBSet} {
			if on {
				flags |= bit
			}
		}
		choices := choiceOf(fs, o.PasswordFile) | choiceOf(fs, o.TLSCA)<<2 | choiceOf(fs, o.TLSCert)<<4 | choiceOf(fs, o.TLSKey)<<6
		f.Add(o.URL, strings.Join(o.Addrs, ","), o.Username, o.Password, tc.env["REDIS_URL"], tc.env["REDISCLI_AUTH"],
			flags, choices, o.DB, o.Timeout.Milliseconds(), strings.Join(o.Sentinels, ","), o.Master, o.SentinelPassword)
	}
	f.Fuzz(func(t *testing.T, rawURL, addrs, username, password, envURL, envAuth string, flags, choices uint8, db int, timeoutMs int64,
		sentinels, master, sentinelPassword string) {
		o := fuzzOptions(fs, rawURL, addrs, username, password, flags, choices, db, timeoutMs, sentinels, master, sentinelPassword)
		env := map[string]string{"REDIS_URL": envURL, "REDISCLI_AUTH": envAuth}
		getenv := func(k string) string { return env[k] }
		cfg, err := Resolve(o, getenv)

		passwords := []string{password, envAuth, sentinelPassword}
		if o.PasswordFile == fs.passwordFile {
			passwords = append(passwords, "file-secret-9")
		}
		for _, raw := range []string{rawURL, envURL} {
			if u, perr := url.Parse(raw); perr == nil && u.User != nil {
				p, _ := u.User.Password()
				passwords = append(passwords, p)
			}
		}
		if err != nil {
			var ue *UsageError
			if !errors.As(err, &ue) {
				t.Fatalf("Resolve returned %T %q, want a *UsageError", err, err)
			}
			for _, p := range passwords {
				if p != "" && strings.Contains(err.Error(), p) {
					t.Fatalf("error %q holds the password %q", err, p)
				}
			}
			return
		}

		// The same options without any credential must name the same target.
		bare := o
		bare.Password, bare.PasswordFile, bare.SentinelPassword = "", "", ""
		bare.URL = withoutUserinfo(rawURL)
		bareEnv := map[string]string{"REDIS_URL": withoutUserinfo(envURL)}
		bareCfg, err := Resolve(bare, func(k string) string { return bareEnv[k] })
		if err != nil {
			t.Fatalf("without credentials Resolve fails (%v) where with them it worked", err)
		}
		if bareCfg.Target != cfg.Target {
			t.Fatalf("target %+v depends on the credentials (without them %+v)", cfg.Target, bareCfg.Target)
		}
	})
}

// withoutUserinfo drops a URL's credentials (a URL that does not parse is left alone: Resolve
// then fails before it names a target).
func withoutUserinfo(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	u.User = nil
	return u.String()
}

// FuzzRedact: the password of a URL inside any text never survives Redact, and a known secret
// never survives Scrub, whatever surrounds it.
func FuzzRedact(f *testing.F) {
	for _, seed := range []struct{ prefix, scheme, user, pw, host, suffix string }{
		{"cannot connect to ", "redis", "ops", "s3cret", "127.0.0.1:6379", ": refused"},
		{`parse "`, "rediss", "", "p@ss", "h:1", `": invalid port`},
		{"", "unix", "u", "a:b", "/tmp/r.sock", ""},
		{"two: redis://a:one@h ", "REDIS", "u", "two!$&'()*+,;=", "h", "/0?db=1"},
		{"", "redis", "u@x", "pw%2F", "h", "@evil"},
	} {
		f.Add(seed.prefix, seed.scheme, seed.user, seed.pw, seed.host, seed.suffix)
	}
	f.Fuzz(func(t *testing.T, prefix, scheme, user, pw, host, suffix string) {
		s := prefix + scheme + "://" + user + ":" + pw + "@" + host + suffix
		if pw != "" && strings.Contains(Scrub(s, pw), pw) {
			t.Fatalf("Scrub(%q, %q) = %q keeps the secret", s, pw, Scrub(s, pw))
		}
		// Redact knows no secret: it finds credentials by URL syntax, so the password must be
		// one a URL can carry, and must not also appear in the text outside the credentials.
		if pw == "" || !allUserinfo(pw) || !allUserinfo(user) {
			return
		}
		ideal := prefix + scheme + "://" + user + ":" + mask + "@" + host + suffix
		if strings.Contains(ideal, pw) || strings.Trim(pw, "x:@") == "" {
			return
		}
		if got := Redact(s); strings.Contains(got, pw) {
			t.Fatalf("Redact(%q) = %q keeps the password %q", s, got, pw)
		}
	})
}

func allUserinfo(s string) bool {
	for i := 0; i < len(s); i++ {
		if !userinfoByte(s[i]) {
			return false
		}
	}
	return true
}
