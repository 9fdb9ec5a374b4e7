package httptarget

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/exitcode"
)

func newTarget(t *testing.T, spec Spec, opts Options) *Target {
	t.Helper()
	tg, err := New(spec, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tg.Close)
	return tg
}

func TestSplitNameTakesANameOnlyBeforeTheURL(t *testing.T) {
	for _, c := range []struct{ arg, name, url string }{
		{"naive=http://127.0.0.1:3000/a", "naive", "http://127.0.0.1:3000/a"},
		{"http://127.0.0.1:3000/a?x=1", "", "http://127.0.0.1:3000/a?x=1"},
		{"a.b-c_1=https://h/", "a.b-c_1", "https://h/"},
		{"=http://h/", "", "=http://h/"},
	} {
		if name, u := SplitName(c.arg); name != c.name || u != c.url {
			t.Errorf("SplitName(%q) = %q, %q; want %q, %q", c.arg, name, u, c.name, c.url)
		}
	}
	if DefaultName(0) != "http" || DefaultName(1) != "http2" {
		t.Errorf("default names: %q %q", DefaultName(0), DefaultName(1))
	}
}

func TestNewRefusesBadInputAsAUsageError(t *testing.T) {
	for _, c := range []struct {
		spec Spec
		want string
	}{
		{Spec{URL: "ftp://127.0.0.1/"}, `--http http: "ftp://127.0.0.1/" is not an http:// or https:// URL`},
		{Spec{URL: "127.0.0.1:3000/a"}, "is not an http:// or https:// URL"},
		{Spec{URL: "http://{key}.example.com/"}, "a placeholder in the host"},
		{Spec{URL: "http://127.0.0.1:{worker}/"}, "a placeholder in the host"},
		{Spec{URL: "http://h{run}/"}, "a placeholder in the host"},
		{Spec{Name: "a", URL: "http://h/{user}"}, "--http a: --http: column 10: unknown placeholder {user}"},
		{Spec{URL: "http://h/", Headers: []string{"X-Key {key}"}}, "want 'Name: value'"},
		{Spec{URL: "http://h/", Headers: []string{"X-Key: {id}"}}, "unknown placeholder {id}"},
		{Spec{URL: "http://h/", Body: `{"k":"{keys}"}`}, "unknown placeholder {keys}"},
		{Spec{URL: "http://h/", Method: "GE T"}, "is not a method"},
		{Spec{URL: "http://u:p@h/"}, "credentials in the URL"},
		{Spec{URL: "http:///a"}, "names no host"},
		{Spec{URL: "http://h/", Admitted: "status >="}, "--http-admitted: syntax error"},
		{Spec{URL: "http://h/", Refused: "status >= 204"}, "both hold for status 204"},
	} {
		_, err := New(c.spec, Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%+v) = %v; want %q", c.spec, err, c.want)
			continue
		}
		if code, _ := exitcode.Classify(err, func(s string) string { return s }); code != exitcode.Usage {
			t.Errorf("New(%+v): exit %d; want %d", c.spec, code, exitcode.Usage)
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("New(%+v): a one-line error, got %q", c.spec, err)
		}
	}
}

// seen is what a test server received.
type seen struct {
	method, uri, host, body, encoding string
	header                            http.Header
}

