package contract

import "testing"

// BenchmarkExpand is the per-call cost of a two-key, five-argument contract with the clock.
func BenchmarkExpand(b *testing.B) {
	c, err := Compile(Spec{Keys: "{key}:{window_index} {key}:{prev_window_index}", Args: `{limit} {now_ms} {window_ms} 1 ""`}, Spec{})
	if err != nil {
		b.Fatal(err)
	}
	caller := mustBind(b, c, testStatic)
	call := &Call{Key: "limitctl:{run}:custom", Member: "abc-1", Now: testNow}
	b.ReportAllocs()
	for b.Loop() {
		caller.Expand(call)
	}
}

// BenchmarkAllowed is the per-call cost of judging a four-element reply, from many goroutines
// as the hammer's workers do.
func BenchmarkAllowed(b *testing.B) {
	a, err := CompileAllowed(FlagAllowed, "reply[1] == 1 and tonumber(reply[4]) >= 0")
	if err != nil {
		b.Fatal(err)
	}
	reply := []any{int64(1), int64(19), "-1", "0.05"}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if ok, err := a.Eval(reply); !ok || err != nil {
				b.Fatal(ok, err)
			}
		}
	})
}

// BenchmarkExpandArithmetic is the per-call cost of a contract with arithmetic on the clock:
// {now_ms + window_ms} and {now_ns}, beside the plain placeholders of BenchmarkExpand.
func BenchmarkExpandArithmetic(b *testing.B) {
	c, err := Compile(Spec{Keys: "{key}:{window_index} {key}:{prev_window_index}", Args: `{limit - 1} {now_ms + window_ms} {now_ns} {rate_per_s / 1000} ""`}, Spec{})
	if err != nil {
		b.Fatal(err)
	}
	caller := mustBind(b, c, testStatic)
	call := &Call{Key: "limitctl:{run}:custom", Member: "abc-1", Now: testNow}
	b.ReportAllocs()
	for b.Loop() {
		caller.Expand(call)
	}
}
