package human

import (
	"math"
	"slices"
	"testing"
	"time"
)

func TestCount(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0", 7: "7", 999: "999", 1000: "1,000", 12345: "12,345", 1234567: "1,234,567", -4200: "-4,200",
	} {
		if got := Count(n); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestCompact(t *testing.T) {
	for v, want := range map[float64]string{
		0: "0", 2.5: "2.5", 950: "950", 999.6: "1000", 5123: "5.1k", 99_949: "99.9k", 123_456: "123k",
		4_500_000: "4.5M", 250_000_000: "250M", -5123: "-5.1k", math.NaN(): "?",
	} {
		if got := Compact(v); got != want {
			t.Errorf("Compact(%v) = %q, want %q", v, got, want)
		}
	}
}

func TestLatency(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0", 800: "800ns", 850 * time.Microsecond: "850µs", 1234 * time.Microsecond: "1.23ms",
		12340 * time.Microsecond: "12.3ms", 1200 * time.Millisecond: "1.20s",
	} {
		if got := Latency(d); got != want {
			t.Errorf("Latency(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestClock(t *testing.T) {
	for d, want := range map[time.Duration]string{
		-time.Second: "0.0s", 4200 * time.Millisecond: "4.2s", 65 * time.Second: "1m05s", 62 * time.Minute: "1h02m",
	} {
		if got := Clock(d); got != want {
			t.Errorf("Clock(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestDurationAndBytes(t *testing.T) {
	for d, want := range map[time.Duration]string{
		850 * time.Millisecond: "850ms", 5500 * time.Millisecond: "5.5s", 30 * time.Minute: "30m", time.Hour: "1h",
		time.Hour + 2*time.Minute + 3*time.Second: "1h2m3s", -2 * time.Second: "-2s",
	} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%s) = %q, want %q", d, got, want)
		}
	}
	for n, want := range map[int64]string{512: "512 B", 1536: "1.5 KiB", 2 << 20: "2.0 MiB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// A typo finds the names it is one edit from (two for longer words; a swap of neighbours is
// one edit), and a start finds the names it begins; far words find nothing.
func TestNear(t *testing.T) {
	names := []string{"workers", "window", "witness", "stale", "dry-run", "addr", "a"}
	for typed, want := range map[string][]string{
		"worker": {"workers"}, "stael": {"stale"}, "dryrun": {"dry-run"}, "adr": {"addr"},
		"wi": {"window", "witness"}, "frobnicate": nil, "b": {"a"},
	} {
		if got := Near(typed, names); !slices.Equal(got, want) {
			t.Errorf("Near(%q) = %q, want %q", typed, got, want)
		}
	}
	if got := DidYouMean([]string{"workers", "window"}, "--"); got != "; did you mean --workers or --window?" {
		t.Errorf("DidYouMean = %q", got)
	}
	if got := DidYouMean(nil, "--"); got != "" {
		t.Errorf("DidYouMean(nil) = %q, want nothing", got)
	}
}

func TestFirstLine(t *testing.T) {
	for in, want := range map[string]string{
		"one": "one", "  padded \n": "padded", "first \nsecond\nthird": "first", "\n\nlater": "later", "": "",
	} {
		if got := FirstLine(in); got != want {
			t.Errorf("FirstLine(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestElapsedIsGosDurationToTheMillisecond(t *testing.T) {
	for d, want := range map[time.Duration]string{
		5*time.Second + 3*time.Millisecond + 400*time.Microsecond: "5.003s",
		850*time.Millisecond + 600*time.Microsecond:               "851ms",
		time.Minute + 500*time.Millisecond:                        "1m0.5s",
		0:                                                         "0s",
	} {
		if got := Elapsed(d); got != want {
			t.Errorf("Elapsed(%s) = %q, want %q", d, got, want)
		}
	}
}

func TestServerUsecToATenthOrNone(t *testing.T) {
	v := 6.44
	if got := ServerUsec(&v, "n/a"); got != "6.4" {
		t.Errorf("ServerUsec(6.44) = %q, want 6.4", got)
	}
	if got := ServerUsec(nil, "n/a"); got != "n/a" {
		t.Errorf("ServerUsec(nil) = %q, want the none given", got)
	}
}
