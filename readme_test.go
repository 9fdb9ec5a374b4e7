package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/redistest"
	"github.com/limitctl/limitctl/scripts"
)

// readmeCommands extracts every command the README shows: the lines of ```sh blocks, and the
// run: lines and the action's args: lines of ```yaml blocks, without their trailing comments.
func readmeCommands(t *testing.T) []string {
	t.Helper()
	f, err := os.Open("README.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
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
		case lang == "yaml" && strings.HasPrefix(trimmed, "run: "):
			cmds = append(cmds, stripComment(strings.TrimPrefix(trimmed, "run: ")))
		case lang == "yaml" && strings.HasPrefix(trimmed, "args: "):
			// A step of the GitHub Action (action.yml) runs limitctl with these arguments.
			cmds = append(cmds, "limitctl "+stripComment(strings.TrimPrefix(trimmed, "args: ")))
		}
	}
	return cmds
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

// TestEveryReadmeCommandRuns runs each command the README shows against a throw-away server
// seeded with the keys the examples talk about, with the built binary as limitctl on PATH.
func TestEveryReadmeCommandRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every README command, including hammers of several seconds")
	}
	cmds := readmeCommands(t)
	if len(cmds) < 8 {
		t.Fatalf("found only %d commands in README.md: %q", len(cmds), cmds)
	}
	root, _ := os.Getwd()
	bin := t.TempDir()
	if out, err := exec.Command("go", "build", "-o", filepath.Join(bin, "limitctl"), ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	srv := redistest.Start(t)
	seedReadmeKeys(t, srv.Client(t))
	work := t.TempDir()
	os.MkdirAll(filepath.Join(work, "limiter"), 0o755)
	os.WriteFile(filepath.Join(work, "limiter", "acquire.lua"), []byte(scripts.ConcurrencyAcquire), 0o644)
	// "Verify a limiter you already have" runs the scripts in testdata/limiters by that path.
	if err := os.Symlink(filepath.Join(root, "testdata"), filepath.Join(work, "testdata")); err != nil {
		t.Fatal(err)
	}

	for _, c := range cmds {
		t.Run(c, func(t *testing.T) {
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
			case strings.HasPrefix(c, "limitctl "):
				cmd = exec.Command("bash", "-c", c)
				cmd.Dir = work
			default:
				t.Fatalf("the README shows a command this test does not know how to run: %s", c)
			}
			cmd.Env = append(append(os.Environ(), cmd.Env...), "PATH="+bin+":"+os.Getenv("PATH"), "REDIS_URL="+srv.URL(), "NO_COLOR=1")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v\n%s", c, err, out)
			}
		})
	}
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

// The README's ACL table repeats docs/acl.md, whose every line cmd/acl_test.go runs against a
// real server: each rule the README shows must be one of those, word for word.
func TestReadmeACLsAreTheTestedOnes(t *testing.T) {
	readme, err := os.ReadFile("README.md")
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
			t.Errorf("README shows an ACL rule docs/acl.md does not test:\n%s", line)
		}
	}
	if shown < 6 {
		t.Errorf("README shows %d ACL rules, want one per command that talks to Redis", shown)
	}
}