func TestAcquireExpandsPlaceholdersInTheURLHeadersAndBody(t *testing.T) {
	got := make(chan seen, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.Method, r.RequestURI, r.Host, string(b), r.Header.Get("Accept-Encoding"), r.Header}
	}))
	defer srv.Close()
	tg := newTarget(t, Spec{
		URL: srv.URL + "/limit/{key}?w={worker}&s={seq}&r={run}", Method: "post",
		Headers: []string{"X-Client: {key}", "X-Fixed: yes", "Host: api.example"},
		Body:    `{"user":"{key}","seq":{seq},"lit":"{{key}"}`,
	}, Options{Run: "r1"})
	if !tg.UsesKey() {
		t.Error("UsesKey: every request names {key}")
	}
	d, err := tg.Acquire(context.Background(), "r1.3", Call{Worker: 2, Seq: 41})
	if err != nil || !d.Allowed || d.Status != 200 {
		t.Fatalf("Acquire = %+v, %v", d, err)
	}
	s := <-got
	if s.method != "POST" || s.uri != "/limit/r1.3?w=2&s=41&r=r1" || s.host != "api.example" {
		t.Errorf("request line: %s %s host %s", s.method, s.uri, s.host)
	}
	if s.header.Get("X-Client") != "r1.3" || s.header.Get("X-Fixed") != "yes" {
		t.Errorf("headers: %v", s.header)
	}
	if want := `{"user":"r1.3","seq":41,"lit":"{key}"}`; s.body != want {
		t.Errorf("body %s; want %s", s.body, want)
	}
	if s.encoding != "" {
		t.Errorf("Accept-Encoding %q: the client asks for no compression", s.encoding)
	}
}

func TestAcquireKeepsAdmitsRefusalsAndErrorsApart(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("/limited", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(429) })
	mux.HandleFunc("/down", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) })
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ok", http.StatusFound) })
	mux.HandleFunc("/reset", func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.(*net.TCPConn).SetLinger(0) // an RST, not a FIN
			conn.Close()
		}
	})
	release := make(chan struct{})
	defer close(release)
	mux.HandleFunc("/stuck", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	for _, c := range []struct {
		path   string
		allow  bool
		kind   ErrorKind
		status int
	}{
		{"/ok", true, "", 200},
		{"/limited", false, "", 429},
		{"/down", false, ErrStatus, 503},
		{"/moved", false, ErrStatus, 302}, // never followed: load goes only where named
		{"/reset", false, ErrReset, 0},
		{"/stuck", false, ErrTimeout, 0},
	} {
		timeout := DefaultTimeout // a busy machine answers late, never this late
		if c.kind == ErrTimeout {
			timeout = 300 * time.Millisecond
		}
		tg := newTarget(t, Spec{URL: srv.URL + c.path}, Options{Conns: 1, Timeout: timeout})
		d, err := tg.Acquire(context.Background(), "k", Call{})
		var ce *CallError
		switch {
		case c.kind == "" && (err != nil || d.Allowed != c.allow || d.Status != c.status):
			t.Errorf("%s: %+v, %v; want allowed=%v status %d", c.path, d, err, c.allow, c.status)
		case c.kind != "" && (!errors.As(err, &ce) || ce.Kind != c.kind || ce.Status != c.status):
			t.Errorf("%s: err %v (%#v); want kind %s status %d", c.path, err, err, c.kind, c.status)
		case c.kind != "" && d.Allowed:
			t.Errorf("%s: an error is never an admit", c.path)
		}
	}
}

func TestAcquireReadsHeadersWhenTheDecisionNamesThem(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("blocked") == "1" {
			w.Header().Set("X-Limited", "yes")
		}
	}))
	defer srv.Close()
	tg := newTarget(t, Spec{URL: srv.URL + "/?blocked={seq}", Admitted: "status == 200 and header['x-limited'] == nil", Refused: "header['X-Limited'] == 'yes'"}, Options{})
	for seq, want := range []bool{true, false} {
		d, err := tg.Acquire(context.Background(), "k", Call{Seq: uint64(seq)})
		if err != nil || d.Allowed != want {
			t.Errorf("seq %d: %+v, %v; want allowed=%v", seq, d, err, want)
		}
	}
}

