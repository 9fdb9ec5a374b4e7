package judge_test

import (
	"bytes"
	"io"
	"strconv"
	"time"

	"github.com/limitctl/limitctl/internal/history"
)

// genBase is the generated runs' clock zero.
var genBase = time.Date(2026, 12, 6, 21, 41, 0, 0, time.UTC)

// genLimitctl writes a hammer --record file of n calls as it is read, never whole in memory: a
// correct fixed window of 100 per second on the client's clock, one call every 10µs (100,000 a
// second, 64 workers), each answered 200µs after it was sent; every 1,000th takes 5ms
// (written when it ends, out of order). The first 100 calls of each second are admitted.
type genLimitctl struct {
	n, next int
	header  bool
	buf     []byte
	w       *history.CallWriter
	out     bytes.Buffer
}

func newGenLimitctl(n int) *genLimitctl {
	g := &genLimitctl{n: n}
	w, err := history.NewCallWriter(&g.out, history.RunHeader{RunID: "gen", StartedUnixNs: genBase.UnixNano(),
		Limiter: "fixed-window", Limit: 100, WindowUs: 1e6, SkewUs: 0, HorizonUs: 5e6,
		Strategies: []history.RecordedStrategy{{Name: "lua", Target: history.TargetRedis, FreshKeys: true, Clock: "client",
			EpochAligned: true, QuantumUs: 1000, BeginUs: genBase.UnixMicro()}}})
	if err != nil {
		panic(err)
	}
	g.w = w
	return g
}

// call is the i-th call of the run.
func genCall(i int) history.Call {
	sent := int64(i) * 10
	latency := int64(200)
	if i%1000 == 999 {
		latency = 5000
	}
	c := history.Call{Seq: int64(i + 1), Strategy: "lua", Worker: i % 64, Key: "limitctl:{gen}:lua", SentUs: sent,
		ReceivedUs: sent + latency, Decision: "refuse", NowUs: genBase.UnixMicro() + sent}
	if i%100_000 < 100 {
		c.Decision, c.JudgedMs, c.LateUs = "admit", (genBase.UnixMicro()+sent)/1000, latency
	}
	return c
}

func (g *genLimitctl) Read(p []byte) (int, error) {
	for g.out.Len() < len(p) && g.next < g.n {
		c := genCall(g.next)
		if err := g.w.Write(&c); err != nil {
			return 0, err
		}
		if g.next++; g.next%1024 == 0 || g.next == g.n {
			g.w.Flush()
		}
	}
	if g.next == g.n {
		g.w.Flush()
	}
	if g.out.Len() == 0 {
		return 0, io.EOF
	}
	return g.out.Read(p)
}

// genVegeta writes a vegeta JSON file of n requests the same way: 10,000 a second, each
// answered in 2ms, the first 100 of each second 200 and the rest 429.
func genVegeta(n int) []byte {
	var b []byte
	for i := 0; i < n; i++ {
		start := genBase.Add(time.Duration(i) * 100 * time.Microsecond)
		code := 429
		if i%10_000 < 100 {
			code = 200
		}
		b = append(b, `{"attack":"","seq":`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `,"code":`...)
		b = strconv.AppendInt(b, int64(code), 10)
		b = append(b, `,"timestamp":"`...)
		b = start.AppendFormat(b, time.RFC3339Nano)
		b = append(b, `","latency":2000000,"bytes_out":0,"bytes_in":0,"error":"","body":null,"method":"GET","url":"http://127.0.0.1:8080/limited","headers":{}}`...)
		b = append(b, '\n')
	}
	return b
}
