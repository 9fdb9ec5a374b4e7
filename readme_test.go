package main

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/limitapp"
	"github.com/limitctl/limitctl/internal/limiterfile"
	"github.com/limitctl/limitctl/internal/loadtools"
	"github.com/limitctl/limitctl/internal/redistest"
	"github.com/limitctl/limitctl/scripts"
)

// docCommands extracts every command a Markdown file shows: the lines of ```sh blocks and, in
// the README, the run: lines and the action's args: lines of ```yaml blocks (a workflow's
// steps), without their trailing comments.
func docCommands(t *testing.T, name string) []string {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	readme := name == "README.md"
	var cmds []string
	lang := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			if lang == "" {
				lang = strings.TrimPrefix(trimmed, "```")
				if lang == "" {
					lang = "text"
				}
			} else {
				lang = ""
			}
			continue
		}
		switch {
		case lang == "sh" && trimmed != "" && !strings.HasPrefix(trimmed, "#"):
			cmds = append(cmds, stripComment(trimmed))
		case readme && lang == "yaml" && strings.HasPrefix(trimmed, "run: "):
			cmds = append(cmds, stripComment(strings.TrimPrefix(trimmed, "run: ")))
		case readme && lang == "yaml" && strings.HasPrefix(trimmed, "args: "):
			// A step of the GitHub Action (action.yml) runs limitctl with these arguments.
			cmds = append(cmds, "limitctl "+stripComment(strings.TrimPrefix(trimmed, "args: ")))
		}
	}
	return cmds
}

// guideFiles are the README and the docs whose commands the tests run.
func guideFiles(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join("docs", "*.md"))
	if err != nil || len(docs) < 6 {
		t.Fatalf("docs/*.md: %v (%d files)", err, len(docs))
	}
	return append([]string{"README.md"}, docs...)
}

