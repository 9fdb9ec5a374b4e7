package redistrace

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// The proxy (--http-redis-proxy ADDR) is for a Redis that refuses MONITOR (an ACL, a managed
// service): the application connects to ADDR instead of its Redis, and each of its connections
// is forwarded to the limiter's Redis on one of its own, every byte unchanged either way. On the
// way the proxy reads each command and the reply that answers it (a connection's replies come
// in the order of its commands; a RESP3 push answers none), so every reply is known. The order
// across connections is the order the proxy forwarded the commands in: two sent within one
// round trip of each other on different connections may have run in the other order, which
// their replies tell. A connection that subscribes or monitors is forwarded and no longer read.

type proxy struct {
	t        *Tracer
	addr     string
	ln       net.Listener
	upstream *redis.Options
	mu       sync.Mutex
	conns    map[net.Conn]bool
	closed   bool
	wg       sync.WaitGroup
}

// startProxy listens on addr; an address taken is the error.
func startProxy(t *Tracer, addr string, upstream *redis.Options) (*proxy, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	p := &proxy{t: t, addr: ln.Addr().String(), ln: ln, upstream: upstream, conns: map[net.Conn]bool{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

func (p *proxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		if !p.track(client) {
			client.Close()
			return
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.serve(client)
		}()
	}
}

// track keeps a connection to close with the proxy; false once it is closed.
func (p *proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.conns[c] = true
	return true
}

func (p *proxy) untrack(c net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.conns, c)
}

// close stops listening, closes every connection and waits for their goroutines.
func (p *proxy) close() {
	p.mu.Lock()
	p.closed = true
	p.ln.Close()
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// pendingCommand is a command forwarded whose reply has not come back.
type pendingCommand struct {
	args   []string
	sentUs int64
}

// serve forwards one application connection to a connection of its own to the upstream.
func (p *proxy) serve(client net.Conn) {
	defer p.untrack(client)
	defer client.Close()
	upstream, err := p.dial()
	if err != nil {
		return // the application sees its connection closed, as it would the server's refusal
	}
	if !p.track(upstream) {
		upstream.Close()
		return
	}
	defer p.untrack(upstream)
	defer upstream.Close()
	queue := &commandQueue{ready: make(chan struct{}, 1)}
	var blind sync.Once // the connection is no longer read (subscribed, monitoring, not RESP)
	stopReading := make(chan struct{})
	s := newStreamer(p.t, 0)
	addr := client.RemoteAddr().String()
	go func() {
		defer queue.close()
		defer upstream.Close()
		p.forwardCommands(client, upstream, queue, func() { blind.Do(func() { close(stopReading) }) })
	}()
	p.forwardReplies(upstream, client, queue, stopReading, func(cmd pendingCommand, reply any, repliedUs int64) {
		o := observed{client: addr, atUs: cmd.sentUs, repliedUs: repliedUs, args: cmd.args, reply: Reply{From: FromProxy, Value: reply}}
		if cmd.args[0] == "EXEC" {
			arr, ok := reply.([]any)
			o.execFailed, o.execReply = !ok, arr
		}
		s.observe(o)
	})
}

// dial connects to the upstream as its options say: their dialer, or TCP with their TLS.
func (p *proxy) dial() (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), max(p.upstream.DialTimeout, 5*time.Second))
	defer cancel()
	network := p.upstream.Network
	if network == "" {
		network = "tcp"
	}
	if p.upstream.Dialer != nil {
		return p.upstream.Dialer(ctx, network, p.upstream.Addr)
	}
	d := &net.Dialer{}
	if p.upstream.TLSConfig != nil {
		return (&tls.Dialer{NetDialer: d, Config: p.upstream.TLSConfig}).DialContext(ctx, network, p.upstream.Addr)
	}
	return d.DialContext(ctx, network, p.upstream.Addr)
}

