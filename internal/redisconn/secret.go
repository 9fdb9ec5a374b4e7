package redisconn

import (
	"net/url"
	"os"
	"strconv"
	"strings"
)

// mask stands in for a removed credential.
const mask = "xxxxx"

// Redact removes the credentials of every URL inside s: scheme://user:secret@host becomes
// scheme://user:xxxxx@host, and a lone credential (scheme://secret@host) becomes xxxxx. The
// userinfo runs to the last '@' of the authority, as net/url reads it, so a password holding
// '@' is removed whole.
func Redact(s string) string {
	var b strings.Builder
	rest := s
	for {
		i := strings.Index(rest, "://")
		if i < 0 {
			b.WriteString(rest)
			return b.String()
		}
		start := i + len("://")
		b.WriteString(rest[:start])
		rest = rest[start:]
		end := 0
		for end < len(rest) && userinfoByte(rest[end]) {
			end++
		}
		at := strings.LastIndexByte(rest[:end], '@')
		if at < 0 {
			continue
		}
		if k := strings.IndexByte(rest[:at], ':'); k >= 0 {
			b.WriteString(rest[:k+1])
		}
		b.WriteString(mask)
		rest = rest[at:]
	}
}

// userinfoByte reports whether c may appear in a URL's userinfo (RFC 3986, as net/url accepts
// it), '@' included: the span Redact searches for the credentials' end.
func userinfoByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("-._~!$&'()*+,;=:%@", c) >= 0
}

// Scrub removes every occurrence of each secret from s (also in their quoted and URL-escaped
// spellings), then the credentials of any URL left in it. Unlike Redact it knows what to look
// for, so it also catches a password a malformed URL or a server's message carries unframed.
func Scrub(s string, secrets ...string) string {
	return scrubSecrets(Redact(s), secrets)
}

// scrubSecrets replaces each secret until none is left: a replacement never holds a character
// of the secret it replaces, and if one secret's mask spells another, the pass runs again.
func scrubSecrets(s string, secrets []string) string {
	all := expand(secrets)
	for pass := 0; pass < 4; pass++ {
		for _, sec := range all {
			s = strings.ReplaceAll(s, sec, maskFor(sec))
		}
		if !containsAny(s, all) {
			return s
		}
	}
	// Secrets made of every mask character: drop them until none is left (each pass shortens s).
	for containsAny(s, all) {
		for _, sec := range all {
			s = strings.ReplaceAll(s, sec, "")
		}
	}
	return s
}

func maskFor(secret string) string {
	for _, m := range []string{mask, "*****", "#####"} {
		if strings.IndexByte(secret, m[0]) < 0 {
			return m
		}
	}
	return ""
}

func containsAny(s string, secrets []string) bool {
	for _, sec := range secrets {
		if strings.Contains(s, sec) {
			return true
		}
	}
	return false
}

// expand adds the spellings a secret takes in messages: Go-quoted (%q) and URL-escaped.
func expand(secrets []string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, s := range secrets {
		add(s)
		q := strconv.Quote(s)
		add(q[1 : len(q)-1])
		add(url.QueryEscape(s))
		add(url.PathEscape(s))
		add(url.UserPassword("", s).String()[1:]) // ":" + the userinfo escaping
	}
	return out
}

// URLSecrets returns the password of a URL as written and as decoded. A URL net/url cannot
// parse still yields what sits between the scheme and the last '@', so an error quoting the
// malformed URL cannot print it either.
func URLSecrets(raw string) []string {
	if raw == "" {
		return nil
	}
	if u, err := url.Parse(raw); err == nil {
		if u.User == nil {
			return nil
		}
		p, ok := u.User.Password()
		if !ok {
			return nil
		}
		out := []string{p}
		if written := rawPassword(raw); written != "" && written != p {
			out = append(out, written)
		}
		return out
	}
	if p := rawPassword(raw); p != "" {
		return []string{p}
	}
	return nil
}

// rawPassword is the password as written: after the first ':' of everything between "://"
// and the last '@'.
func rawPassword(raw string) string {
	i := strings.Index(raw, "://")
	if i < 0 {
		return ""
	}
	rest := raw[i+3:]
	at := strings.LastIndexByte(rest, '@')
	if at < 0 {
		return ""
	}
	_, p, ok := strings.Cut(rest[:at], ":")
	if !ok {
		return ""
	}
	return p
}

// redactURL is a URL fit for a message: everything between "://" and the last '@' is masked
// (the user name kept), whether or not the URL parses.
func redactURL(raw string) string {
	i := strings.Index(raw, "://")
	if i < 0 {
		return raw
	}
	rest := raw[i+3:]
	at := strings.LastIndexByte(rest, '@')
	if at < 0 {
		return raw
	}
	user, _, ok := strings.Cut(rest[:at], ":")
	if !ok {
		user = ""
	} else {
		user += ":"
	}
	return raw[:i+3] + user + mask + rest[at:]
}

// Secrets lists every password the options and environment hold, from any source: --password,
// REDISCLI_AUTH, --password-file, the Sentinels' --sentinel-password(-file), and the credentials
// of --url and REDIS_URL. Whatever prints
// a message scrubs these from it.
func Secrets(o Options, getenv func(string) string) []string {
	if getenv == nil {
		getenv = os.Getenv
	}
	var out []string
	add := func(s ...string) {
		for _, v := range s {
			if v != "" {
				out = append(out, v)
			}
		}
	}
	add(o.Password, getenv("REDISCLI_AUTH"), o.SentinelPassword)
	for _, file := range []string{o.PasswordFile, o.SentinelPasswordFile} {
		if file == "" {
			continue
		}
		if b, err := os.ReadFile(file); err == nil {
			add(strings.TrimRight(string(b), "\r\n"))
		}
	}
	add(URLSecrets(o.URL)...)
	add(URLSecrets(getenv("REDIS_URL"))...)
	return out
}
