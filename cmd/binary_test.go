package cmd

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/orphan"
)

var (
	binaryOnce sync.Once
	binaryPath string
	binaryErr  error
)

// binary builds limitctl once per test run, so exit codes and signals are tested on the real
// program as a shell or CI would run it.
func binary(t *testing.T) string {
	t.Helper()
	binaryOnce.Do(func() {
		dir, err := os.MkdirTemp("", "limitctl-bin-")
		if err != nil {
			binaryErr = err
			return
		}
		binaryPath = filepath.Join(dir, "limitctl")
		out, err := exec.Command("go", "build", "-o", binaryPath, "..").CombinedOutput()
		if err != nil {
			binaryErr = errors.New(string(out))
		}
	})
	if binaryErr != nil {
		t.Fatalf("building limitctl: %v", binaryErr)
	}
	return binaryPath
}

// execBinary runs the built binary with a clean environment and returns its exit code and streams.
func execBinary(t *testing.T, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, env...)
	orphan.BindToParent(cmd)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		code = exitErr.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code: code, out: out.String(), errOut: errOut.String()}
}

// syncBuffer collects what a running binary writes; a test may read it while the binary still
// writes (a bytes.Buffer alone would race with exec's copying goroutine).
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *syncBuffer) Bytes() []byte { return []byte(b.String()) }

// startBinary starts the built binary and returns it running, for signal tests.
func startBinary(t *testing.T, args ...string) (*exec.Cmd, *syncBuffer, *syncBuffer) {
	t.Helper()
	return startBinaryEnv(t, nil, args...)
}

// startBinaryEnv is startBinary with more environment variables. The binary dies with the test.
func startBinaryEnv(t *testing.T, env []string, args ...string) (*exec.Cmd, *syncBuffer, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, env...)
	orphan.BindToParent(cmd)
	var out, errOut syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, &out, &errOut
}

// waitExit waits for a started binary and returns its exit code, failing after limit.
func waitExit(t *testing.T, cmd *exec.Cmd, limit time.Duration) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			return exitErr.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(limit):
		t.Fatalf("still running after %s", limit)
		return -1
	}
}

// interrupt sends sig to a started binary and checks it exits 130 within a second, as every
// long command must.
func interrupt(t *testing.T, cmd *exec.Cmd, sig os.Signal, errOut *syncBuffer) {
	t.Helper()
	sent := time.Now()
	cmd.Process.Signal(sig)
	if code := waitExit(t, cmd, 5*time.Second); code != ExitInterrupted {
		t.Fatalf("exit %d after %s, want 130\nstderr:\n%s", code, sig, errOut)
	}
	// The promise is one second; half a second more absorbs a loaded 2-core CI machine
	// (scheduling and process exit), and a command that waits out a timeout still fails.
	if took := time.Since(sent); took > 1500*time.Millisecond {
		t.Errorf("took %s to stop after %s", took, sig)
	}
}
