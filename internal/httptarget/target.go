// Package httptarget drives a limiter as it is deployed: an HTTP endpoint, called as a
// limiter is, whose response is read as an admit, a refusal or an error, with the instants
// that bound when the endpoint decided.
//
// Its shape follows limiter.Limiter so the engine can drive it as one more strategy: Acquire
// takes the key and, in place of the client's clock (which an endpoint never reads), a Call
// naming the worker and its sequence number for the placeholders. There is no Release: the
// endpoint releases its own slots. The Decision carries the instants the evidence is judged by
// (Sent, Received: the endpoint's own clock is unseen, as a script's TIME is), measured inside
// the client where they are tightest, rather than around the call by the engine.
package httptarget

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/net/idna"

	"github.com/limitctl/limitctl/internal/exitcode"
)

// Spec is one HTTP target as the user gives it (--http [NAME=]URL and the --http-* flags).
type Spec struct {
	Name    string
	URL     string
	Method  string   // "" is GET
	Headers []string // each "Name: value"
	Body    string
	// Admitted and Refused are the decision expressions; "" is the default.
	Admitted, Refused string
}

// Options are what the run decides for every target.
type Options struct {
	// Conns is the most keep-alive connections to the target, and so the most requests in
	// flight: one per worker unless fewer are asked. 0 is no bound.
	Conns int
	// Timeout bounds the wait for the response's headers once the request is written, and the
	// dial. 0 is DefaultTimeout.
	Timeout time.Duration
	// Run is {run}'s value.
	Run string
}

// DefaultTimeout is how long a response may take when Options says nothing.
const DefaultTimeout = 10 * time.Second

// maxDrain is how much of a response's body is read so its connection can serve the next
// request; a longer body costs its connection instead.
const maxDrain = 64 << 10

// Call names one request for the placeholders: {worker} and {seq}. (A Redis limiter's
// Acquire takes the client's clock instead; an endpoint decides on its own clock.)
type Call struct {
	Worker int
	Seq    uint64
}

// Decision is what one call's response said, and when, on the monotonic clock.
type Decision struct {
	Allowed bool
	Status  int
	// Sent is no later than the first byte of the request left for the endpoint; Received is
	// no earlier than the first byte of the response arrived. The endpoint decided in between.
	Sent, Received time.Time
	// Retried: the transport sent the request again on a fresh connection after the one it
	// reused was closed under it; the endpoint may have seen (and counted) the first attempt.
	Retried bool
}

// Target is one HTTP endpoint behind one keep-alive client. It is safe for concurrent use.
type Target struct {
	name, method, rawURL string
	url                  *template
	fixedURL             *url.URL // the URL when no placeholder is in it
	headers              []headerTemplate
	fixedHeader          http.Header // the headers when no placeholder is in them
	host                 *template   // a Host header: the request's Host, not the connection's
	body                 *template
	judge                judge
	addr                 string // host:port the load goes to, and only there
	https                bool
	dialer               *net.Dialer
	transport            *http.Transport
	usesKey              bool
}

type headerTemplate struct {
	name  string // canonical
	value *template
}

// DefaultName is the name of the i-th (from 0) target given without NAME=: http, http2, ...
func DefaultName(i int) string {
	if i == 0 {
		return "http"
	}
	return fmt.Sprintf("http%d", i+1)
}

// SplitName reads --http's value, [NAME=]URL: a NAME is letters, digits, '-', '_' and '.'
// before the first '=' (a URL's '=' comes after its "://"). name is "" when none is given.
func SplitName(arg string) (name, rawURL string) {
	before, after, ok := strings.Cut(arg, "=")
	if !ok || before == "" || strings.IndexFunc(before, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.')
	}) >= 0 {
		return "", arg
	}
	return before, after
}

