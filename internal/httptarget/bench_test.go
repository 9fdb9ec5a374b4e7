package httptarget

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"
)

// BenchmarkAcquire is the client's hot path: workers, each with a keep-alive connection of its
// own, calling an endpoint that answers at once. Against a server in another process
// (LIMITCTL_BENCH_HTTP_URL, e.g. the one vegeta is pointed at) the figure compares with
// `vegeta attack -rate 0` with as many workers and connections (LIMITCTL_BENCH_HTTP_WORKERS,
// default 8); otherwise a net/http handler in this process answers, sharing its CPU.
func BenchmarkAcquire(b *testing.B) {
	url := os.Getenv("LIMITCTL_BENCH_HTTP_URL")
	if url == "" {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
		b.Cleanup(srv.Close)
		url = srv.URL + "/limit/{key}"
	}
	workers := 8
	if n, err := strconv.Atoi(os.Getenv("LIMITCTL_BENCH_HTTP_WORKERS")); err == nil && n > 0 {
		workers = n
	}
	tg, err := New(Spec{URL: url}, Options{Conns: workers})
	if err != nil {
		b.Fatal(err)
	}
	defer tg.Close()
	ctx := context.Background()
	for w := range workers { // the connections open before the clock starts
		if _, err := tg.Acquire(ctx, "warm", Call{Worker: w}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for w := range workers {
		n := b.N / workers
		if w < b.N%workers {
			n++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := "bench." + strconv.Itoa(w)
			for i := range n {
				if _, err := tg.Acquire(ctx, key, Call{Worker: w, Seq: uint64(i)}); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
}
