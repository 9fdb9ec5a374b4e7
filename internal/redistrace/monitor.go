package redistrace

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/human"
	"github.com/limitctl/limitctl/internal/wire"
)

// A MONITOR line: the server's time (s.µs), the client's database and address (or "lua" for
// a command a script ran), and the command's arguments, each quoted as sdscatrepr quotes:
//
//	1796646392.166229 [0 127.0.0.1:55586] "INCR" "limitapp:window:incr-first:3f2a.0"
//	1796646392.167276 [0 lua] "ZADD" "set" "1796646392167270" "r7"

// monitorLine is what a line says; args holds the name only when the rest was not wanted.
type monitorLine struct {
	serverUs int64
	client   string
	lua      bool
	args     []string
}

// errNotMonitor is a line that is not MONITOR's.
var errNotMonitor = errors.New("not a MONITOR line")

// parseMonitorLine reads a line; when want says a command (by its upper-case name and the text
// of its arguments) is of no interest, its arguments are not read.
func parseMonitorLine(line string, want func(name, rest string) bool) (monitorLine, error) {
	var m monitorLine
	dot := strings.IndexByte(line, '.')
	open := strings.Index(line, " [")
	if dot < 0 || open < dot {
		return m, errNotMonitor
	}
	sec, err1 := strconv.ParseInt(line[:dot], 10, 64)
	usec, err2 := strconv.ParseInt(line[dot+1:open], 10, 64)
	if err1 != nil || err2 != nil {
		return m, errNotMonitor
	}
	m.serverUs = sec*1_000_000 + usec
	quote := strings.Index(line, `] "`)
	if quote < open {
		return m, errNotMonitor
	}
	_, addr, ok := strings.Cut(line[open+2:quote], " ")
	if !ok {
		return m, errNotMonitor
	}
	m.client, m.lua = addr, addr == "lua"
	rest := line[quote+2:]
	name, after, err := unquote(rest)
	if err != nil {
		return m, err
	}
	m.args = []string{upper(name)}
	if !want(m.args[0], after) {
		return m, nil
	}
	for after = strings.TrimLeft(after, " "); after != ""; after = strings.TrimLeft(after, " ") {
		var arg string
		if arg, after, err = unquote(after); err != nil {
			return m, err
		}
		m.args = append(m.args, arg)
	}
	return m, nil
}

// unquote reads one quoted argument at the start of s (sdscatrepr's escapes: \\ \" \n \r \t \a
// \b \xHH) and returns it with what follows.
func unquote(s string) (arg, rest string, err error) {
	if s == "" || s[0] != '"' {
		return "", "", errNotMonitor
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			return b.String(), s[i+1:], nil
		case c != '\\':
			b.WriteByte(c)
			continue
		case i+1 >= len(s):
			return "", "", errNotMonitor
		}
		i++
		switch s[i] {
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'x':
			if i+2 >= len(s) {
				return "", "", errNotMonitor
			}
			v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
			if err != nil {
				return "", "", errNotMonitor
			}
			b.WriteByte(byte(v))
			i += 2
		default:
			b.WriteByte(s[i])
		}
	}
	return "", "", errNotMonitor
}

// monitor reads one node's MONITOR stream into its streamer until it sees its own marker (an
// ECHO the tracer sends at the end: every command Redis ran before it has been read) or the
// connection ends.
type monitor struct {
	node   int
	ctl    *wire.Conn // TIME and the closing marker
	stream *wire.Conn
	offset int64 // the node's clock minus this process's, µs (the midpoint of its bound)
	marker string
	done   chan struct{}
	err    error // why the stream ended early; nil when it ended at the marker
}

// ErrMonitorRefused says MONITOR is not allowed on the limiter's Redis (an ACL, a managed
// Redis that renames or disables it).
var ErrMonitorRefused = errors.New("MONITOR refused")

// startMonitor connects twice to the node opt names, measures its clock against this
// process's, and starts MONITOR on the second connection; an error means nothing started.
func startMonitor(ctx context.Context, t *Tracer, node int, opt *redis.Options) (*monitor, error) {
	ctlOpt := *opt
	ctl, err := wire.Dial(ctx, &ctlOpt)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", opt.Addr, err)
	}
	m := &monitor{node: node, ctl: ctl, marker: "limitctl-trace-end-" + t.ids.RunID + "-" + strconv.Itoa(node), done: make(chan struct{})}
	if m.offset, err = t.measureClock(ctx, ctl); err != nil {
		ctl.Close()
		return nil, fmt.Errorf("%s: %w", opt.Addr, err)
	}
	streamOpt := *opt
	streamOpt.ReadTimeout = -1 // a quiet server sends nothing for as long as it likes
	stream, err := wire.Dial(ctx, &streamOpt)
	if err == nil {
		_, err = stream.Call(ctx, "monitor")
		if err != nil {
			stream.Close()
			err = fmt.Errorf("%w on %s (%s)", ErrMonitorRefused, opt.Addr, human.FirstLine(err.Error()))
		}
	}
	if err != nil {
		ctl.Close()
		return nil, err
	}
	m.stream = stream
	s := newStreamer(t, node)
	needle := t.ids.RunID + "."
	want := func(name, rest string) bool {
		return RoleOf(name) == RoleTx || RoleOf(name) == RoleScript || strings.Contains(rest, needle)
	}
	go func() {
		defer close(m.done)
		defer stream.Close()
		for {
			v, err := stream.Receive(context.Background())
			if err != nil {
				m.err = err
				return
			}
			text, ok := v.(string)
			if !ok {
				continue
			}
			line, err := parseMonitorLine(text, want)
			if err != nil {
				continue
			}
			if line.args[0] == "ECHO" && strings.Contains(text, m.marker) {
				return
			}
			s.observe(observed{client: line.client, atUs: line.serverUs - m.offset, args: line.args, byScript: line.lua})
		}
	}()
	return m, nil
}

// stop sends the marker and waits for the stream to reach it, at most timeout; a stream that
// never does is cut.
func (m *monitor) stop(ctx context.Context, timeout time.Duration) {
	defer m.ctl.Close()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if _, err := m.ctl.Call(ctx, "echo", m.marker); err == nil {
		select {
		case <-m.done:
			return
		case <-ctx.Done():
		}
	}
	m.stream.Abort()
	<-m.done
	if m.err == nil {
		m.err = errors.New("the MONITOR stream did not reach its end in time")
	}
}