// New checks spec and builds its client. Bad input is a usage error (exit 2): a URL that is
// not http(s), a placeholder in its scheme, host or port (load goes only to the hosts the user
// named), an unknown placeholder, a header without a colon, an expression that does not
// compile, or decisions that both hold for one status.
func New(spec Spec, opts Options) (*Target, error) {
	name := spec.Name
	if name == "" {
		name = DefaultName(0)
	}
	usage := func(format string, a ...any) error {
		return exitcode.Usagef("--http %s: "+format, append([]any{name}, a...)...)
	}
	t := &Target{name: name, method: strings.ToUpper(spec.Method), rawURL: spec.URL}
	if t.method == "" {
		t.method = http.MethodGet
	}
	if !validMethod(t.method) {
		return nil, usage("--http-method %q is not a method", spec.Method)
	}
	u, err := t.parseURL(spec.URL, opts.Run, usage)
	if err != nil {
		return nil, err
	}
	for _, h := range spec.Headers {
		hname, value, ok := strings.Cut(h, ":")
		hname = strings.TrimSpace(hname)
		if !ok || hname == "" || strings.ContainsAny(hname, " \t{}") {
			return nil, usage("--http-header %q: want 'Name: value'", h)
		}
		tpl, err := parseTemplate("--http-header", strings.TrimSpace(value), opts.Run)
		if err != nil {
			return nil, usage("%v", err)
		}
		t.usesKey = t.usesKey || tpl.usesKey
		if textproto.CanonicalMIMEHeaderKey(hname) == "Host" {
			t.host = tpl
			continue
		}
		t.headers = append(t.headers, headerTemplate{textproto.CanonicalMIMEHeaderKey(hname), tpl})
	}
	t.fixedHeader = http.Header{}
	for _, h := range t.headers {
		if !h.value.isFixed {
			t.fixedHeader = nil
			break
		}
		t.fixedHeader[h.name] = append(t.fixedHeader[h.name], h.value.fixed)
	}
	if t.body, err = parseTemplate("--http-body", spec.Body, opts.Run); err != nil {
		return nil, usage("%v", err)
	}
	t.usesKey = t.usesKey || t.body.usesKey
	if t.judge, err = newJudge(spec.Admitted, spec.Refused); err != nil {
		return nil, usage("%v", err)
	}
	t.https = u.Scheme == "https"
	// The address as the transport dials it: the port made explicit, a non-ASCII host in
	// its ASCII form.
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = map[bool]string{true: "443", false: "80"}[t.https]
	}
	if strings.IndexFunc(host, func(r rune) bool { return r >= utf8.RuneSelf }) >= 0 {
		if host, err = idna.Lookup.ToASCII(host); err != nil {
			return nil, usage("%q: the host %q: %v", spec.URL, u.Hostname(), err)
		}
	}
	t.addr = net.JoinHostPort(host, port)
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	t.dialer = &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}
	t.transport = t.newTransport(opts.Conns, timeout)
	return t, nil
}

// parseURL checks the URL and splits it into a template. The scheme, host and port must be
// fixed text: only then is every request sent where the user said.
func (t *Target) parseURL(raw, run string, usage func(string, ...any) error) (*url.URL, error) {
	scheme, rest, ok := strings.Cut(raw, "://")
	if scheme = strings.ToLower(scheme); !ok || (scheme != "http" && scheme != "https") {
		return nil, usage("%q is not an http:// or https:// URL", raw)
	}
	tpl, err := parseTemplate("--http", raw, run)
	if err != nil {
		return nil, usage("%v", err)
	}
	authorityEnd := len(scheme) + 3 + len(rest)
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authorityEnd = len(scheme) + 3 + i
	}
	if tpl.firstPos >= 0 && tpl.firstPos < authorityEnd {
		return nil, usage("%q: a placeholder in the host; placeholders go in the path, query, headers or body, so load goes only to the host named", raw)
	}
	// The host part is fixed: parse a sample of the whole to check the rest is a URL.
	u, err := url.Parse(tpl.expand("key", Call{}))
	if err != nil {
		return nil, usage("%q is not a URL: %v", raw, unwrapURLError(err))
	}
	if u.Hostname() == "" {
		return nil, usage("%q names no host", raw)
	}
	if u.User != nil {
		return nil, usage("%q: credentials in the URL are not sent; use --http-header 'Authorization: ...'", raw)
	}
	t.url = tpl
	t.usesKey = tpl.usesKey
	if tpl.isFixed {
		t.fixedURL = u
	}
	return u, nil
}

func unwrapURLError(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}

// validMethod: a method is an HTTP token.
func validMethod(m string) bool {
	return m != "" && strings.IndexFunc(m, func(r rune) bool { return r <= ' ' || r >= 0x7f || strings.ContainsRune(`()<>@,;:\"/[]?={}`, r) }) < 0
}

// newTransport is the keep-alive client: conns connections at most, kept idle between calls,
// never through a proxy from the environment, never asking for compression (the body is not
// read, and a gzip the server chose would only cost it time), HTTP/1.1 only (one request per
// connection at a time, as the connections count says), dialling only the target's address.
func (t *Target) newTransport(conns int, timeout time.Duration) *http.Transport {
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           t.dial,
		MaxConnsPerHost:       conns,
		MaxIdleConnsPerHost:   max(conns, 1),
		MaxIdleConns:          0,
		IdleConnTimeout:       90 * time.Second,
		DisableCompression:    true,
		ForceAttemptHTTP2:     false,
		TLSNextProto:          map[string]func(string, *tls.Conn) http.RoundTripper{},
		TLSHandshakeTimeout:   timeout,
		ResponseHeaderTimeout: timeout,
	}
	if conns <= 0 {
		tr.MaxIdleConnsPerHost = 1024
	}
	return tr
}

// dial connects to the target's address and to no other: a redirect is never followed (the
// client is the transport alone), but this holds whatever asks.
func (t *Target) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if !strings.EqualFold(addr, t.addr) {
		return nil, fmt.Errorf("refusing to dial %s: load goes only to %s", addr, t.addr)
	}
	return t.dialer.DialContext(ctx, network, addr)
}

// Name is the target's name (a strategy's name beside the others).
func (t *Target) Name() string { return t.name }

// URL is the URL as given, placeholders and all.
func (t *Target) URL() string { return t.rawURL }

