package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/bench"
)

// widestData is the fixture with the widest realistic summary: every strategy, each retrying,
// with counts in the millions, thousands of overshoot events and slow tails.
func widestData() Data {
	d := fixtureData()
	base := d.Summary.Strategies[0]
	var wide []bench.StrategySnapshot
	for i, name := range []string{"naive", "multi", "watch", "lua", "eval", "function", "lua-ts-member", "custom"} {
		s := base
		s.Name = name
		s.Attempts, s.Admitted, s.Rejected, s.Errors, s.Retries = 98_765_432, 45_678_901, 53_086_531, 1_234_567, 8_765_432
		s.AvgThroughput = 1_646_090
		server := 123.4 + float64(i)
		s.ServerUsecPerCall = &server
		s.Latency = bench.Latency{P50: 1234 * time.Millisecond, P90: 2600 * time.Millisecond, P99: 4870 * time.Millisecond,
			P999: 9450 * time.Millisecond, Max: 12345 * time.Millisecond}
		wide = append(wide, s)
	}
	d.Summary.Strategies = wide
	return d
}

// measureTables is a script run once the page is laid out: for every table, its width and the
// room inside its card (the section's content box), written into the DOM for --dump-dom.
const measureTables = `<script>
(function () {
  var out = [];
  document.querySelectorAll("table").forEach(function (t) {
    var card = t.closest("section"), cs = getComputedStyle(card);
    var room = card.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
    out.push(t.id + " " + Math.ceil(Math.max(t.scrollWidth, t.getBoundingClientRect().width)) + " " + Math.floor(room));
  });
  var p = document.createElement("pre");
  p.id = "table-fit";
  p.textContent = out.join("\n");
  document.body.appendChild(p);
})();
</script>`

// Every table of the report fits its card, whole, from 1,024 px windows up: no column is cut
// or scrolled out of sight, with the widest content a run writes.
func TestReportTablesFitTheirCardsInChromium(t *testing.T) {
	browser := chromium(t)
	var b bytes.Buffer
	if err := Write(&b, widestData()); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(t.TempDir(), "report.html")
	html := strings.Replace(b.String(), "</body>", measureTables+"</body>", 1)
	if err := os.WriteFile(page, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`(?m)^(\S+) (\d+) (\d+)$`)
	for _, width := range []int{1024, 1280, 1400} {
		dom, _ := load(t, browser, page, "--dump-dom", fmt.Sprintf("--window-size=%d,900", width), "--hide-scrollbars")
		fit := regexp.MustCompile(`(?s)<pre id="table-fit">(.*?)</pre>`).FindStringSubmatch(dom)
		if fit == nil {
			t.Fatalf("%d px: the measuring script wrote nothing:\n%.2000s", width, dom)
		}
		rows := row.FindAllStringSubmatch(fit[1], -1)
		if len(rows) < 2 || !strings.Contains(fit[1], "summary-table") {
			t.Fatalf("%d px: measured %q, want the summary and the percentile tables", width, fit[1])
		}
		for _, r := range rows {
			table, _ := strconv.Atoi(r[2])
			room, _ := strconv.Atoi(r[3])
			if r[1] == "summary-table" {
				t.Logf("%d px: the summary is %d px in %d px of room", width, table, room)
			}
			if table > room {
				t.Errorf("%d px: #%s is %d px wide in a card with %d px of room", width, r[1], table, room)
			}
		}
	}
}