// readmeFiles writes the files the README shows whole before the commands that use them: a
// ```yaml block whose first line names a path under limiter/ ("# limiter/limiter.yaml: ...").
func readmeFiles(t *testing.T, work string) {
	t.Helper()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, block := range regexp.MustCompile("(?s)```yaml\n(# (limiter/[^:\n]+)[^\n]*\n.*?)```").FindAllStringSubmatch(string(readme), -1) {
		path := filepath.Join(work, block[2])
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(block[1]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// stripComment drops a trailing "  # ..." shell comment outside quotes.
func stripComment(s string) string {
	quote := rune(0)
	for i, c := range s {
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote == 0 && (c == '\'' || c == '"'):
			quote = c
		case quote == 0 && c == '#' && i > 0 && s[i-1] == ' ':
			return strings.TrimSpace(s[:i])
		}
	}
	return s
}

// TestEveryReadmeCommandRuns runs each command the README and the docs show against a
// throw-away server seeded with the keys the examples talk about, with the built binary as
// limitctl on PATH.
func TestEveryReadmeCommandRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every command of the README and the docs, including hammers of several seconds")
	}
	root, _ := os.Getwd()
	bin := t.TempDir()
	if out, err := exec.Command("go", "build", "-o", filepath.Join(bin, "limitctl"), ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	srv := redistest.Start(t)
	seedReadmeKeys(t, srv.Client(t))
	// The load tests the guide judges go to $API_URL: a correct window of 10 a second behind HTTP
	// (internal/limitapp), which vegeta (make load-tools) attacks.
	api := limitapp.StartOn(t, srv.Client(t), limitapp.Config{Limit: 10, Window: time.Second})
	t.Setenv("API_URL", "http://"+api.Addr+"/"+string(limitapp.Epoch))
	bin = bin + ":" + filepath.Dir(loadtools.Vegeta(t))
	// The HTTP examples judge an application's limiters (internal/limitapp, its keys in the same
	// Redis) at $APP, as a reader's would be at their service's address.
	app := limitapp.StartOn(t, srv.Client(t), limitapp.Config{Limit: 20, Window: time.Second, Hold: 200 * time.Millisecond})
	t.Setenv("APP", "http://"+app.Addr)
	work := t.TempDir()
	os.MkdirAll(filepath.Join(work, "limiter"), 0o755)
	os.WriteFile(filepath.Join(work, "limiter", "acquire.lua"), []byte(scripts.ConcurrencyAcquire), 0o644)
	readmeFiles(t, work)
	// The docs run the scripts in testdata/limiters and the limiter files in docs/examples by
	// those paths.
	for _, dir := range []string{"testdata", "docs"} {
		if err := os.Symlink(filepath.Join(root, dir), filepath.Join(work, dir)); err != nil {
			t.Fatal(err)
		}
	}
	for _, file := range guideFiles(t) {
		cmds := docCommands(t, file)
		if file == "README.md" && len(cmds) < 8 {
			t.Fatalf("found only %d commands in README.md: %q", len(cmds), cmds)
		}
		for _, c := range cmds {
			t.Run(file+"/"+c, func(t *testing.T) {
				out, err := readmeCommand(t, c, root, work, bin, srv).CombinedOutput()
				for attempt := 1; err != nil && attempt < readmeAttempts && (onlyNotJudged(out) || onlyUnseen(out, err)); attempt++ {
					t.Logf("run %d not judged, or its catch unseen (calls too slow to be evidence on a busy machine), running it again:\n%s", attempt, out)
					out, err = readmeCommand(t, c, root, work, bin, srv).CombinedOutput()
				}
				if err != nil {
					t.Fatalf("%s: %v\n%s", c, err, out)
				}
			})
		}
	}
}

// readmeAttempts bounds the runs of a README command whose verdict was not judged.
const readmeAttempts = 5

// onlyNotJudged reports whether a hammer's output failed only for want of evidence: a verdict
// of not judged, and none that proves a fault. Not judged is no evidence either way (the
// allowances for slow calls left too few admits judged), so the command is run again.
func onlyNotJudged(out []byte) bool {
	s := string(out)
	if !strings.Contains(s, "not judged") {
		return false
	}
	for _, fault := range []string{"OVERSHOOT", "TOO STRICT", "LEAKS", "decisions failed"} {
		if strings.Contains(s, fault) {
			return false
		}
	}
	return true
}

// onlyUnseen reports whether a hammer's run (out, and its error err) failed only because an
// example's expected catch was not seen: exit 3, and every failed assertion an
// 'NAME.overshoot>0' whose strategy NAME read exact only as far as its evidence saw (a wrong
// limiter missed on a busy machine, which a run again may catch). Any other failure, or a fault
// proven, is a failure.
func onlyUnseen(out []byte, err error) bool {
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		return false
	}
	lines := strings.Split(string(out), "\n")
	failed := 0
	for _, line := range lines {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "FAIL  ")
		if !ok {
			continue
		}
		failed++
		name, ok := strings.CutSuffix(strings.Fields(rest)[0], ".overshoot>0")
		if !ok || !slices.ContainsFunc(lines, func(l string) bool {
			f := strings.Fields(l)
			return len(f) > 1 && f[0] == name && f[1] == "exact" && strings.Contains(l, "could have escaped")
		}) {
			return false
		}
	}
	return failed > 0
}

// readmeCommand is how the README test runs command c: the built binary (in bin) as limitctl on
// PATH, against srv, from work (limitctl) or the repository's root (go, make).
func readmeCommand(t *testing.T, c, root, work, bin string, srv *redistest.Server) *exec.Cmd {
	t.Helper()
	var cmd *exec.Cmd
	switch {
	case strings.HasPrefix(c, "make "):
		// make test would run this suite from inside itself, and the benchmark targets take
		// minutes: check that the target and everything it runs resolve (make -n).
		cmd = exec.Command("make", "-n", strings.TrimPrefix(c, "make "))
		cmd.Dir = root
	case c == "go install github.com/limitctl/limitctl@latest && sudo apt-get install -y redis-server":
		// The install step, offline: install this checkout, and redis-server is already here.
		cmd = exec.Command("bash", "-c", "go install . && command -v redis-server")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GOBIN="+t.TempDir())
	case strings.HasPrefix(c, "go "):
		cmd = exec.Command("bash", "-c", c)
		cmd.Dir = root
	case strings.HasPrefix(c, "limitctl "), strings.Contains(c, "| vegeta attack "):
		cmd = exec.Command("bash", "-c", c)
		cmd.Dir = work
	default:
		t.Fatalf("the README shows a command this test does not know how to run: %s", c)
	}
	cmd.Env = append(append(os.Environ(), cmd.Env...), "PATH="+bin+":"+os.Getenv("PATH"), "REDIS_URL="+srv.URL(), "NO_COLOR=1")
	return cmd
}

