package redisconn

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/redistest"
)

// batchSizes records the size of every pipeline the client sends.
type batchSizes struct {
	mu    sync.Mutex
	sizes []int
}

func (b *batchSizes) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (b *batchSizes) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (b *batchSizes) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		b.mu.Lock()
		b.sizes = append(b.sizes, len(cmds))
		b.mu.Unlock()
		return next(ctx, cmds)
	}
}

func (b *batchSizes) max() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	m := 0
	for _, s := range b.sizes {
		m = max(m, s)
	}
	return m
}

func TestPipelineSharesConnectionsAndAnswersEachCommand(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	base := redis.NewClient(&redis.Options{Addr: srv.Addr, PoolSize: 2, MaxRetries: -1})
	defer base.Close()
	client, closePipeline := Pipeline(base, 2)
	defer closePipeline()

	// 64 goroutines, 50 INCRs each on their own key: every reply must be that goroutine's own count.
	var wg sync.WaitGroup
	var wrong atomic.Int64
	for g := 0; g < 64; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			key := "incr:" + strconv.Itoa(g)
			for i := int64(1); i <= 50; i++ {
				if n, err := client.Incr(ctx, key).Result(); err != nil || n != i {
					wrong.Add(1)
				}
			}
		}(g)
	}
	wg.Wait()
	if wrong.Load() != 0 {
		t.Fatalf("%d of 3200 INCR replies were not the caller's own count", wrong.Load())
	}
	if _, err := client.Get(ctx, "missing").Result(); !errors.Is(err, redis.Nil) {
		t.Fatalf("GET of a missing key through the pipeline: %v, want redis.Nil", err)
	}
	observer := srv.Client(t)
	list, err := observer.ClientList(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	// The observer itself and at most the two pipelined connections.
	if n := strings.Count(strings.TrimSpace(list), "\n") + 1; n > 3 {
		t.Fatalf("the server saw %d clients, want the observer plus at most 2 pipelined connections:\n%s", n, list)
	}
}

func TestPipelineSendsWhatIsPendingWhenTheConnectionIsFree(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	base := redis.NewClient(&redis.Options{Addr: srv.Addr, PoolSize: 1, MaxRetries: -1, ReadTimeout: 5 * time.Second})
	defer base.Close()
	sizes := &batchSizes{}
	base.AddHook(sizes)
	client, closePipeline := Pipeline(base, 1)
	defer closePipeline()

	// The one connection is busy with a BLPOP for 300ms; ten INCRs pile up meanwhile and must
	// leave together as the next pipeline, not one by one.
	blocked := make(chan error, 1)
	go func() { blocked <- client.BLPop(ctx, 300*time.Millisecond, "nothing").Err() }()
	deadline := time.Now().Add(5 * time.Second)
	for sizes.max() < 1 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	var wg sync.WaitGroup
	for i := 0; i < 10; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); client.Incr(ctx, "piled") }()
	}
	wg.Wait()
	if err := <-blocked; !errors.Is(err, redis.Nil) {
		t.Fatalf("BLPOP: %v, want a timeout (redis.Nil)", err)
	}
	if got := sizes.max(); got < 2 {
		t.Fatalf("the largest pipeline held %d commands; ten were pending while the connection was busy", got)
	}
	if n, _ := client.Get(ctx, "piled").Int(); n != 10 {
		t.Fatalf("piled = %d, want 10", n)
	}
}

func TestPipelineResendsOnlyTheCallsThatFoundNoScript(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	base := redis.NewClient(&redis.Options{Addr: srv.Addr, PoolSize: 2, MaxRetries: -1})
	defer base.Close()
	client, closePipeline := Pipeline(base, 2)
	defer closePipeline()
	script := redis.NewScript(`return redis.call('INCR', KEYS[1])`)
	observer := srv.Client(t)
	if err := observer.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	// 32 goroutines start on an empty script cache: each EVALSHA that meets NOSCRIPT is sent again
	// as EVAL, once; the count proves every call ran exactly once.
	var wg sync.WaitGroup
	var failed atomic.Int64
	for g := 0; g < 32; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				if err := script.Run(ctx, client, []string{"scripted"}).Err(); err != nil {
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if failed.Load() != 0 {
		t.Fatalf("%d calls failed after SCRIPT FLUSH", failed.Load())
	}
	if n, _ := observer.Get(ctx, "scripted").Int(); n != 640 {
		t.Fatalf("the script ran %d times, want 640 (32 x 20, each exactly once)", n)
	}
}

func TestPipelineRefusesCommandsOnceClosed(t *testing.T) {
	srv := redistest.Start(t)
	base := redis.NewClient(&redis.Options{Addr: srv.Addr, PoolSize: 1, MaxRetries: -1})
	defer base.Close()
	client, closePipeline := Pipeline(base, 1)
	closePipeline()
	if err := client.Ping(context.Background()).Err(); !errors.Is(err, ErrPipelineClosed) {
		t.Fatalf("PING after close: %v, want ErrPipelineClosed", err)
	}
}

func TestPipelineRoutesACluster(t *testing.T) {
	cluster := redistest.StartCluster(t, 3, 0)
	ctx := context.Background()
	base := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cluster.Addrs(), PoolSize: 2, MaxRetries: 0})
	defer base.Close()
	client, closePipeline := Pipeline(base, 2)
	defer closePipeline()
	if _, ok := client.(*redis.ClusterClient); !ok {
		t.Fatalf("the pipelined twin of a cluster client is a %T", client)
	}
	// Keys over every slot range: each batch goes to the masters its commands belong to.
	var wg sync.WaitGroup
	var wrong atomic.Int64
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := int64(1); i <= 20; i++ {
				if n, err := client.Incr(ctx, "slot:"+strconv.Itoa(g)).Result(); err != nil || n != i {
					wrong.Add(1)
				}
			}
		}(g)
	}
	wg.Wait()
	if wrong.Load() != 0 {
		t.Fatalf("%d of 320 INCR replies through the pipelined cluster client were wrong", wrong.Load())
	}
}

// Only a single node's client has direct options (a connection of its own, package wire): a
// cluster's calls must follow MOVED and ASK, which only go-redis's cluster client does. The
// options are the client's own, so the direct connection reaches the same server as the same
// user, with the same TLS and timeouts.
func TestDirectOptionsAreASingleNodesOnly(t *testing.T) {
	single := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", Username: "u", Password: "p", ReadTimeout: time.Second})
	defer single.Close()
	o, ok := DirectOptions(single)
	if !ok || o.Addr != "127.0.0.1:1" || o.Username != "u" || o.Password != "p" || o.ReadTimeout != time.Second {
		t.Fatalf("DirectOptions(single node) = %+v, %v; want its own options", o, ok)
	}
	cluster := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}})
	defer cluster.Close()
	if _, ok := DirectOptions(cluster); ok {
		t.Fatal("a cluster client has direct options")
	}
}
