package redisconn

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/redis/go-redis/v9"
)

// maxBatch bounds one pipeline: a connection that fell behind sends its backlog in pieces, so one
// batch's replies never wait behind thousands of others.
const maxBatch = 512

// ErrPipelineClosed is the error of a command sent after its client's pipelining stopped.
var ErrPipelineClosed = errors.New("redisconn: pipelined client closed")

// Pipeline returns a client whose single commands (Process, and every typed command built on it:
// EVALSHA, EVAL, FCALL, GET ...) go out through base in automatic pipelines over conns
// connections: each connection, whenever it is free, takes every command pending at that moment
// (up to maxBatch) and sends them as one pipeline, so many goroutines share few connections and no
// command waits for a batch to fill. Each command still gets its own reply or error, so go-redis's
// EVALSHA-then-EVAL fallback re-sends only the calls that failed with NOSCRIPT. Nothing is retried.
//
// base's pool should hold conns connections. The returned client is a twin of base (same
// options) whose hook hands single commands to base's connections; its own pipelines and
// MULTI/EXEC blocks (TxPipelined) keep a round trip of their own on its pool. WATCH needs a
// connection of its own, so a client used with Watch must not be pipelined (its commands would
// leave the watched connection). close stops the connections and the twin; call it once no command
// is in flight.
func Pipeline(base redis.UniversalClient, conns int) (front redis.UniversalClient, close func()) {
	p := &autoPipeline{base: base, front: Twin(base, conns), queue: make(chan *pendingCmd, conns*maxBatch)}
	for i := 0; i < max(1, conns); i++ {
		p.wg.Add(1)
		go p.connection()
	}
	// The hook goes on the twin, not on base: base's connection set-up (AUTH, HELLO) runs through
	// base's hooks and must reach the wire, not the queue.
	p.front.AddHook(p)
	return p.front, p.close
}

// Twin opens a client with client's options (target, credentials, TLS, timeouts) and a pool of
// poolSize connections: a client of its own for a group of goroutines.
func Twin(client redis.UniversalClient, poolSize int) redis.UniversalClient {
	switch c := client.(type) {
	case *redis.ClusterClient:
		o := *c.Options()
		o.PoolSize = poolSize
		return redis.NewClusterClient(&o)
	case *redis.Client:
		if fo, ok := failoverOf(c); ok {
			// A failover client of its own, so that it too drops its connections to a master the
			// Sentinels replaced: a plain client on the same dialer would keep writing to the old one.
			o := fo.opts
			o.PoolSize = poolSize
			return newFailoverClient(o)
		}
		o := *c.Options()
		o.PoolSize = poolSize
		return redis.NewClient(&o)
	}
	panic(fmt.Sprintf("redisconn.Twin: want a *redis.Client or *redis.ClusterClient, got %T", client))
}

type autoPipeline struct {
	base   redis.UniversalClient // sends the batches
	front  redis.UniversalClient // hands its single commands to base's connections
	queue  chan *pendingCmd
	mu     sync.RWMutex // held shared to send, exclusively to close the queue
	closed bool
	wg     sync.WaitGroup
}

// pendingCmd is one command waiting for its connection; done is signalled once its reply is in.
type pendingCmd struct {
	cmd  redis.Cmder
	done chan struct{}
}

var pendingPool = sync.Pool{New: func() any { return &pendingCmd{done: make(chan struct{}, 1)} }}

// connection is one connection's sender: it waits for a command, takes whatever else is pending,
// and sends it all as one pipeline.
func (p *autoPipeline) connection() {
	defer p.wg.Done()
	pipe := p.base.Pipeline()
	batch := make([]*pendingCmd, 0, maxBatch)
	// The batch runs on its own context: one caller's cancelled context must not fail the other
	// callers' commands. The client's read and write timeouts still bound it.
	ctx := context.Background()
	for first := range p.queue {
		batch = append(batch[:0], first)
	more:
		for len(batch) < maxBatch {
			select {
			case c, ok := <-p.queue:
				if !ok {
					break more
				}
				batch = append(batch, c)
			default:
				break more
			}
		}
		for _, c := range batch {
			pipe.Process(ctx, c.cmd) //nolint:errcheck // queues the command; its reply comes from Exec
		}
		pipe.Exec(ctx) //nolint:errcheck // every command carries its own reply or error
		for _, c := range batch {
			c.done <- struct{}{}
		}
	}
}

func (p *autoPipeline) close() {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		close(p.queue)
	}
	p.mu.Unlock()
	p.wg.Wait()
	p.front.Close()
}

// DialHook implements redis.Hook.
func (p *autoPipeline) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessHook implements redis.Hook: a single command joins the next pipeline instead of taking
// a connection of its own. The caller waits for its reply even when its context ends: the
// command may already be on the wire, and its result is written by the connection's goroutine.
func (p *autoPipeline) ProcessHook(redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c := pendingPool.Get().(*pendingCmd)
		c.cmd = cmd
		p.mu.RLock()
		if p.closed {
			p.mu.RUnlock()
			c.cmd = nil
			pendingPool.Put(c)
			cmd.SetErr(ErrPipelineClosed)
			return ErrPipelineClosed
		}
		p.queue <- c
		p.mu.RUnlock()
		<-c.done
		c.cmd = nil
		pendingPool.Put(c)
		return cmd.Err()
	}
}

// ProcessPipelineHook implements redis.Hook: the batches themselves (and a caller's own pipelines
// and transactions) go out as they are.
func (p *autoPipeline) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// DirectOptions returns the options a connection of its own to client's server is dialled with
// (package wire, limiter.Config.Direct): for a single node only. A cluster client follows MOVED
// and ASK, and a client through Sentinels drops its connections to a master they replaced;
// neither is a plain connection, so neither has direct options.
func DirectOptions(client redis.UniversalClient) (*redis.Options, bool) {
	c, ok := client.(*redis.Client)
	if !ok {
		return nil, false
	}
	if _, failover := failoverOf(c); failover {
		return nil, false
	}
	return c.Options(), true
}

// NodeOptions returns the options a connection of its own to one of client's masters is
// dialled with (package wire, limiter.Config.Nodes), its Addr left for the cluster's slot map
// to give: the cluster's credentials, client name, TLS, protocol, timeouts and dialer, as
// go-redis dials each node. For a cluster only: any other client gives false.
func NodeOptions(client redis.UniversalClient) (*redis.Options, bool) {
	c, ok := client.(*redis.ClusterClient)
	if !ok {
		return nil, false
	}
	o := c.Options()
	return &redis.Options{
		Network: "tcp", Dialer: o.Dialer, Username: o.Username, Password: o.Password,
		CredentialsProvider: o.CredentialsProvider, CredentialsProviderContext: o.CredentialsProviderContext,
		ClientName: o.ClientName, TLSConfig: o.TLSConfig, Protocol: o.Protocol,
		DialTimeout: o.DialTimeout, ReadTimeout: o.ReadTimeout, WriteTimeout: o.WriteTimeout,
	}, true
}
