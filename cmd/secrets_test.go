package cmd

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/redistest"
)

// Passwords never appear in output, JSON, errors or the process's arguments.

const serverPassword = "Pa55-w0rd-never-printed"

// noPassword fails if any of the passwords shows on either stream.
func (r result) noPassword(t *testing.T, passwords ...string) result {
	t.Helper()
	for _, p := range passwords {
		if strings.Contains(r.out, p) || strings.Contains(r.errOut, p) {
			t.Errorf("password %q printed\nstdout:\n%s\nstderr:\n%s", p, r.out, r.errOut)
		}
	}
	return r
}

func writePasswordFile(t *testing.T, password string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "redis-password")
	if err := os.WriteFile(path, []byte(password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestPasswordFromREDISCLI_AUTHAndPasswordFileWithTheBinary(t *testing.T) {
	srv := redistest.Start(t, "requirepass "+serverPassword)
	execBinary(t, []string{"REDISCLI_AUTH=" + serverPassword}, "--addr", srv.Addr, "scripts", "load", "-o", "json").
		wantExit(t, ExitOK).noPassword(t, serverPassword)
	r := execBinary(t, nil, "--addr", srv.Addr, "--password-file", writePasswordFile(t, serverPassword), "scripts", "status", "-o", "json").
		wantExit(t, ExitOK).noPassword(t, serverPassword)
	if r.errOut != "" {
		t.Errorf("stderr not empty: %s", r.errOut)
	}
	// A CRLF file from another system works too.
	crlf := filepath.Join(t.TempDir(), "pw")
	os.WriteFile(crlf, []byte(serverPassword+"\r\n"), 0o600)
	execBinary(t, nil, "--addr", srv.Addr, "--password-file", crlf, "scripts", "status").wantExit(t, ExitOK)

	// An ACL user: --username with the password from the environment or a file.
	acl := redistest.StartACL(t, "user ops on >"+serverPassword+" +ping +role +script|exists")
	execBinary(t, []string{"REDISCLI_AUTH=" + serverPassword}, "--addr", acl.Addr, "--username", "ops", "scripts", "status").
		wantExit(t, ExitCheckFailed).noPassword(t, serverPassword)
	execBinary(t, nil, "--addr", acl.Addr, "--username", "ops", "--password-file", writePasswordFile(t, serverPassword), "scripts", "status").
		wantExit(t, ExitCheckFailed).noPassword(t, serverPassword)
}

func TestWrongPasswordIsOneLineWithoutThePassword(t *testing.T) {
	srv := redistest.Start(t, "requirepass "+serverPassword)
	wrong := "Wr0ng-" + serverPassword
	for name, r := range map[string]result{
		"REDISCLI_AUTH": execBinary(t, []string{"REDISCLI_AUTH=" + wrong}, "--addr", srv.Addr, "scripts", "status"),
		"password file": execBinary(t, nil, "--addr", srv.Addr, "--password-file", writePasswordFile(t, wrong), "scripts", "status"),
		"url":           execBinary(t, nil, "-u", "redis://:"+wrong+"@"+srv.Addr, "scripts", "status"),
		"REDIS_URL":     execBinary(t, []string{"REDIS_URL=redis://default:" + wrong + "@" + srv.Addr}, "scripts", "status"),
		"hammer":        execBinary(t, []string{"REDISCLI_AUTH=" + wrong}, "--addr", srv.Addr, "hammer", "--duration", "1s"),
	} {
		t.Run(name, func(t *testing.T) {
			r.wantExit(t, ExitError).noPassword(t, wrong, serverPassword)
			if name != "hammer" { // the hammer's error follows its "target:" line
				r.wantOneLineError(t, "cannot connect to "+srv.Addr, "WRONGPASS")
			}
		})
	}
	execBinary(t, nil, "--addr", srv.Addr, "scripts", "status").
		wantExit(t, ExitError).wantOneLineError(t, "cannot connect to "+srv.Addr, "NOAUTH")
}

// A URL with credentials is redacted on every error path.
func TestURLCredentialsAreRedactedInEveryErrorPath(t *testing.T) {
	const pw = "url-Secr3t"
	freeAddr := "127.0.0.1:" + strconv.Itoa(redistest.FreePort(t))
	tlsSrv := redistest.StartTLS(t, redistest.TLSOptions{})
	cases := []struct {
		name string
		url  string
		code int
		args []string
	}{
		{"bad scheme", "http://ops:" + pw + "@" + freeAddr, ExitUsage, nil},
		{"bad port", "redis://ops:" + pw + "@127.0.0.1:port", ExitUsage, nil},
		{"bad db", "redis://ops:" + pw + "@" + freeAddr + "/x", ExitUsage, nil},
		{"unknown option", "redis://ops:" + pw + "@" + freeAddr + "?pw=" + pw, ExitUsage, nil},
		{"unencoded slash", "redis://ops:" + pw + "/x@" + freeAddr, ExitUsage, nil},
		{"space", "redis://ops:" + pw + " x@" + freeAddr, ExitUsage, nil},
		{"bad escape", "redis://ops:" + pw + "%zz@" + freeAddr, ExitUsage, nil},
		{"skip_verify", "rediss://ops:" + pw + "@" + tlsSrv.Addr + "?skip_verify=true", ExitUsage, nil},
		{"refused", "redis://ops:" + pw + "@" + freeAddr, ExitError, nil},
		{"tls untrusted", "rediss://ops:" + pw + "@" + tlsSrv.Addr, ExitError, nil},
		{"tls refused", "rediss://ops:" + pw + "@" + freeAddr, ExitError, nil},
		{"bad ca", "rediss://ops:" + pw + "@" + tlsSrv.Addr, ExitUsage, []string{"--tls-ca", "/nonexistent/ca.pem"}},
		{"with addr", "redis://ops:" + pw + "@" + freeAddr, ExitUsage, []string{"--addr", freeAddr}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{"--timeout", "1s", "-u", tc.url}, tc.args...), "scripts", "status")
			run(t, args...).wantExit(t, tc.code).noPassword(t, pw).wantOneLineError(t, "limitctl:")
			env := map[string]string{"REDIS_URL": tc.url}
			runEnv(t, env, append(append([]string{"--timeout", "1s"}, tc.args...), "scripts", "status")...).noPassword(t, pw)
		})
	}
	// The hammer's own error paths too.
	execBinary(t, []string{"REDIS_URL=redis://ops:" + pw + "@" + freeAddr}, "hammer", "--duration", "1s").
		wantExit(t, ExitError).noPassword(t, pw)
}

