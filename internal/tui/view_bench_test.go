package tui

import "testing"

// BenchmarkView is the cost of one frame of the dashboard (two strategies, 160x48): the
// dashboard renders one per engine snapshot, ten a second.
func BenchmarkView(b *testing.B) {
	m := resize(scenarios[1].build(), 160, 48)
	b.ReportAllocs()
	for b.Loop() {
		_ = m.View()
	}
}
