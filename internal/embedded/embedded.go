// Package embedded starts a throw-away Redis for the hammer's default target: a redis-server
// process on a free loopback port when one is on PATH, otherwise an in-process miniredis. The
// test helper (internal/redistest) uses the same process management. A redis-server dies with
// the process that started it (on Linux the kernel kills it), and the first start of a later
// process removes the folders that dead processes left (leftover.go).
package embedded

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/limitctl/limitctl/internal/orphan"
)

// Kinds of embedded server, as the hammer's target kinds name them.
const (
	KindRedisServer = "redis-server"
	KindMemory      = "memory"
)

// Server is a running embedded server.
type Server struct {
	Kind string
	Addr string
	proc *Process
	mini *miniredis.Miniredis
}

// Start runs the embedded server of the given mode: "auto" (redis-server when on PATH, else
// memory), "redis-server" or "memory".
func Start(mode string) (*Server, error) {
	switch mode {
	case "auto", "":
		if _, err := exec.LookPath("redis-server"); err == nil {
			return Start(KindRedisServer)
		}
		return Start(KindMemory)
	case KindRedisServer:
		bin, err := exec.LookPath("redis-server")
		if err != nil {
			return nil, fmt.Errorf("--embedded redis-server: redis-server is not on PATH (install it, or use --embedded memory)")
		}
		p, err := StartProcess(bin)
		if err != nil {
			return nil, err
		}
		return &Server{Kind: KindRedisServer, Addr: p.Addr, proc: p}, nil
	case KindMemory:
		m := miniredis.NewMiniRedis()
		if err := m.StartAddr("127.0.0.1:0"); err != nil {
			return nil, fmt.Errorf("in-process server: %w", err)
		}
		return &Server{Kind: KindMemory, Addr: m.Addr(), mini: m}, nil
	}
	return nil, fmt.Errorf("unknown --embedded %q: want auto, redis-server or memory", mode)
}

// Process returns the redis-server process (nil for the in-process server), for kill and
// restart events.
func (s *Server) Process() *Process { return s.proc }

// Stop ends the server and removes its files.
func (s *Server) Stop() {
	if s.proc != nil {
		s.proc.Stop()
	}
	if s.mini != nil {
		s.mini.Close()
	}
}

// Process is one redis-server process on a loopback port.
type Process struct {
	Addr string
	Port int
	Dir  string
	bin  string
	args []string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// FreePort returns a loopback port that is free now and whose cluster bus port (+10000) is too.
func FreePort() (int, error) {
	for i := 0; i < 50; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if port+10000 > 65535 {
			continue
		}
		bus, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port+10000))
		if err != nil {
			continue
		}
		bus.Close()
		return port, nil
	}
	return 0, fmt.Errorf("no free loopback port pair found")
}

// StartProcess runs redis-server on a free loopback port with persistence off and the given
// extra config directives (e.g. "maxmemory 10mb"), retrying on a port race.
func StartProcess(bin string, extra ...string) (*Process, error) {
	return StartProcessFunc(bin, func(int) []string { return extra })
}

// StartProcessFunc is StartProcess for directives that name the chosen port, such as a TLS
// server's "port 0" and "tls-port <port>": directives is called with each port tried.
func StartProcessFunc(bin string, directives func(port int) []string) (*Process, error) {
	return startProcess(bin, nil, directives)
}

// StartSentinel runs redis-server in Sentinel mode (redis-server CONFIG --sentinel, as Debian's
// redis-server supports) on a free loopback port. A Sentinel rewrites its configuration file as
// it learns, so it gets one of its own in its directory, holding conf (the "sentinel monitor
// NAME HOST PORT QUORUM" line and the settings for that master).
func StartSentinel(bin string, conf ...string) (*Process, error) {
	config := func(dir string) ([]string, error) {
		path := filepath.Join(dir, "sentinel.conf")
		if err := os.WriteFile(path, []byte(strings.Join(conf, "\n")+"\n"), 0o600); err != nil {
			return nil, err
		}
		return []string{path, "--sentinel"}, nil
	}
	return startProcess(bin, config, func(int) []string { return nil })
}