func TestPasswordFlagWarnsThatPsShowsIt(t *testing.T) {
	srv := redistest.Start(t, "requirepass "+serverPassword)
	r := run(t, "--addr", srv.Addr, "--password", serverPassword, "scripts", "load").wantExit(t, ExitOK).noPassword(t, serverPassword)
	lines := strings.Split(strings.TrimRight(r.errOut, "\n"), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "warning: --password") ||
		!strings.Contains(lines[0], "REDISCLI_AUTH") || !strings.Contains(lines[0], "--password-file") {
		t.Errorf("want one warning line suggesting REDISCLI_AUTH or --password-file, got:\n%s", r.errOut)
	}
	// The same password from the environment or a file: no warning.
	if r := runEnv(t, map[string]string{"REDISCLI_AUTH": serverPassword}, "--addr", srv.Addr, "scripts", "load"); r.errOut != "" {
		t.Errorf("REDISCLI_AUTH warned: %s", r.errOut)
	}
}

// What ps shows is the process's argv (/proc/PID/cmdline): with REDISCLI_AUTH or
// --password-file the password is not in it.
func TestPasswordNotInTheProcessArguments(t *testing.T) {
	srv := redistest.Start(t, "requirepass "+serverPassword)
	file := writePasswordFile(t, serverPassword)
	cmd, _, errOut := startBinary(t, "--addr", srv.Addr, "--password-file", file, "hammer", "--duration", "1s", "--workers", "2")
	// Right after Start the child may not have exec'd yet (its cmdline is empty): wait for it.
	args := cmdline(t, cmd.Process.Pid)
	for deadline := time.Now().Add(3 * time.Second); !strings.Contains(args, "hammer") && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		args = cmdline(t, cmd.Process.Pid)
	}
	if strings.Contains(args, serverPassword) {
		t.Errorf("the password is in /proc/%d/cmdline: %q", cmd.Process.Pid, args)
	}
	if !strings.Contains(args, "--password-file") {
		t.Errorf("cmdline %q is not the hammer's", args)
	}
	// It ran authenticated with the file's password.
	if code := waitExit(t, cmd, 10*time.Second); code != ExitOK {
		t.Errorf("hammer with --password-file exited %d: %s", code, errOut)
	}
}

// cmdline is what ps shows of a process: its arguments, fixed at exec.
func cmdline(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		t.Skipf("no /proc on this system: %v", err)
	}
	return strings.ReplaceAll(string(b), "\x00", " ")
}

// -o json never carries the password, whatever the source: a URL is the riskiest, since the
// target is printed.
func TestJSONOutputNeverHoldsThePassword(t *testing.T) {
	srv := redistest.Start(t, "requirepass "+serverPassword)
	url := "redis://default:" + serverPassword + "@" + srv.Addr
	for _, args := range [][]string{
		{"scripts", "list"},
		{"scripts", "load"},
		{"scripts", "load", "--functions"},
		{"scripts", "status"},
		{"hammer", "--duration", "1s", "--workers", "4", "--strategies", "naive,lua,function"},
	} {
		r := execBinary(t, []string{"REDIS_URL=" + url}, append(args, "-o", "json")...).wantExit(t, ExitOK).noPassword(t, serverPassword)
		if !strings.HasPrefix(strings.TrimSpace(r.out), "{") {
			t.Errorf("%v: not JSON:\n%s", args, r.out)
		}
	}
}

// --sentinel-password warns as --password does, and is never printed.
func TestSentinelPasswordFlagWarns(t *testing.T) {
	closed := "127.0.0.1:" + itoa(redistest.FreePort(t))
	r := run(t, "--sentinel", closed, "--master", "m", "--sentinel-password", serverPassword, "scripts", "status").wantExit(t, ExitError)
	if !strings.HasPrefix(r.errOut, "warning: --sentinel-password on the command line is visible to other users (ps)") {
		t.Errorf("no warning:\n%s", r.errOut)
	}
	r.noPassword(t, serverPassword)
}
