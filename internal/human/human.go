// Package human formats numbers and durations for people: thousands separators, compact
// rates and latencies with three significant digits, the same on the dashboard and in reports.
package human

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Count formats an integer with thousands separators: 12,345.
func Count(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	out := make([]byte, 0, len(s)+len(s)/3+1)
	if neg {
		out = append(out, '-')
	}
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}

// Compact formats a non-negative quantity in at most five characters: 950, 12.3k, 4.5M.
func Compact(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "?"
	case v < 0:
		return "-" + Compact(-v)
	case v < 1000:
		if v != math.Trunc(v) && v < 10 {
			return strconv.FormatFloat(v, 'f', 1, 64)
		}
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	case v < 100_000:
		return strconv.FormatFloat(v/1e3, 'f', 1, 64) + "k"
	case v < 1_000_000:
		return strconv.FormatFloat(v/1e3, 'f', 0, 64) + "k"
	case v < 100_000_000:
		return strconv.FormatFloat(v/1e6, 'f', 1, 64) + "M"
	default:
		return strconv.FormatFloat(v/1e6, 'f', 0, 64) + "M"
	}
}

// Latency formats a latency with three significant digits: 850µs, 1.23ms, 12.3ms, 1.20s.
func Latency(d time.Duration) string {
	switch {
	case d <= 0:
		return "0"
	case d < time.Microsecond:
		return fmt.Sprintf("%dns", d.Nanoseconds())
	case d < time.Millisecond:
		return sig3(float64(d)/float64(time.Microsecond)) + "µs"
	case d < time.Second:
		return sig3(float64(d)/float64(time.Millisecond)) + "ms"
	default:
		return sig3(d.Seconds()) + "s"
	}
}

// sig3 prints v (1 <= v < 1000) with three significant digits.
func sig3(v float64) string {
	switch {
	case v < 10:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case v < 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
}

// Clock formats an elapsed time for the header: 4.2s, 1m05s, 1h02m.
func Clock(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	switch {
	case d < time.Minute:
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	default:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
}

// ErrorKinds lists error kinds with their counts, the most frequent first, then by name so the
// order is stable: "timeout 10", "connection 2".
func ErrorKinds(byKind map[string]int64) []string {
	kinds := make([]string, 0, len(byKind))
	for k, n := range byKind {
		if n > 0 {
			kinds = append(kinds, k)
		}
	}
	sort.Slice(kinds, func(i, j int) bool {
		if byKind[kinds[i]] != byKind[kinds[j]] {
			return byKind[kinds[i]] > byKind[kinds[j]]
		}
		return kinds[i] < kinds[j]
	})
	for i, k := range kinds {
		kinds[i] = k + " " + Count(byKind[k])
	}
	return kinds
}

// Plural picks the word for n: one when n is 1, else many.
func Plural[N ~int | ~int64](n N, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Elapsed formats how long a run took as Go writes a duration, to the millisecond: 5.003s,
// 850ms, 1m0.5s.
func Elapsed(d time.Duration) string { return d.Round(time.Millisecond).String() }

// ServerUsec formats Redis's own µs per call (INFO commandstats) to a tenth: 6.4; none when
// there is no figure.
func ServerUsec(usec *float64, none string) string {
	if usec == nil {
		return none
	}
	return strconv.FormatFloat(*usec, 'f', 1, 64)
}

// Duration formats a duration the way an operator reads it: 850ms, 5.5s, 30m, 1h2m3s.
func Duration(d time.Duration) string {
	if d < 0 {
		return "-" + Duration(-d)
	}
	switch {
	case d < time.Second:
		return Elapsed(d)
	case d < time.Minute:
		return strconv.FormatFloat(d.Round(100*time.Millisecond).Seconds(), 'f', -1, 64) + "s"
	}
	s := d.Round(time.Second).String()
	// 10m0s -> 10m, 1h0m0s -> 1h, 1h0m5s stays.
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// Bytes formats a byte count with a binary unit: 512 B, 1.5 KiB, 2.0 MiB.
func Bytes(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// Or joins values as a sentence does: "a, b, c or d".
func Or(values []string) string {
	if len(values) < 2 {
		return strings.Join(values, "")
	}
	return strings.Join(values[:len(values)-1], ", ") + " or " + values[len(values)-1]
}

// YesNo is yes or no.
func YesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// Wrap is text reflowed into lines of at most width columns, broken at spaces (help texts).
func Wrap(text string, width int) string {
	return strings.Join(Lay(Words(strings.Join(strings.Fields(text), " ")), width, 0), "\n")
}

// DidYouMean is "; did you mean X?" (or "X or Y?") for suggestions, each after prefix; "" for
// none: kept on an error's one line.
func DidYouMean(suggestions []string, prefix string) string {
	if len(suggestions) == 0 {
		return ""
	}
	quoted := make([]string, len(suggestions))
	for i, s := range suggestions {
		quoted[i] = prefix + s
	}
	return "; did you mean " + strings.Join(quoted, " or ") + "?"
}

// Near lists the names that typed is a typo of (one edit away, two for words longer than four
// letters; a swap of neighbours is one) or the start of, in the order given.
func Near(typed string, names []string) []string {
	most := 1
	if len(typed) > 4 {
		most = 2
	}
	var out []string
	for _, name := range names {
		if editDistance(typed, name) <= most || strings.HasPrefix(name, typed) {
			out = append(out, name)
		}
	}
	return out
}

// editDistance is the optimal string alignment distance between a and b: insertions,
// deletions, substitutions and swaps of neighbouring letters, one each.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// FirstLine is the first line of a message, trimmed: an error printed on the one line the exit
// contract promises.
func FirstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	return s
}