// startProcess starts redis-server with, first, the arguments config writes into the process's
// directory (a configuration file), then the loopback port, the directory and directives.
func startProcess(bin string, config func(dir string) ([]string, error), directives func(port int) []string) (*Process, error) {
	sweepOnce.Do(func() { orphan.Sweep(os.TempDir(), folderPrefix, removeLeftover) })
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		port, err := FreePort()
		if err != nil {
			return nil, err
		}
		dir, err := os.MkdirTemp("", orphan.Name(folderPrefix))
		if err != nil {
			return nil, err
		}
		p := &Process{Addr: "127.0.0.1:" + strconv.Itoa(port), Port: port, Dir: dir, bin: bin}
		if config != nil {
			if p.args, err = config(dir); err != nil {
				os.RemoveAll(dir)
				return nil, err
			}
		}
		p.args = append(p.args, "--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--dir", dir)
		if config == nil { // a data node: persistence off (a Sentinel keeps no data)
			p.args = append(p.args, "--save", "", "--appendonly", "no")
		}
		p.args = append(p.args, "--daemonize", "no", "--logfile", filepath.Join(dir, "redis.log"))
		p.args = append(p.args, SplitDirectives(directives(port))...)
		if err := p.launch(); err != nil {
			lastErr = err
			os.RemoveAll(dir)
			continue
		}
		return p, nil
	}
	return nil, fmt.Errorf("redis-server would not start: %w", lastErr)
}

// SplitDirectives turns config directives like "maxmemory 10mb" into ["--maxmemory", "10mb"].
func SplitDirectives(extra []string) []string {
	var out []string
	for _, d := range extra {
		fields := strings.Fields(d)
		if len(fields) == 0 {
			continue
		}
		out = append(out, "--"+fields[0])
		out = append(out, fields[1:]...)
	}
	return out
}

func (p *Process) launch() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	cmd := exec.Command(p.bin, p.args...)
	cmd.Dir = p.Dir
	orphan.BindToParent(cmd)
	if err := cmd.Start(); err != nil {
		return err
	}
	p.cmd = cmd
	running.Store(p, struct{}{})
	p.done = make(chan struct{})
	done := p.done
	go func() { cmd.Wait(); close(done) }()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			return fmt.Errorf("redis-server on %s exited at start: %s", p.Addr, p.LogTail())
		default:
		}
		if conn, err := net.DialTimeout("tcp", p.Addr, 100*time.Millisecond); err == nil {
			conn.Close()
			recordServer(p.Dir, cmd.Process.Pid, p.Port)
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Kill()
	return fmt.Errorf("redis-server on %s did not listen within 10s: %s", p.Addr, p.LogTail())
}

// LogTail is the end of the server's log, for error messages.
func (p *Process) LogTail() string {
	b, _ := os.ReadFile(filepath.Join(p.Dir, "redis.log"))
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}
	return strings.Join(lines, " | ")
}

// Kill stops the server abruptly (SIGKILL), as a crash would; Restart brings it back on the
// same port.
func (p *Process) Kill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil && p.cmd.Process != nil {
		p.cmd.Process.Kill()
		<-p.done
		p.cmd = nil
	}
}

// Restart starts a killed server again on the same port (empty: persistence is off).
func (p *Process) Restart() error { return p.launch() }

// Stop kills the server and removes its directory.
func (p *Process) Stop() {
	p.Kill()
	os.RemoveAll(p.Dir)
	running.Delete(p)
}

// running holds every server this process started and has not stopped.
var running sync.Map

// StopAll stops every server this process started: for an exit that skips deferred calls
// (a second Ctrl-C), so no throw-away redis-server outlives the tool.
func StopAll() {
	running.Range(func(p, _ any) bool {
		p.(*Process).Stop()
		return true
	})
}
