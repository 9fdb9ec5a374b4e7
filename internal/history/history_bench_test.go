package history_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/history"
	"github.com/limitctl/limitctl/internal/loadtools"
)

// benchRecords is how many records each benchmark file holds: a run of 100k requests at 10k/s,
// each taking 2 ms, written as the tools write them.
const benchRecords = 100_000

func benchFile(format string) []byte {
	reqs := genRun(benchRecords, base, 100*time.Microsecond, 2*time.Millisecond)
	var lc bytes.Buffer
	switch format {
	case "vegeta-json":
		return genVegetaJSON(reqs)
	case "vegeta-csv":
		return genVegetaCSV(reqs)
	case "k6":
		return genK6(reqs)
	}
	cw := must(history.NewCallWriter(&lc, history.RunHeader{RunID: "r", StartedUnixNs: base.UnixNano(),
		Limiter: "fixed-window", Limit: 10, WindowUs: 1e6}))
	for _, r := range reqs {
		off := r.start.Sub(base).Microseconds()
		cw.Write(&history.Call{Seq: r.seq, Strategy: "lua", Worker: int(r.seq % 64), Key: r.key, SentUs: off,
			ReceivedUs: off + r.latency.Microseconds(), Decision: "admit", Reply: "1"})
	}
	cw.Flush()
	return lc.Bytes()
}

// processCPU is the seconds of CPU (user and system) the process has used: on a shared machine
// the figure that a busy scheduler does not inflate, unlike the wall clock's.
func processCPU(tb testing.TB) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// reportRate reports records per second of the process's CPU (run with -cpu 1: one core's).
func reportRate(b *testing.B, records int64, cpu float64) {
	b.ReportMetric(float64(records)/cpu, "records/cpu-s")
	b.ReportMetric(cpu*1e9/float64(records), "cpu-ns/record")
}

// benchRead reads the file b.N times through a Reader and reports records a CPU-second and
// bytes a record (README's figure; hack/bench-history.sh).
func benchRead(b *testing.B, format string, opts history.Options) {
	data := benchFile(format)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	var n int64
	cpu := processCPU(b)
	for b.Loop() {
		r, err := history.New([]history.Input{{Name: format, R: bytes.NewReader(data)}}, opts)
		if err != nil {
			b.Fatal(err)
		}
		for r.Next() {
			n++
		}
		if err := r.Err(); err != nil {
			b.Fatal(err)
		}
	}
	reportRate(b, n, processCPU(b)-cpu)
	b.ReportMetric(float64(len(data))/benchRecords, "B/record")
}

func BenchmarkDecodeVegetaJSON(b *testing.B) { benchRead(b, "vegeta-json", history.Options{}) }
func BenchmarkDecodeVegetaCSV(b *testing.B)  { benchRead(b, "vegeta-csv", history.Options{}) }
func BenchmarkDecodeK6(b *testing.B)         { benchRead(b, "k6", history.Options{}) }
func BenchmarkDecodeLimitctl(b *testing.B)   { benchRead(b, "limitctl", history.Options{}) }

// Keyed by a response header, the headers of every record are read too.
func BenchmarkDecodeVegetaJSONKeyByHeader(b *testing.B) {
	benchRead(b, "vegeta-json", history.Options{KeyBy: history.KeyBy{By: history.KeyByHeader, Header: "X-Key"}})
}

func BenchmarkDecodeVegetaCSVKeyByHeader(b *testing.B) {
	benchRead(b, "vegeta-csv", history.Options{KeyBy: history.KeyBy{By: history.KeyByHeader, Header: "X-Key"}})
}

// BenchmarkEncodingJSONVegeta is the figure the scanner is measured against: each line decoded
// into vegeta's Result fields by encoding/json, nothing else done.
func BenchmarkEncodingJSONVegeta(b *testing.B) {
	data := benchFile("vegeta-json")
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var n int64
	cpu := processCPU(b)
	for b.Loop() {
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var r struct {
				Attack    string        `json:"attack"`
				Seq       uint64        `json:"seq"`
				Code      uint16        `json:"code"`
				Timestamp time.Time     `json:"timestamp"`
				Latency   time.Duration `json:"latency"`
				BytesOut  uint64        `json:"bytes_out"`
				BytesIn   uint64        `json:"bytes_in"`
				Error     string        `json:"error"`
				Body      []byte        `json:"body"`
				Method    string        `json:"method"`
				URL       string        `json:"url"`
				Headers   http.Header   `json:"headers"`
			}
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				b.Fatal(err)
			}
			n++
		}
	}
	reportRate(b, n, processCPU(b)-cpu)
}

// BenchmarkAgainstVegetaEncode reads the same file as `vegeta encode` does (vegeta's own
// decoder, writing to /dev/null) and reports both CPU costs a record and their ratio: how many
// times vegeta's CPU this package spends (under 1 is faster). hack/bench-history.sh prints it.
func BenchmarkAgainstVegetaEncode(b *testing.B) {
	vegeta := loadtools.Vegeta(b)
	for _, enc := range []string{"json", "csv"} {
		b.Run(enc, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "results."+enc)
			if err := os.WriteFile(path, benchFile("vegeta-"+enc), 0o644); err != nil {
				b.Fatal(err)
			}
			var ours, theirs float64
			var n int64
			for b.Loop() {
				cmd := exec.Command(vegeta, "encode", "--to", "json", "--output", os.DevNull, path)
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("vegeta encode: %v\n%s", err, out)
				}
				theirs += (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()

				before := processCPU(b)
				r, err := history.Open([]string{path}, history.Options{})
				if err != nil {
					b.Fatal(err)
				}
				for r.Next() {
					n++
				}
				if err := r.Err(); err != nil {
					b.Fatal(err)
				}
				r.Close()
				ours += processCPU(b) - before
			}
			b.ReportMetric(ours*1e9/float64(n), "cpu-ns/record")
			b.ReportMetric(theirs*1e9/float64(n), "vegeta-cpu-ns/record")
			b.ReportMetric(ours/theirs, "ratio")
		})
	}
}

// BenchmarkCallWriter is what `hammer --record` adds to each call: one line appended.
func BenchmarkCallWriter(b *testing.B) {
	cw := must(history.NewCallWriter(io.Discard, history.RunHeader{RunID: "r", Limiter: "fixed-window", Limit: 10}))
	c := history.Call{Seq: 1, Strategy: "lua", Worker: 12, Key: "limitctl:run:17", SentUs: 1234567, ReceivedUs: 1234890,
		Decision: "admit", Reply: "1"}
	b.ReportAllocs()
	for b.Loop() {
		c.Seq++
		if err := cw.Write(&c); err != nil {
			b.Fatal(err)
		}
	}
}