// seedReadmeKeys leaves the keys the ops example inspects and purges: a concurrency set that
// leaked 21 members three hours ago next to two live ones.
func seedReadmeKeys(t *testing.T, rdb *redis.Client) {
	t.Helper()
	ctx := context.Background()
	old := time.Now().Add(-3 * time.Hour).UnixMilli()
	for i := 0; i < 21; i++ {
		rdb.ZAdd(ctx, "rl:conc:checkout", redis.Z{Score: float64(old + int64(i)*1000), Member: "req-" + strconv.Itoa(i)})
	}
	now := time.Now().UnixMilli()
	rdb.ZAdd(ctx, "rl:conc:checkout", redis.Z{Score: float64(now - 1000), Member: "req-live-1"}, redis.Z{Score: float64(now), Member: "req-live-2"})
	rdb.ZAdd(ctx, "rl:conc:search", redis.Z{Score: float64(now), Member: "req-live-3"})
	rdb.PExpire(ctx, "rl:conc:search", time.Minute)
	// "Let a customer through now": user42's Spring bucket (empty) and Laravel counter (over its
	// limit), user43's bucket, and user42's session, which no limiter wrote.
	sec := strconv.FormatInt(time.Now().Unix(), 10)
	rdb.SetEx(ctx, "request_rate_limiter.{user42}.tokens", "0", time.Hour)
	rdb.SetEx(ctx, "request_rate_limiter.{user42}.timestamp", sec, time.Hour)
	rdb.SetEx(ctx, "request_rate_limiter.{user43}.tokens", "12", time.Hour)
	rdb.SetEx(ctx, "request_rate_limiter.{user43}.timestamp", sec, time.Hour)
	rdb.SetEx(ctx, "laravel_cache_:user42:timer", strconv.FormatInt(time.Now().Unix()+3600, 10), time.Hour)
	rdb.SetEx(ctx, "laravel_cache_:user42", "61", time.Hour)
	rdb.HSet(ctx, "session:user42", "name", "Ada")
}

// docs/operations.md's ACL table repeats docs/acl.md, whose every line cmd/acl_test.go runs
// against a real server: each rule it shows must be one of those, word for word.
func TestReadmeACLsAreTheTestedOnes(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join("docs", "acl.md"))
	if err != nil {
		t.Fatal(err)
	}
	tested := map[string]bool{}
	for _, line := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(line, "ACL SETUSER ") {
			tested[strings.TrimSpace(line)] = true
		}
	}
	shown := 0
	for _, line := range strings.Split(string(readme), "\n") {
		if !strings.HasPrefix(line, "ACL SETUSER ") {
			continue
		}
		shown++
		if !tested[strings.TrimSpace(line)] {
			t.Errorf("docs/operations.md shows an ACL rule docs/acl.md does not test:\n%s", line)
		}
	}
	if shown < 6 {
		t.Errorf("docs/operations.md shows %d ACL rules, want one per command that talks to Redis", shown)
	}
}

// readmeBlockAfter returns the lines of the first fenced block that follows marker in the
// README.
func readmeBlockAfter(t *testing.T, marker string) []string {
	t.Helper()
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, marker)
	if i < 0 {
		t.Fatalf("README.md has no %q", marker)
	}
	s = s[i:]
	open := strings.Index(s, "\n\n```") // a fence after a blank line opens a block
	if open < 0 {
		t.Fatalf("no output block after %q", marker)
	}
	s = s[open+2:]
	s = s[strings.Index(s, "\n")+1:]
	return strings.Split(s[:strings.Index(s, "\n```")], "\n")
}

// fields are a line's words: how a table line reads once alignment is set aside (a rule line
// under a table reads as one).
func fields(line string) string {
	if strings.Trim(line, "─") == "" {
		return "─"
	}
	return strings.Join(strings.Fields(line), " ")
}

