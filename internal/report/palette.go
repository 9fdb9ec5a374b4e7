package report

import "github.com/wcharczuk/go-chart/v2/drawing"

// The report's palette, as hex, named once: the charts (drawing colours below) and the sequence
// diagram (SVG attributes) both take their colours from here; the same hues as the dashboard.
// Red (hexOver) means the limiter answered wrong (an overshoot, a refusal proven wrong, a raced
// request) and nothing else: no strategy, latency or rate line is drawn in red, pink or the
// limit's amber.
const (
	hexCount     = "#2563eb" // the live count, a reply's arrow
	hexLimit     = "#d97706"
	hexOver      = "#dc2626"
	hexRate      = "#059669"
	hexP50       = "#7c3aed"
	hexP99       = "#0f766e"
	hexGrid      = "#e5e7eb"
	hexAxis      = "#6b7280" // axes, and the secondary text of the diagram
	hexInk       = "#111827"
	hexInkSoft   = "#374151" // a command's arrow
	hexLane      = "#f9fafb"
	hexLifeline  = "#d1d5db"
	hexRedis     = "#b91c1c"
	hexRedisFill = "#fef2f2"
	hexRedisLine = "#fca5a5"
)

// colour is a palette entry as the charts draw it.
func colour(hex string) drawing.Color { return drawing.ColorFromHex(hex[1:]) }
