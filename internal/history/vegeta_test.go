package history_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/history"
	"github.com/limitctl/limitctl/internal/loadtools"
)

// refusingServer answers every other request 429, echoes the query's key in X-Key, and notes
// when it handled each vegeta request (by its X-Vegeta-Seq) on a clock read as vegeta reads
// its own: a wall-clock anchor plus monotonic time.
type refusingServer struct {
	*httptest.Server
	calls   atomic.Int64
	began   time.Time
	mu      sync.Mutex
	handled map[string]int64 // X-Vegeta-Attack/X-Vegeta-Seq -> Unix ns
}

func newRefusingServer(t *testing.T) *refusingServer {
	s := &refusingServer{handled: map[string]int64{}, began: time.Now()}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		at := s.began.Add(time.Since(s.began)).UnixNano()
		s.mu.Lock()
		s.handled[r.Header.Get("X-Vegeta-Attack")+"/"+r.Header.Get("X-Vegeta-Seq")] = at
		s.mu.Unlock()
		w.Header().Set("X-Key", r.URL.Query().Get("key"))
		if s.calls.Add(1)%2 == 0 {
			http.Error(w, "slow down", http.StatusTooManyRequests)
			return
		}
		fmt.Fprintln(w, "ok")
	}))
	t.Cleanup(s.Close)
	return s
}

// vegetaRun is an attack's results, in each encoding, and vegeta's own report of them.
type vegetaRun struct {
	json, csv string
	report    vegetaReport
}

type vegetaReport struct {
	Requests    int            `json:"requests"`
	StatusCodes map[string]int `json:"status_codes"`
	Earliest    time.Time      `json:"earliest"`
	Latest      time.Time      `json:"latest"`
	End         time.Time      `json:"end"`
	Latencies   struct {
		Max int64 `json:"max"`
	} `json:"latencies"`
}

// attack runs vegeta against s for a second at rate requests a second, over two URLs, as the
// attack named name.
func attack(t *testing.T, s *refusingServer, name string, rate int) vegetaRun {
	t.Helper()
	run, err := runAttack(loadtools.Vegeta(t), t.TempDir(), s, name, rate)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// runAttack is attack for any goroutine: its failure is an error.
func runAttack(vegeta, dir string, s *refusingServer, name string, rate int) (vegetaRun, error) {
	targets := filepath.Join(dir, name+"-targets.txt")
	body := fmt.Sprintf("GET %s/limited?key=a\n\nGET %s/limited?key=b&x=1\n", s.URL, s.URL)
	if err := os.WriteFile(targets, []byte(body), 0o644); err != nil {
		return vegetaRun{}, err
	}
	bin := filepath.Join(dir, name+".bin")
	run := func(args ...string) ([]byte, error) {
		out, err := exec.Command(vegeta, args...).Output()
		if err != nil {
			var stderr []byte
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = ee.Stderr
			}
			return nil, fmt.Errorf("vegeta %v: %v\n%s", args, err, stderr)
		}
		return out, nil
	}
	r := vegetaRun{json: filepath.Join(dir, name+".json"), csv: filepath.Join(dir, name+".csv")}
	var report []byte
	var err error
	for _, args := range [][]string{
		{"attack", "-name", name, "-targets", targets, "-rate", fmt.Sprintf("%d/s", rate), "-duration", "1s", "-output", bin},
		{"encode", "--to", "json", "--output", r.json, bin},
		{"encode", "--to", "csv", "--output", r.csv, bin},
		{"report", "-type", "json", bin},
	} {
		if report, err = run(args...); err != nil {
			return r, err
		}
	}
	if err := json.Unmarshal(report, &r.report); err != nil {
		return r, err
	}
	if r.report.Requests == 0 {
		return r, errors.New("vegeta sent no request")
	}
	return r, nil
}