// The README's example outputs are what the tool prints: the same columns at the same width
// (the README's blocks are the width of a terminal that shows them), the same rows where the
// numbers do not depend on the clock, and the verdict lines' words.
func TestReadmeOutputsMatchTheTool(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs a hammer")
	}
	bin := filepath.Join(t.TempDir(), "limitctl")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	srv := redistest.Start(t)
	seedReadmeKeys(t, srv.Client(t))
	// The README's server is the default 127.0.0.1:6379; the test's port is longer by a digit
	// or so, and the terminal is that much wider.
	const readmeAddr = "127.0.0.1:6379"
	limitctl := func(columns int, args ...string) []string {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"--addr", srv.Addr, "-o", "table"}, args...)...)
		cmd.Env = append(os.Environ(), "COLUMNS="+strconv.Itoa(columns+len(srv.Addr)-len(readmeAddr)), "NO_COLOR=1")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("limitctl %v: %v\n%s", args, err, out)
		}
		return strings.Split(strings.TrimRight(strings.ReplaceAll(string(out), srv.Addr, readmeAddr), "\n"), "\n")
	}
	width := func(lines []string) (w int) {
		for _, l := range lines {
			w = max(w, len([]rune(l)))
		}
		return w
	}

	// inspect: the header and each key's row up to its ages, and its flags.
	want := readmeBlockAfter(t, "limitctl inspect --members rl:conc:checkout --top 5")
	got := limitctl(width(want), "inspect", "rl:conc:*", "--stale", "10m", "--limit", "20")
	if len(got) != len(want) || fields(got[0]) != fields(want[0]) {
		t.Fatalf("inspect prints\n%s\nthe README shows\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for i := 1; i <= 2; i++ {
		g, w := strings.Fields(got[i]), strings.Fields(want[i])
		if g[0] != w[0] || g[2] != w[2] || g[3] != w[3] || g[len(g)-1] != w[len(w)-1] { // key, kind, size, flags
			t.Errorf("inspect row %d: the tool prints %q, the README %q", i, got[i], want[i])
		}
	}

	// purge: every number is the seed's, so whole rows compare.
	want = readmeBlockAfter(t, "limitctl purge 'rl:conc:*' --older-than 10m --yes")
	got = limitctl(width(want), "purge", "rl:conc:*", "--older-than", "10m", "--yes")
	for i := range max(len(got), len(want)) {
		if i >= len(got) || i >= len(want) || fields(got[i]) != fields(want[i]) {
			t.Fatalf("purge prints\n%s\nthe README shows\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}

	// hammer's summary at 80 columns: the header, the run line and the verdict lines' words.
	want = readmeBlockAfter(t, "On an 80-column terminal the summary reads:")
	got = limitctl(80, "hammer", "--strategies", "naive,lua", "--duration", "2s", "--tui", "off")
	if fields(got[0]) != fields(want[0]) {
		t.Errorf("hammer's table header is\n%s\nthe README shows\n%s", got[0], want[0])
	}
	joined := strings.Join(got, "\n")
	for _, w := range []string{"concurrency limiter, limit 20, 64 workers per strategy, ", "\nlua    exact      peak 20 of 20, 0 events, 0 false rejects"} {
		if !strings.Contains(joined, w) || !strings.Contains(strings.Join(want, "\n"), w) {
			t.Errorf("want %q in both the tool's summary and the README's:\n%s", w, joined)
		}
	}
}

// The README is a guide: at most 400 lines, one screen per user, and it points at every help
// topic and every page of docs/ that holds the rest, each of which exists.
func TestTheReadmeIsAGuide(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(string(readme), "\n"); lines > 400 {
		t.Errorf("README.md is %d lines, more than 400: the rest belongs in docs/", lines)
	}
	for _, topic := range []string{"limiter-file", "contract", "evidence", "http", "exit-codes", "connections"} {
		if !strings.Contains(string(readme), "`"+topic+"`") && !strings.Contains(string(readme), "limitctl help "+topic) {
			t.Errorf("README.md does not point at limitctl help %s", topic)
		}
	}
	for _, doc := range []string{"contract", "evidence", "http", "operations", "benchmarks", "ci"} {
		path := "docs/" + doc + ".md"
		if !strings.Contains(string(readme), "]("+path+")") {
			t.Errorf("README.md does not link %s", path)
		}
		if _, err := os.Stat(path); err != nil {
			t.Errorf("%s: %v", path, err)
		}
	}
}

// Every example of the README and the docs that states five or more of the limiter file's
// fields as flags has its limiter file (docs/examples, its flags in its head comment, and
// cmd's TestEveryExampleLimiterFileRoundTrips proves they state the same run), and every file
// there is run by a command of the docs.
func TestEveryLongExampleHasItsLimiterFile(t *testing.T) {
	held := map[string]bool{}
	for _, name := range limiterfile.Flags() {
		held[name] = true
	}
	files, _ := filepath.Glob(filepath.Join("docs", "examples", "*.yaml"))
	asFlags := map[string]string{}
	for _, file := range files {
		text, _ := os.ReadFile(file)
		_, line, _ := strings.Cut(string(text), "\n# As flags: ")
		line, _, _ = strings.Cut(line, "\n")
		asFlags[strings.Join(limiterWords(sh(line), held), "\x00")] = file
	}
	used := map[string]bool{}
	for _, doc := range guideFiles(t) {
		for _, c := range docCommands(t, doc) {
			words := sh(c)
			if len(words) < 2 || words[0] != "limitctl" || words[1] != "hammer" {
				continue
			}
			for i, w := range words {
				if (w == "-f" || w == "--limiter-file") && i+1 < len(words) {
					used[words[i+1]] = true
				}
			}
			lim := limiterWords(words[2:], held)
			distinct := map[string]bool{}
			for _, w := range lim {
				if strings.HasPrefix(w, "--") {
					distinct[w] = true
				}
			}
			if len(distinct) < 5 || slices.Contains(words, "--print-limiter") {
				continue
			}
			if asFlags[strings.Join(lim, "\x00")] == "" {
				t.Errorf("%s: an example of %d contract flags with no limiter file in docs/examples:\n%s", doc, len(distinct), c)
			}
		}
	}
	for _, file := range files {
		if !used[file] {
			t.Errorf("%s is run by no command of the README or the docs", file)
		}
	}
}

// limiterWords are the flags of args (a hammer command's, after "hammer") that the limiter file
// holds, each with its value.
func limiterWords(args []string, held map[string]bool) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		name := strings.TrimLeft(args[i], "-")
		if !strings.HasPrefix(args[i], "--") {
			continue
		}
		takesValue := name != "no-lint" && name != "keep-keys" && name != "print-limiter"
		if held[name] {
			out = append(out, args[i])
			if takesValue && i+1 < len(args) {
				out = append(out, args[i+1])
			}
		}
		if takesValue {
			i++
		}
	}
	return out
}

// sh splits a command line as sh does for the quoting the docs use ('...' and "..."), up to its
// first unquoted > redirection.
func sh(line string) []string {
	var words []string
	var word strings.Builder
	inWord, quote := false, rune(0)
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			word.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == '>' || r == '|':
			return words
		case r == ' ' || r == '\t':
			if inWord {
				words, inWord = append(words, word.String()), false
				word.Reset()
			}
		default:
			word.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, word.String())
	}
	return words
}

