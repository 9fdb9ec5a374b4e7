package report

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

var screenshot = flag.String("screenshot", "", "also save a PNG of the sample report here (to look at it)")

// chromium finds a Chromium to test with: $CHROMIUM, else Debian's chromium on PATH. Missing,
// it fails the test in CI (CI=true) and skips it elsewhere.
func chromium(t *testing.T) string {
	t.Helper()
	for _, c := range []string{os.Getenv("CHROMIUM"), "chromium", "chromium-browser", "google-chrome"} {
		if c == "" {
			continue
		}
		if path, err := exec.LookPath(c); err == nil {
			return path
		}
	}
	const msg = "no chromium on PATH (apt-get install chromium, or set CHROMIUM)"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg + ": the browser test must run in CI")
	}
	t.Skip(msg + ": skipping the browser test locally")
	return ""
}

// load opens a page in headless Chromium with name resolution shut (an offline machine) and
// returns the DOM it built and every problem seen: console messages (the report has no
// script, so any message is a problem) and each network fetch the page itself started,
// read from Chromium's net log (its own background requests have no page initiator).
func load(t *testing.T, browser, page string, extra ...string) (dom string, problems []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	netLog := filepath.Join(t.TempDir(), "net.json")
	args := append([]string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--disable-extensions",
		"--user-data-dir=" + t.TempDir(),
		"--host-resolver-rules=MAP * ~NOTFOUND",
		"--enable-logging=stderr", "--v=0",
		"--log-net-log=" + netLog,
	}, extra...)
	cmd := exec.CommandContext(ctx, browser, append(args, "file://"+page)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", browser, err, errOut.String())
	}
	for _, line := range strings.Split(errOut.String(), "\n") {
		if consoleLine.MatchString(line) {
			problems = append(problems, "console: "+strings.TrimSpace(line))
		}
	}
	return out.String(), append(problems, pageFetches(t, netLog)...)
}

var consoleLine = regexp.MustCompile(`:CONSOLE[:(]|Uncaught`)

// pageFetches lists the http(s) URLs that the page (not the browser) asked for.
func pageFetches(t *testing.T, netLog string) []string {
	t.Helper()
	raw, err := os.ReadFile(netLog)
	if err != nil {
		t.Fatalf("chromium wrote no net log: %v", err)
	}
	var log struct {
		Events []struct {
			Params struct {
				URL       string `json:"url"`
				Initiator string `json:"initiator"`
			} `json:"params"`
		} `json:"events"`
	}
	if err := json.Unmarshal(raw, &log); err != nil {
		t.Fatalf("net log: %v", err)
	}
	seen := map[string]bool{}
	var fetches []string
	for _, e := range log.Events {
		p := e.Params
		fromPage := p.Initiator != "" && p.Initiator != "not an origin"
		if fromPage && (strings.HasPrefix(p.URL, "http://") || strings.HasPrefix(p.URL, "https://")) && !seen[p.URL] {
			seen[p.URL] = true
			fetches = append(fetches, "fetch: "+p.URL)
		}
	}
	return fetches
}

func TestReportOpensInChromium(t *testing.T) {
	browser := chromium(t)
	page := filepath.Join(t.TempDir(), "report.html")
	f, err := os.Create(page)
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(f, fixtureData()); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	dom, problems := load(t, browser, page, "--dump-dom")
	for _, p := range problems {
		t.Errorf("loading the report: %s", p)
	}
	if !strings.Contains(dom, "<title>limitctl hammer") {
		t.Fatalf("chromium's DOM is not the report:\n%.2000s", dom)
	}
	// Each chart is in the DOM the browser built, as an SVG it parsed.
	for _, id := range []string{"chart-naive", "chart-lua", "chart-overview", "throughput-naive", "latency-lua"} {
		if !regexp.MustCompile(`id="` + id + `"[^>]*>\s*<svg[^>]*viewBox`).MatchString(dom) {
			t.Errorf("no rendered <svg> in #%s", id)
		}
	}
	if !strings.Contains(dom, "73,410") {
		t.Error("summary table missing from the DOM")
	}
	// The first overshoot as a sequence diagram the browser parsed: a lane per request (the
	// raced ones marked), Redis's lane, and the replies on the arrows back.
	seq := regexp.MustCompile(`(?s)id="sequence-naive"[^>]*>\s*<svg.*?</svg>`).FindString(dom)
	if seq == "" {
		t.Fatal("no rendered sequence diagram in #sequence-naive")
	}
	for _, want := range []string{`data-request="r4117"`, `data-request="r4120"`, `data-request="r4099"`, "r4117 · raced", ">Redis<",
		"ZCARD → 19", "ZCARD → 17", "ZADD → 1", "→ 21 held at 3.20s, limit 20"} {
		if !strings.Contains(seq, want) {
			t.Errorf("the sequence diagram does not show %q", want)
		}
	}
	if strings.Contains(dom, `id="sequence-lua"`) {
		t.Error("lua held, yet the report draws a sequence diagram for it")
	}

	shot := *screenshot
	if shot == "" {
		shot = filepath.Join(t.TempDir(), "report.png")
	}
	abs, err := filepath.Abs(shot)
	if err != nil {
		t.Fatal(err)
	}
	// Tall enough for the summary, naive's verdict and its sequence diagram.
	load(t, browser, page, "--screenshot="+abs, "--window-size=1180,2900", "--hide-scrollbars")
	if st, err := os.Stat(abs); err != nil || st.Size() == 0 {
		t.Fatalf("no screenshot: %v", err)
	}
	t.Logf("screenshot (the lanes and the replies of naive's first overshoot) in %s", abs)
}

// The browser check itself must catch what it is there to catch.
func TestChromiumCheckCatchesFetchesAndErrors(t *testing.T) {
	browser := chromium(t)
	page := filepath.Join(t.TempDir(), "bad.html")
	bad := `<!DOCTYPE html><html><head><link rel="stylesheet" href="https://fonts.example.com/a.css"/></head>` +
		`<body><img src="http://cdn.example.com/x.png"/><script>throw new Error("boom")</script></body></html>`
	if err := os.WriteFile(page, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	_, problems := load(t, browser, page, "--dump-dom")
	all := strings.Join(problems, "\n")
	for _, want := range []string{"https://fonts.example.com/a.css", "http://cdn.example.com/x.png", "boom"} {
		if !strings.Contains(all, want) {
			t.Errorf("the check missed %q; it saw:\n%s", want, all)
		}
	}
}