func TestAcquireInstantsBoundTheHandlersDecision(t *testing.T) {
	var decided sync.Map // seq -> time the handler decided, on this process's monotonic clock
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		decided.Store(r.URL.Query().Get("s"), time.Now())
	}))
	defer srv.Close()
	tg := newTarget(t, Spec{URL: srv.URL + "/?s={seq}"}, Options{Conns: 4})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				seq := uint64(w*1000 + i)
				d, err := tg.Acquire(context.Background(), "k", Call{Worker: w, Seq: seq})
				if err != nil {
					t.Error(err)
					return
				}
				at, _ := decided.Load(itoa(seq))
				if at, ok := at.(time.Time); !ok || at.Before(d.Sent) || at.After(d.Received) {
					t.Errorf("seq %d decided at %v, outside [sent %v, received %v]", seq, at, d.Sent, d.Received)
				}
			}
		}()
	}
	wg.Wait()
}

func itoa(u uint64) string { return string(Call{Seq: u}.appendSeq(nil)) }

func (c Call) appendSeq(b []byte) []byte {
	t := &template{pieces: []piece{{field: fieldSeq}}}
	return t.appendTo(b, "", c)
}

func TestConnectionsAreKeptAliveAndBoundedByConns(t *testing.T) {
	var opened, inFlight, peak atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		time.Sleep(time.Millisecond) // long enough for workers to pile up on two connections
		inFlight.Add(-1)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			opened.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	tg := newTarget(t, Spec{URL: srv.URL + "/"}, Options{Conns: 2})
	var wg sync.WaitGroup
	for w := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 30 {
				if _, err := tg.Acquire(context.Background(), "k", Call{Worker: w, Seq: uint64(i)}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if opened.Load() > 2 || peak.Load() > 2 {
		t.Errorf("6 workers on --conns 2: %d connections opened, %d requests at once; want at most 2 of each", opened.Load(), peak.Load())
	}
}

func TestTheClientIgnoresProxiesFromTheEnvironment(t *testing.T) {
	t.Setenv("HTTP_PROXY", "http://127.0.0.1:1")
	t.Setenv("http_proxy", "http://127.0.0.1:1")
	t.Setenv("NO_PROXY", "")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	tg := newTarget(t, Spec{URL: srv.URL + "/"}, Options{})
	if d, err := tg.Acquire(context.Background(), "k", Call{}); err != nil || !d.Allowed {
		t.Errorf("with a proxy in the environment: %+v, %v", d, err)
	}
}

func TestTheClientDialsOnlyTheTargetsAddress(t *testing.T) {
	tg := newTarget(t, Spec{URL: "http://127.0.0.1:9/"}, Options{})
	if _, err := tg.dial(context.Background(), "tcp", "127.0.0.1:10"); err == nil || !strings.Contains(err.Error(), "load goes only to 127.0.0.1:9") {
		t.Errorf("dial another address: %v", err)
	}
}

func TestTheAddressIsTheOneTheTransportDials(t *testing.T) {
	for _, c := range []struct{ url, addr string }{
		{"http://127.0.0.1/a", "127.0.0.1:80"},
		{"HTTPS://Example.COM/a", "Example.COM:443"},
		{"http://[::1]:8080/", "[::1]:8080"},
		{"http://bücher.example/", "xn--bcher-kva.example:80"},
	} {
		tg := newTarget(t, Spec{URL: c.url}, Options{})
		if tg.Addr() != c.addr {
			t.Errorf("%s: address %s; want %s", c.url, tg.Addr(), c.addr)
		}
	}
}

func TestPreflightNamesTheAddressThatRefuses(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	tg := newTarget(t, Spec{Name: "naive", URL: "http://" + addr + "/a/{key}"}, Options{})
	err = tg.Preflight(context.Background())
	if err == nil || err.Error() != "--http naive: nothing answers at "+addr+" (connection refused)" {
		t.Fatalf("Preflight = %v", err)
	}
	if code, _ := exitcode.Classify(err, func(s string) string { return s }); code != exitcode.Usage {
		t.Errorf("exit %d; want %d", code, exitcode.Usage)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("a preflight sends no request")
	}))
	defer srv.Close()
	tg = newTarget(t, Spec{URL: srv.URL + "/"}, Options{})
	if err := tg.Preflight(context.Background()); err != nil {
		t.Errorf("Preflight of a live server: %v", err)
	}
}