// A README command is run again only when the catch it expects went unseen: never for a fault
// proven, another failed assertion, or another exit.
func TestOnlyUnseenRetriesOnlyAnUnseenCatch(t *testing.T) {
	exit := func(code string) error { return exec.Command("sh", "-c", "exit "+code).Run() }
	unseen := "naive   exact  peak 5 of 20, 0 events; an overshoot of up to +15 held at once could have escaped this evidence where it was thinnest\n" +
		"atomic  exact  peak 6 of 20, 0 events\nFAIL  naive.overshoot>0  (actual 0)\nPASS  atomic.overshoot==0  (actual 0)\n"
	if !onlyUnseen([]byte(unseen), exit("3")) {
		t.Error("an unseen catch is not run again")
	}
	for name, c := range map[string]struct {
		out  string
		code string
	}{
		"exit 1":             {unseen, "1"},
		"another assertion":  {unseen + "FAIL  atomic.overshoot==0  (actual 2)\n", "3"},
		"exact as it stands": {strings.Replace(unseen, "; an overshoot of up to +15 held at once could have escaped this evidence where it was thinnest", "", 1), "3"},
		"no failed line":     {"naive   exact  peak 5 of 20; an overshoot of up to +4 could have escaped\n", "3"},
	} {
		if onlyUnseen([]byte(c.out), exit(c.code)) {
			t.Errorf("%s: run again", name)
		}
	}
}