func readAll(t *testing.T, opts history.Options, paths ...string) ([]history.Record, *history.Reader) {
	t.Helper()
	r, err := history.Open(paths, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	var recs []history.Record
	for r.Next() {
		c := *r.Record()
		c.Headers = append([]string(nil), c.Headers...)
		recs = append(recs, c)
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return recs, r
}

func TestVegetaRecordsReadAsVegetaReportsThem(t *testing.T) {
	s := newRefusingServer(t)
	run := attack(t, s, "one", 200)
	for _, tc := range []struct {
		name, path string
		csv        bool
	}{{"json", run.json, false}, {"csv", run.csv, true}} {
		t.Run(tc.name, func(t *testing.T) {
			recs, r := readAll(t, history.Options{KeyBy: history.KeyBy{By: history.KeyByHeader, Header: "X-Key"},
				Headers: []string{"Content-Type"}}, tc.path)
			f := r.Files()[0]
			if f.Format != history.FormatVegeta || f.CSV != tc.csv {
				t.Fatalf("format %q csv=%v, want vegeta csv=%v", f.Format, f.CSV, tc.csv)
			}
			if len(recs) != run.report.Requests {
				t.Fatalf("%d records, vegeta reports %d requests", len(recs), run.report.Requests)
			}
			codes := map[string]int{}
			seqs := map[int64]bool{}
			var earliest, latest, end, maxLatency int64
			minAfterStart, minBeforeEnd := int64(math.MaxInt64), int64(math.MaxInt64)
			slack := (recs[0].StartNs-s.began.UnixNano())/2000 + 1000 // 500 ppm of the gap, and 1 µs
			for i, rec := range recs {
				codes[strconv.Itoa(rec.Status)]++
				if rec.Flags != 0 {
					t.Fatalf("record at line %d: flags %v", rec.Line, rec.Flags)
				}
				if rec.StartNs > rec.EndNs {
					t.Fatalf("line %d: start %d after end %d", rec.Line, rec.StartNs, rec.EndNs)
				}
				if i > 0 && rec.StartNs < recs[i-1].StartNs {
					t.Fatalf("line %d returned out of time order", rec.Line)
				}
				if seqs[rec.Seq] {
					t.Fatalf("seq %d twice", rec.Seq)
				}
				seqs[rec.Seq] = true
				wantKey, wantURL := "a", s.URL+"/limited?key=a"
				if rec.Seq%2 == 1 {
					wantKey, wantURL = "b", s.URL+"/limited?key=b&x=1"
				}
				if rec.Key != wantKey || rec.URL != wantURL {
					t.Fatalf("seq %d: key %q url %q, want %q %q", rec.Seq, rec.Key, rec.URL, wantKey, wantURL)
				}
				if ct := rec.Headers[0]; ct != "text/plain; charset=utf-8" {
					t.Fatalf("seq %d: Content-Type %q", rec.Seq, ct)
				}
				// The server handled the request between the bounds. Both clocks are a wall
				// clock reading plus monotonic time since: they differ by what the wall clock
				// was slewed between the two readings (NTP slews at most 500 ppm).
				s.mu.Lock()
				at, ok := s.handled["one/"+strconv.FormatInt(rec.Seq, 10)]
				s.mu.Unlock()
				if !ok {
					t.Fatalf("seq %d: the server saw no such request", rec.Seq)
				}
				minAfterStart, minBeforeEnd = min(minAfterStart, at-rec.StartNs), min(minBeforeEnd, rec.EndNs-at)
				if at < rec.StartNs-slack || at > rec.EndNs+slack {
					t.Fatalf("seq %d handled at %d, outside [%d, %d]", rec.Seq, at, rec.StartNs, rec.EndNs)
				}
				if i == 0 || rec.StartNs < earliest {
					earliest = rec.StartNs
				}
				latest, end = max(latest, rec.StartNs), max(end, rec.EndNs)
				maxLatency = max(maxLatency, rec.EndNs-rec.StartNs)
			}
			t.Logf("handled at least %v after the start and %v before the end",
				time.Duration(minAfterStart), time.Duration(minBeforeEnd))
			if fmt.Sprint(codes) != fmt.Sprint(run.report.StatusCodes) {
				t.Fatalf("status counts %v, vegeta reports %v", codes, run.report.StatusCodes)
			}
			if codes["429"] == 0 || codes["200"] == 0 {
				t.Fatalf("want both 200s and 429s: %v", codes)
			}
			for name, pair := range map[string][2]int64{
				"earliest": {earliest, run.report.Earliest.UnixNano()},
				"latest":   {latest, run.report.Latest.UnixNano()},
				"end":      {end, run.report.End.UnixNano()},
				"latency":  {maxLatency, run.report.Latencies.Max},
			} {
				if pair[0] != pair[1] {
					t.Errorf("%s %d, vegeta reports %d", name, pair[0], pair[1])
				}
			}
			st := r.Stats()
			if st.Records != int64(len(recs)) || st.NotJudged() != 0 || st.Bad != 0 || st.Truncated != 0 {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}

func TestTwoVegetaAttacksAtOnceMergeInTimeOrder(t *testing.T) {
	s := newRefusingServer(t)
	vegeta, dir := loadtools.Vegeta(t), t.TempDir()
	var runs [2]vegetaRun
	var errs [2]error
	var wg sync.WaitGroup
	for i, name := range []string{"a", "b"} {
		wg.Go(func() { runs[i], errs[i] = runAttack(vegeta, dir, s, name, 150) })
	}
	wg.Wait()
	if err := errors.Join(errs[:]...); err != nil {
		t.Fatal(err)
	}
	// Each attack numbers its requests from 0: the same seqs, different requests.
	recs, r := readAll(t, history.Options{}, runs[0].json, runs[1].csv)
	if want := runs[0].report.Requests + runs[1].report.Requests; len(recs) != want {
		t.Fatalf("%d records, the attacks sent %d", len(recs), want)
	}
	perFile := [2]int{}
	for i, rec := range recs {
		if i > 0 && rec.StartNs < recs[i-1].StartNs {
			t.Fatalf("record %d (file %d line %d) out of time order", i, rec.File, rec.Line)
		}
		perFile[rec.File]++
	}
	if perFile[0] != runs[0].report.Requests || perFile[1] != runs[1].report.Requests {
		t.Fatalf("records per file %v", perFile)
	}
	if st := r.Stats(); st.Duplicates != 0 || st.NotJudged() != 0 {
		t.Fatalf("stats %+v", st)
	}
	// Both interleave: the attacks ran at once.
	switches := 0
	for i := 1; i < len(recs); i++ {
		if recs[i].File != recs[i-1].File {
			switches++
		}
	}
	if switches < 10 {
		t.Fatalf("the two attacks' records alternate only %d times", switches)
	}

	// The same file twice (its JSON and its CSV): every record of the second is a duplicate.
	recs, r = readAll(t, history.Options{}, runs[0].json, runs[0].csv)
	if len(recs) != runs[0].report.Requests || r.Files()[1].Stats.Duplicates != int64(runs[0].report.Requests) {
		t.Fatalf("%d records, files %+v", len(recs), r.Files())
	}

	// A file cut inside its last line: every whole record read, the cut one counted.
	data, err := os.ReadFile(runs[1].json)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.json")
	os.WriteFile(cut, data[:len(data)-40], 0o644)
	recs, r = readAll(t, history.Options{}, cut)
	if len(recs) != runs[1].report.Requests-1 || r.Stats().Truncated != 1 {
		t.Fatalf("%d records of %d, stats %+v", len(recs), runs[1].report.Requests, r.Stats())
	}
}