// blinds reports whether a command makes the connection's frames no longer answer its commands
// one by one: a subscription, MONITOR, CLIENT REPLY.
func blinds(args []string) bool {
	switch args[0] {
	case "SUBSCRIBE", "PSUBSCRIBE", "SSUBSCRIBE", "MONITOR":
		return true
	case "CLIENT":
		return len(args) > 1 && upper(args[1]) == "REPLY"
	}
	return false
}

// forwardCommands copies the application's commands to the upstream, frame by frame, queueing
// each for its reply; once the stream cannot be read as commands it is copied alone (blind).
func (p *proxy) forwardCommands(from, to net.Conn, queue *commandQueue, blind func()) {
	fr := newFrameReader(from)
	w := bufio.NewWriterSize(to, 64<<10)
	for {
		v, raw, _, err := fr.next()
		if err != nil {
			if errors.Is(err, errNotRESP) {
				blind()
				w.Write(raw) //nolint:errcheck // the copy below reports the connection's end
				w.Flush()    //nolint:errcheck
				copyAll(to, fr.r)
			}
			return
		}
		args, ok := commandArgs(v)
		if ok && blinds(args) {
			blind()
			ok = false
		}
		if ok {
			queue.push(pendingCommand{args: args, sentUs: p.t.sinceBase(time.Now())})
		}
		if _, err := w.Write(raw); err != nil {
			return
		}
		if fr.r.Buffered() == 0 {
			if err := w.Flush(); err != nil {
				return
			}
		}
	}
}

// forwardReplies copies the upstream's replies to the application, handing each with its
// command to seen first, until the upstream closes; once blind, it copies alone.
func (p *proxy) forwardReplies(from, to net.Conn, queue *commandQueue, blind <-chan struct{}, seen func(pendingCommand, any, int64)) {
	defer to.Close()
	fr := newFrameReader(from)
	w := bufio.NewWriterSize(to, 64<<10)
	for {
		select {
		case <-blind:
			w.Flush() //nolint:errcheck // the copy reports the connection's end
			copyAll(to, fr.r)
			return
		default:
		}
		v, raw, push, err := fr.next()
		if err != nil {
			w.Write(raw) //nolint:errcheck
			w.Flush()    //nolint:errcheck
			if errors.Is(err, errNotRESP) {
				copyAll(to, fr.r)
			}
			return
		}
		repliedUs := p.t.sinceBase(time.Now())
		if !push {
			// Seen before the application gets it: whatever it has read, the trace holds.
			if cmd, ok := queue.pop(blind); ok {
				seen(cmd, v, repliedUs)
			}
		}
		if _, err := w.Write(raw); err != nil {
			return
		}
		if fr.r.Buffered() == 0 {
			if err := w.Flush(); err != nil {
				return
			}
		}
	}
}

// copyAll copies what is left of a connection, unread.
func copyAll(to net.Conn, from *bufio.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := from.Read(buf)
		if n > 0 {
			if _, werr := to.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// commandQueue holds a connection's commands forwarded and not yet answered, however many: a
// client that writes a long pipeline before it reads is never made to wait by the proxy (Redis
// would not make it wait either).
type commandQueue struct {
	mu     sync.Mutex
	cmds   []pendingCommand
	closed bool
	ready  chan struct{} // a command was pushed, or the queue closed
}

func (q *commandQueue) push(c pendingCommand) {
	q.mu.Lock()
	q.cmds = append(q.cmds, c)
	q.mu.Unlock()
	q.signal()
}

func (q *commandQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.signal()
}

func (q *commandQueue) signal() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// pop takes the oldest command, waiting for one; ok is false once the queue is closed and empty
// or blind is closed.
func (q *commandQueue) pop(blind <-chan struct{}) (pendingCommand, bool) {
	for {
		q.mu.Lock()
		if len(q.cmds) > 0 {
			c := q.cmds[0]
			q.cmds = q.cmds[1:]
			q.mu.Unlock()
			return c, true
		}
		closed := q.closed
		q.mu.Unlock()
		if closed {
			return pendingCommand{}, false
		}
		select {
		case <-q.ready:
		case <-blind:
			return pendingCommand{}, false
		}
	}
}
