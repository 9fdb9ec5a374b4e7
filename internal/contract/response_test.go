package contract

import (
	"net/http"
	"strings"
	"sync"
	"testing"
)

func headers(h http.Header) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := h[http.CanonicalHeaderKey(name)]
		if !ok || len(v) == 0 {
			return "", false
		}
		return v[0], true
	}
}

func TestResponseDefaultsReadTheStatus(t *testing.T) {
	admitted, err := CompileResponse("--http-admitted", DefaultHTTPAdmitted)
	if err != nil {
		t.Fatal(err)
	}
	refused, err := CompileResponse("--http-refused", DefaultHTTPRefused)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		status          int
		admits, refuses bool
	}{{200, true, false}, {204, true, false}, {299, true, false}, {300, false, false}, {429, false, true}, {503, false, false}, {199, false, false}} {
		if got, err := admitted.Eval(c.status, nil); err != nil || got != c.admits {
			t.Errorf("admitted(%d) = %v, %v; want %v", c.status, got, err, c.admits)
		}
		if got, err := refused.Eval(c.status, nil); err != nil || got != c.refuses {
			t.Errorf("refused(%d) = %v, %v; want %v", c.status, got, err, c.refuses)
		}
	}
	if !admitted.ByStatus() || !refused.ByStatus() {
		t.Error("the defaults read the status alone, so they may be judged once per code")
	}
}

func TestResponseReadsHeadersByNameInAnyCase(t *testing.T) {
	r, err := CompileResponse("--http-refused", "status == 200 and header['x-ratelimit-remaining'] == '0' or header['Retry-After'] ~= nil")
	if err != nil {
		t.Fatal(err)
	}
	if r.ByStatus() {
		t.Fatal("an expression reading headers is not the status's alone")
	}
	for _, c := range []struct {
		h    http.Header
		want bool
	}{
		{http.Header{"X-Ratelimit-Remaining": {"0"}}, true},
		{http.Header{"X-Ratelimit-Remaining": {"3"}}, false},
		{http.Header{"Retry-After": {"1"}}, true},
		{http.Header{}, false},
	} {
		if got, err := r.Eval(200, headers(c.h)); err != nil || got != c.want {
			t.Errorf("headers %v: got %v, %v; want %v", c.h, got, err, c.want)
		}
	}
	if got, err := r.Eval(200, nil); err != nil || got {
		t.Errorf("no headers: got %v, %v; want false", got, err)
	}
}

func TestResponseHeaderTableCarriesNothingBetweenCalls(t *testing.T) {
	r, err := CompileResponse("--http-admitted", "(function() header['x'] = '1' return true end)()")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Eval(200, nil); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("a write to header: err = %v; want read-only", err)
	}
}

func TestResponseErrorsNameTheFlag(t *testing.T) {
	for _, c := range []struct{ expr, want string }{
		{"", "--http-admitted: empty expression; want a Lua expression over status and header"},
		{"status >=", "--http-admitted: syntax error at the end of the expression"},
		{"status == = 2", "--http-admitted: column 11: syntax error"},
	} {
		_, err := CompileResponse("--http-admitted", c.expr)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("CompileResponse(%q) = %v; want prefix %q", c.expr, err, c.want)
		}
	}
	r, err := CompileResponse("--http-admitted", "status + 1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Eval(200, nil); err == nil || !strings.Contains(err.Error(), "not true or false") {
		t.Errorf("a number: err = %v; want not true or false", err)
	}
	r, err = CompileResponse("--http-admitted", "header['n'] > 1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Eval(200, nil); err == nil || !strings.HasPrefix(err.Error(), `--http-admitted "header['n'] > 1" failed on a response of status 200: `) {
		t.Errorf("a runtime error: err = %v", err)
	}
}

func TestResponseIsSafeForConcurrentUse(t *testing.T) {
	r, err := CompileResponse("--http-refused", "status == 429 or header['X-Blocked'] == 'yes'")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				blocked := (g+i)%2 == 0
				h := http.Header{}
				if blocked {
					h.Set("X-Blocked", "yes")
				}
				if got, err := r.Eval(200, headers(h)); err != nil || got != blocked {
					t.Errorf("got %v, %v; want %v", got, err, blocked)
					return
				}
			}
		}()
	}
	wg.Wait()
}
