package cmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/limitctl/limitctl/internal/redistest"
)

// TestBadInputAcrossCommands runs the built binary on bad input of every kind and checks the
// exact exit code and that stderr is one clear line: no usage dump, no stack trace, no password.
// Usage errors name a target that does not exist, so a flag that slipped through validation
// would show up as a connection failure (exit 1) instead of 2.
func TestBadInputAcrossCommands(t *testing.T) {
	skipInShortMode(t)
	srv := redistest.Start(t)
	ctx := context.Background()
	rdb := srv.Client(t)
	rdb.RPush(ctx, "rl:list", "a", "b")
	rdb.Set(ctx, "rl:string", "x", 0)

	dir := t.TempDir()
	file := func(name string, content []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, content, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	binaryScript := file("image.lua", []byte{0x89, 'P', 'N', 'G', 0, 0, 0, 1})
	emptyScript := file("empty.lua", []byte("\n\n"))
	brokenScript := file("broken.lua", []byte("return redis.call('GET', KEYS[1]\n"))
	notLua := file("notes.lua", []byte("this is not lua at all\n"))
	pwFile := file("pw", []byte("s3cr3t-pass\n"))

	closed := "127.0.0.1:" + itoa(redistest.FreePort(t))
	const secret = "s3cr3t-pass"
	cases := []struct {
		name string
		code int
		args []string
		want string // a fragment stderr must contain
	}{
		// the target and global flags
		{"url with a bad port", ExitUsage, []string{"-u", "redis://bob:" + secret + "@127.0.0.1:notaport", "scripts", "status"}, "bad --url"},
		{"url with a port out of range", ExitUsage, []string{"-u", "redis://127.0.0.1:99999", "scripts", "status"}, "port must be 1-65535"},
		{"url with a bad db", ExitUsage, []string{"-u", "redis://127.0.0.1:6379/notadb", "scripts", "status"}, "bad --url"},
		{"url that does not parse", ExitUsage, []string{"-u", "redis://%zz", "scripts", "status"}, "bad --url"},
		{"url with an unknown scheme", ExitUsage, []string{"-u", "http://127.0.0.1:1", "scripts", "status"}, "scheme"},
		{"url and addr together", ExitUsage, []string{"-u", "redis://" + closed, "--addr", closed, "scripts", "status"}, "give one of them"},
		{"empty addr", ExitUsage, []string{"--addr", "", "scripts", "status"}, "bad --addr"},
		{"addr without a port", ExitUsage, []string{"--addr", "localhost", "scripts", "status"}, "bad --addr"},
		{"addr with port 0", ExitUsage, []string{"--addr", "127.0.0.1:0", "scripts", "status"}, "port"},
		{"addr with a huge port", ExitUsage, []string{"--addr", "127.0.0.1:99999", "scripts", "status"}, "port"},
		{"negative db", ExitUsage, []string{"--addr", closed, "--db", "-1", "scripts", "status"}, "--db"},
		{"db that is not a number", ExitUsage, []string{"--addr", closed, "--db", "three", "scripts", "status"}, "invalid argument"},
		{"db with a cluster", ExitUsage, []string{"--addr", closed, "--db", "2", "--cluster", "scripts", "status"}, "cluster"},
		{"negative timeout", ExitUsage, []string{"--addr", closed, "--timeout", "-5s", "scripts", "status"}, "--timeout"},
		{"timeout without a unit", ExitUsage, []string{"--addr", closed, "--timeout", "5", "scripts", "status"}, "invalid argument"},
		{"tls cert without key", ExitUsage, []string{"--addr", closed, "--tls-cert", "c.pem", "scripts", "status"}, "--tls-key"},
		{"missing tls ca", ExitUsage, []string{"--addr", closed, "--tls-ca", "/nonexistent/ca.pem", "scripts", "status"}, "--tls-ca"},
		{"tls ca that is not PEM", ExitUsage, []string{"--addr", closed, "--tls-ca", notLua, "scripts", "status"}, "PEM"},
		{"missing password file", ExitUsage, []string{"--addr", closed, "--password-file", "/nonexistent/pw", "scripts", "status"}, "--password-file"},
		{"unknown output", ExitUsage, []string{"-o", "yaml", "scripts", "list"}, "yaml"},
		{"unknown command", ExitUsage, []string{"frobnicate"}, "unknown command"},
		{"unknown flag", ExitUsage, []string{"scripts", "list", "--frob"}, "unknown flag"},
		{"flag without its value", ExitUsage, []string{"scripts", "list", "--addr"}, "needs an argument"},
		{"connection refused", ExitError, []string{"--addr", closed, "scripts", "status"}, "cannot connect to " + closed},
		{"refused with a password in the url", ExitError, []string{"-u", "redis://bob:" + secret + "@" + closed, "scripts", "status"}, "cannot connect"},
		{"refused with a password file", ExitError, []string{"--addr", closed, "--password-file", pwFile, "scripts", "status"}, "cannot connect"},
		// scripts
		{"scripts show without a name", ExitUsage, []string{"scripts", "show"}, "script name"},
		{"scripts show two names", ExitUsage, []string{"scripts", "show", "fixed_window", "token_bucket"}, "script name"},
		{"scripts show unknown", ExitUsage, []string{"scripts", "show", "leaky_bucket"}, "unknown script"},
		{"scripts list with an argument", ExitUsage, []string{"scripts", "list", "extra"}, "unexpected argument"},
		{"scripts load unknown", ExitUsage, []string{"--addr", closed, "scripts", "load", "leaky_bucket"}, "unknown script"},
		{"scripts load missing file", ExitUsage, []string{"--addr", closed, "scripts", "load", "--file", "/nonexistent.lua"}, "cannot read script"},
		{"scripts load binary file", ExitUsage, []string{"--addr", closed, "scripts", "load", "--file", binaryScript}, "binary data"},
		{"scripts load empty file", ExitUsage, []string{"--addr", closed, "scripts", "load", "--file", emptyScript}, "empty"},
		{"scripts load a script Redis rejects", ExitError, []string{"--addr", srv.Addr, "scripts", "load", "--file", brokenScript}, "rejected script broken"},
		{"scripts status unknown", ExitUsage, []string{"--addr", closed, "scripts", "status", "leaky_bucket"}, "unknown script"},
		// hammer
		{"hammer zero workers", ExitUsage, []string{"--addr", closed, "hammer", "--workers", "0"}, "--workers"},
		{"hammer huge workers", ExitUsage, []string{"--addr", closed, "hammer", "--workers", "99999999999"}, "--workers"},
		{"hammer workers not a number", ExitUsage, []string{"--addr", closed, "hammer", "--workers", "many"}, "invalid argument"},
		{"hammer negative conns", ExitUsage, []string{"--addr", closed, "hammer", "--conns", "-1"}, "--conns"},
		{"hammer negative limit", ExitUsage, []string{"--addr", closed, "hammer", "--limit", "-1"}, "--limit"},
		{"hammer zero duration", ExitUsage, []string{"--addr", closed, "hammer", "--duration", "0s"}, "--duration"},
		{"hammer bad duration", ExitUsage, []string{"--addr", closed, "hammer", "--duration", "1fortnight"}, "invalid argument"},
		{"hammer negative hold", ExitUsage, []string{"--addr", closed, "hammer", "--hold", "-1ms"}, "--hold"},
		{"hammer zero window", ExitUsage, []string{"--addr", closed, "hammer", "--window", "0s"}, "--window"},
		{"hammer negative rate", ExitUsage, []string{"--addr", closed, "hammer", "--rate", "-5"}, "--rate"},
		{"hammer too many keys", ExitUsage, []string{"--addr", closed, "hammer", "--keys", "100000"}, "--keys"},
		{"hammer empty strategies", ExitUsage, []string{"--addr", closed, "hammer", "--strategies", ""}, "--strategies"},
		{"hammer a strategy twice", ExitUsage, []string{"--addr", closed, "hammer", "--strategies", "lua,lua"}, "twice"},
		{"hammer assert without value", ExitUsage, []string{"--addr", closed, "hammer", "--assert", "lua.p99<"}, "no value"},
		{"hammer assert without comparison", ExitUsage, []string{"--addr", closed, "hammer", "--assert", "nope"}, "no comparison"},
		{"hammer assert with a bad unit", ExitUsage, []string{"--addr", closed, "hammer", "--assert", "lua.p99<5parsecs"}, "duration"},
		{"hammer binary script", ExitUsage, []string{"--addr", closed, "hammer", "--script", binaryScript}, "binary data"},
		{"hammer prefix with braces", ExitUsage, []string{"--addr", closed, "hammer", "--prefix", "a{b}"}, "--prefix"},
		{"hammer pause without length", ExitUsage, []string{"--addr", closed, "hammer", "--inject", "pause@1s"}, "pause needs"},
		{"hammer report in a missing dir", ExitUsage, []string{"--addr", closed, "hammer", "--report", "/nonexistent/dir/r.html"}, "--report"},
		{"hammer with an argument", ExitUsage, []string{"--addr", closed, "hammer", "now"}, "unknown command \"now\" for limitctl hammer"},
		// lint
		{"lint without files", ExitUsage, []string{"lint"}, "FILE.lua"},
		{"lint missing file", ExitUsage, []string{"lint", "/nonexistent.lua"}, "cannot read script"},
		{"lint binary file", ExitUsage, []string{"lint", binaryScript}, "binary data"},
		{"lint stdin twice", ExitUsage, []string{"lint", "-", "-"}, "twice"},
		// inspect and purge
		{"inspect bad score unit", ExitUsage, []string{"--addr", closed, "inspect", "--score-unit", "parsecs"}, "--score-unit"},
		{"inspect bad stale", ExitUsage, []string{"--addr", closed, "inspect", "--stale", "soon"}, "invalid argument"},
		{"purge without keys", ExitUsage, []string{"--addr", closed, "purge", "--older-than", "10m"}, "want one or more keys or patterns to purge"},
		{"purge without older-than", ExitUsage, []string{"--addr", closed, "purge", "rl:x"}, "--older-than"},
		{"purge bad older-than", ExitUsage, []string{"--addr", closed, "purge", "rl:x", "--older-than", "soon"}, "invalid argument"},
		{"purge zero batch", ExitUsage, []string{"--addr", closed, "purge", "rl:x", "--older-than", "10m", "--batch", "0"}, "--batch"},
		{"purge negative batch", ExitUsage, []string{"--addr", closed, "purge", "rl:x", "--older-than", "10m", "--batch", "-5"}, "--batch"},
		{"purge pattern without yes", ExitUsage, []string{"--addr", closed, "purge", "rl:*", "--older-than", "10m"}, "--yes"},
		// reset
		{"reset without keys", ExitUsage, []string{"--addr", closed, "reset"}, "want one or more keys"},
		{"reset pattern without yes", ExitUsage, []string{"--addr", closed, "reset", "rl:*"}, "--yes"},
		{"reset zero batch", ExitUsage, []string{"--addr", closed, "reset", "rl:x", "--batch", "0"}, "--batch"},
		{"reset on a closed port", ExitError, []string{"--addr", closed, "reset", "rl:x"}, "cannot connect"},
		// Sentinel
		{"sentinel without master", ExitUsage, []string{"--sentinel", closed, "scripts", "status"}, "--master NAME"},
		{"master without sentinel", ExitUsage, []string{"--master", "mymaster", "scripts", "status"}, "--sentinel"},
		{"sentinel without a port", ExitUsage, []string{"--sentinel", "localhost", "--master", "m", "scripts", "status"}, "bad --sentinel"},
		{"sentinel and addr", ExitUsage, []string{"--sentinel", closed, "--master", "m", "--addr", closed, "scripts", "status"}, "name the target twice"},
		{"sentinel url without master", ExitUsage, []string{"-u", "redis+sentinel://bob:" + secret + "@" + closed, "scripts", "status"}, "no master name"},
		{"sentinel url with a query", ExitUsage, []string{"-u", "redis+sentinel://" + closed + "/m?password=" + secret, "scripts", "status"}, "no query parameters"},
		{"sentinel unreachable", ExitError, []string{"--sentinel", closed, "--master", "m", "--sentinel-password-file", pwFile, "scripts", "status"}, "no Sentinel answers at " + closed},
		// version
		{"version with an argument", ExitUsage, []string{"version", "now"}, "unexpected argument"},
	}
	if len(cases) < 40 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := execBinary(t, []string{"REDISCLI_AUTH=" + secret}, c.args...).wantExit(t, c.code)
			r.wantOneLineError(t, "limitctl: ", c.want)
			if strings.Contains(r.errOut+r.out, secret) {
				t.Fatalf("the password was printed:\n%s%s", r.out, r.errOut)
			}
			if c.code == ExitUsage && r.out != "" {
				t.Fatalf("a usage error printed to stdout:\n%s", r.out)
			}
		})
	}

	// A script that is not Lua: the linter cannot check it, so it warns and Redis decides; Redis
	// refuses it when it is loaded, before any load is sent, in one line.
	r := execBinary(t, nil, "--addr", srv.Addr, "hammer", "--script", notLua).wantExit(t, ExitError)
	lines := strings.Split(strings.TrimSpace(r.errOut), "\n")
	if !strings.Contains(lines[0], notLua+":1:") || !strings.Contains(lines[0], "warning: syntax:") ||
		!strings.HasPrefix(lines[len(lines)-1], "limitctl: Redis rejected "+notLua) {
		t.Errorf("want the syntax warning then Redis's refusal:\n%s", r.errOut)
	}

	// Keys of the wrong type are skipped with a reason, not an error.
	r = execBinary(t, nil, "--addr", srv.Addr, "purge", "rl:list", "rl:string", "--older-than", "1m", "-o", "json").wantExit(t, ExitOK)
	if strings.Count(r.out, `"skipped": "not a sorted set"`) != 2 {
		t.Errorf("wrong-type keys not skipped with a reason:\n%s", r.out)
	}
	if n, _ := rdb.LLen(ctx, "rl:list").Result(); n != 2 {
		t.Errorf("the list was touched: %d items left", n)
	}
}
