package judge_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/bench/verdict"
	"github.com/limitctl/limitctl/internal/history"
	"github.com/limitctl/limitctl/internal/judge"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/loadtools"
)

// benchRecords is how many records each benchmark judges.
const benchRecords = 1_000_000

// processCPU is the seconds of CPU (user and system) the process has used: the figure a busy
// machine's scheduler does not inflate.
func processCPU(tb testing.TB) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// benchJudge judges what input gives b.N times and reports records a CPU-second (run with
// -cpu 1: one core's) and the verdict's word as a check.
func benchJudge(b *testing.B, o judge.Options, input func() io.Reader, want string) {
	b.ReportAllocs()
	var n int64
	cpu := processCPU(b)
	for b.Loop() {
		o.Inputs = []history.Input{{Name: "bench", R: input()}}
		res, err := judge.Run(context.Background(), o)
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Verdicts) != 1 || res.Verdicts[0].Word != want {
			b.Fatalf("verdicts %+v, want %s", res.Verdicts, want)
		}
		n += res.Summary.Strategies[0].Attempts
	}
	used := processCPU(b) - cpu
	b.ReportMetric(float64(n)/used, "records/cpu-s")
	b.ReportMetric(used*1e9/float64(n), "cpu-ns/record")
}

// BenchmarkJudgeLimitctl is the whole judge path on a hammer --record file: read, replayed into
// the run's evidence and refusal judges, judged (README's figure; hack/bench-history.sh).
func BenchmarkJudgeLimitctl(b *testing.B) {
	data, err := io.ReadAll(newGenLimitctl(benchRecords))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	benchJudge(b, judge.Options{}, func() io.Reader { return bytes.NewReader(data) }, verdict.Exact)
}

// BenchmarkJudgeVegeta is the same for a vegeta JSON file judged as a fixed window behind HTTP.
func BenchmarkJudgeVegeta(b *testing.B) {
	data := genVegeta(benchRecords)
	b.SetBytes(int64(len(data)))
	o := judge.Options{Limiter: limiter.FixedWindow, Limit: 100, Window: time.Second}
	benchJudge(b, o, func() io.Reader { return bytes.NewReader(data) }, verdict.Exact)
}

// BenchmarkJudgeAgainstVegetaEncode judges a vegeta JSON file and has vegeta itself read it
// (`vegeta encode`, to /dev/null), and reports both CPU costs a record and their ratio: how many
// times vegeta's CPU judge spends (under 1 is faster).
func BenchmarkJudgeAgainstVegetaEncode(b *testing.B) {
	vegeta := loadtools.Vegeta(b)
	path := filepath.Join(b.TempDir(), "results.json")
	if err := os.WriteFile(path, genVegeta(benchRecords), 0o644); err != nil {
		b.Fatal(err)
	}
	o := judge.Options{Files: []string{path}, Limiter: limiter.FixedWindow, Limit: 100, Window: time.Second}
	var ours, theirs float64
	var n int64
	for b.Loop() {
		cmd := exec.Command(vegeta, "encode", "--to", "json", "--output", os.DevNull, path)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("vegeta encode: %v\n%s", err, out)
		}
		theirs += (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
		before := processCPU(b)
		res, err := judge.Run(context.Background(), o)
		if err != nil {
			b.Fatal(err)
		}
		ours += processCPU(b) - before
		n += res.Summary.Strategies[0].Attempts
	}
	b.ReportMetric(ours*1e9/float64(n), "cpu-ns/record")
	b.ReportMetric(theirs*1e9/float64(n), "vegeta-cpu-ns/record")
	b.ReportMetric(ours/theirs, "ratio")
}

// peakHeap judges n generated calls of a hammer --record file, read as they are made, and
// returns the most heap in use seen (sampled as the reading goes, after a collection).
func peakHeap(t *testing.T, n int) uint64 {
	var peak uint64
	done := make(chan struct{})
	stop := make(chan struct{})
	go func() {
		defer close(done)
		var ms runtime.MemStats
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				runtime.GC()
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapInuse)
			}
		}
	}()
	res, err := judge.Run(context.Background(), judge.Options{Inputs: []history.Input{{Name: "gen", R: newGenLimitctl(n)}}})
	close(stop)
	<-done
	if err != nil {
		t.Fatal(err)
	}
	if st := res.Summary.Strategies[0]; st.Attempts != int64(n) || res.Verdicts[0].Word != verdict.Exact {
		t.Fatalf("%d attempts, %s %s", st.Attempts, res.Verdicts[0].Word, res.Verdicts[0].Text)
	}
	return peak
}

func TestJudgingTenTimesTheRecordsTakesNoMoreMemory(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("judges 11 million records")
	}
	small := 1_000_000
	smallPeak := peakHeap(t, small)
	largePeak := peakHeap(t, 10*small)
	t.Logf("heap in use at most: %d records %.1f MB, %d records %.1f MB", small, float64(smallPeak)/1e6,
		10*small, float64(largePeak)/1e6)
	if float64(largePeak) > 1.2*float64(smallPeak)+2e6 {
		t.Fatalf("%d records took %d bytes of heap, %d records %d", 10*small, largePeak, small, smallPeak)
	}
}