// Method is the request's method.
func (t *Target) Method() string { return t.method }

// Addr is the host:port every request goes to.
func (t *Target) Addr() string { return t.addr }

// UsesKey reports whether every request names {key} (in the URL, a header or the body): only
// then does a fresh key carry no state from before the run, so refusals can be judged.
func (t *Target) UsesKey() bool { return t.usesKey }

// Close closes the idle connections.
func (t *Target) Close() { t.transport.CloseIdleConnections() }

// Preflight checks, before any load, that the target's address accepts a connection (and a TLS
// handshake for https), without sending a request: a request would be decided, and counted
// against a key. A refused or unreachable address is a usage error naming it.
func (t *Target) Preflight(ctx context.Context) error {
	conn, err := t.dialer.DialContext(ctx, "tcp", t.addr)
	if err == nil && t.https {
		tc := tls.Client(conn, &tls.Config{ServerName: hostOnly(t.addr)})
		err = tc.HandshakeContext(ctx)
		conn = tc
	}
	if err != nil {
		if conn != nil {
			conn.Close()
		}
		return exitcode.Usagef("--http %s: nothing answers at %s (%s)", t.name, t.addr, dialReason(err))
	}
	return conn.Close()
}

func hostOnly(addr string) string {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	return h
}

// dialReason is the cause without the dial's own wrapping ("dial tcp 127.0.0.1:1: connect:").
func dialReason(err error) string {
	var oe *net.OpError
	for {
		if e, ok := err.(*net.OpError); ok {
			oe = e
			err = e.Err
			continue
		}
		break
	}
	msg := err.Error()
	if oe != nil {
		msg = strings.TrimPrefix(msg, "connect: ")
	}
	return msg
}

// callTrace records one call's instants. Sent is GotConn, not WroteHeaders: WroteHeaders
// fires once the headers are in the connection's write buffer, and a header block larger than
// that buffer has sent its first bytes before it, so the endpoint may already have decided.
// GotConn precedes every byte written for the request (on a pooled connection, by the
// hand-off to its writer: microseconds, which only widen the interval). Received is
// GotFirstResponseByte: the first byte of the response is in the read buffer, so the endpoint
// has decided and begun to answer.
type callTrace struct {
	sent, received time.Time
	conns          int
}

func (c *callTrace) gotConn(httptrace.GotConnInfo) {
	if c.conns == 0 {
		c.sent = time.Now() // the first attempt's: a retry's decision is later still
	}
	c.conns++
}

func (c *callTrace) gotFirstByte() { c.received = time.Now() }

// Acquire sends one request for key and reads the decision from its response. An error is a
// *CallError (with the Decision's instants where they are known), never a decision.
func (t *Target) Acquire(ctx context.Context, key string, c Call) (Decision, error) {
	req, err := t.request(key, c)
	if err != nil {
		return Decision{}, &CallError{Kind: ErrTransport, Err: err}
	}
	tr := &callTrace{}
	req = req.WithContext(httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: tr.gotConn, GotFirstResponseByte: tr.gotFirstByte}))
	before := time.Now()
	resp, err := t.transport.RoundTrip(req)
	d := Decision{Sent: tr.sent, Received: tr.received, Retried: tr.conns > 1}
	if d.Sent.IsZero() {
		d.Sent = before
	}
	if err != nil {
		return d, transportError(err)
	}
	if d.Received.IsZero() {
		d.Received = time.Now()
	}
	d.Status = resp.StatusCode
	var lookup func(string) (string, bool)
	if !t.judge.byStatus {
		lookup = headerLookup(resp.Header)
	}
	d.Allowed, err = t.judge.decide(resp.StatusCode, lookup)
	// Drained so the connection serves the next call; a longer body costs its connection
	// (closed unread) rather than the worker's time.
	io.CopyN(io.Discard, resp.Body, maxDrain) //nolint:errcheck // a body cut short decides nothing
	resp.Body.Close()
	return d, err
}

func headerLookup(h http.Header) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := h[textproto.CanonicalMIMEHeaderKey(name)]
		if !ok || len(v) == 0 {
			return "", false
		}
		return v[0], true
	}
}

// request builds the call's request: the placeholders expanded, a fixed part shared.
func (t *Target) request(key string, c Call) (*http.Request, error) {
	u := t.fixedURL
	if u == nil {
		var err error
		if u, err = url.Parse(t.url.expand(key, c)); err != nil {
			return nil, err
		}
	}
	header := t.fixedHeader
	if header == nil {
		header = make(http.Header, len(t.headers))
		for _, h := range t.headers {
			header[h.name] = append(header[h.name], h.value.expand(key, c))
		}
	}
	req := &http.Request{Method: t.method, URL: u, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: header, Host: u.Host}
	if t.host != nil {
		req.Host = t.host.expand(key, c)
	}
	if body := t.body.expand(key, c); body != "" {
		req.Body = io.NopCloser(strings.NewReader(body))
		req.ContentLength = int64(len(body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(body)), nil }
	}
	return req, nil
}
