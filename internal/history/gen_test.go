package history_test

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// The generators write records as the tools' own encoders do (vegeta's lib/results.go, k6's
// internal/output/json), for the tests and benchmarks that need more records than a real run
// gives: TestVegetaReadsTheGeneratedFile checks vegeta itself reads what genVegetaJSON writes.

// genRequest is one request of a generated run.
type genRequest struct {
	seq                  int64
	start                time.Time
	latency              time.Duration
	code                 int
	url, key             string
	sending, receiving   time.Duration // k6
	noSending, noHeaders bool
}

// genRun makes n requests from base, one every gap, each taking latency, every other one
// refused, over two keys.
func genRun(n int, base time.Time, gap, latency time.Duration) []genRequest {
	reqs := make([]genRequest, n)
	for i := range reqs {
		key := "a"
		if i%2 == 1 {
			key = "b"
		}
		code := 200
		if i%4 >= 2 {
			code = 429
		}
		reqs[i] = genRequest{seq: int64(i), start: base.Add(time.Duration(i) * gap), latency: latency, code: code,
			url: "http://127.0.0.1:8080/limited?key=" + key, key: key,
			sending: latency / 10, receiving: latency / 10}
	}
	return reqs
}

var genBody = []byte("ok\n")

func vegetaHeaders(r genRequest) http.Header {
	if r.noHeaders {
		return nil
	}
	return http.Header{"Content-Type": {"text/plain; charset=utf-8"}, "Content-Length": {"3"},
		"Date": {"Sun, 06 Dec 2026 21:41:00 GMT"}, "X-Key": {r.key}}
}

// vegetaJSONLine writes r as easyjson writes a vegeta Result.
func vegetaJSONLine(b []byte, r genRequest) []byte {
	b = append(b, `{"attack":"","seq":`...)
	b = strconv.AppendInt(b, r.seq, 10)
	b = append(b, `,"code":`...)
	b = strconv.AppendInt(b, int64(r.code), 10)
	ts, _ := r.start.MarshalJSON()
	b = append(append(b, `,"timestamp":`...), ts...)
	b = append(b, `,"latency":`...)
	b = strconv.AppendInt(b, int64(r.latency), 10)
	b = append(b, `,"bytes_out":0,"bytes_in":3,"error":`...)
	if r.code >= 400 {
		b = append(b, `"429 Too Many Requests"`...)
	} else {
		b = append(b, `""`...)
	}
	b = append(b, `,"body":"`...)
	b = base64.StdEncoding.AppendEncode(b, genBody)
	b = append(b, `","method":"GET","url":`...)
	u, _ := json.Marshal(r.url)
	b = append(b, u...)
	h, _ := json.Marshal(vegetaHeaders(r))
	b = append(append(b, `,"headers":`...), h...)
	return append(b, "}\n"...)
}

// vegetaCSVLine writes r as vegeta's CSV encoder does.
func vegetaCSVLine(w *csv.Writer, r genRequest) {
	var hdr bytes.Buffer
	if h := vegetaHeaders(r); h != nil {
		h.Write(&hdr)
		hdr.WriteString("\r\n")
	}
	errText := ""
	if r.code >= 400 {
		errText = "429 Too Many Requests"
	}
	w.Write([]string{strconv.FormatInt(r.start.UnixNano(), 10), strconv.Itoa(r.code),
		strconv.FormatInt(int64(r.latency), 10), "0", "3", errText, base64.StdEncoding.EncodeToString(genBody),
		"", strconv.FormatInt(r.seq, 10), "GET", r.url, base64.StdEncoding.EncodeToString(hdr.Bytes())})
}

func genVegetaJSON(reqs []genRequest) []byte {
	var b []byte
	for _, r := range reqs {
		b = vegetaJSONLine(b, r)
	}
	return b
}

func genVegetaCSV(reqs []genRequest) []byte {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	for _, r := range reqs {
		vegetaCSVLine(w, r)
	}
	w.Flush()
	return buf.Bytes()
}

// k6Writer writes requests as k6's JSON output does: a Metric line the first time a metric is
// seen, then each request's points in Trail.SaveSamples' order, all at its end time with its
// tags (k6 encodes with encoding/json, HTML escaping off; tags are a map, so sorted).
type k6Writer struct {
	w    io.Writer
	seen map[string]bool
}

var k6Metrics = []string{"http_reqs", "http_req_duration", "http_req_blocked", "http_req_connecting",
	"http_req_tls_handshaking", "http_req_sending", "http_req_waiting", "http_req_receiving", "http_req_failed"}

func (k *k6Writer) line(v any) {
	enc := json.NewEncoder(k.w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

func (k *k6Writer) metric(name string) {
	if k.seen[name] {
		return
	}
	k.seen[name] = true
	typ, contains := "trend", "time"
	switch name {
	case "http_reqs":
		typ, contains = "counter", "default"
	case "http_req_failed":
		typ, contains = "rate", "default"
	case "vus":
		typ, contains = "gauge", "default"
	}
	k.line(map[string]any{"type": "Metric", "data": map[string]any{"name": name, "type": typ, "contains": contains,
		"thresholds": []string{}, "submetrics": nil}, "metric": name})
}

func (k *k6Writer) point(name string, at time.Time, value float64, tags map[string]string) {
	k.metric(name)
	type data struct {
		Time  time.Time         `json:"time"`
		Value float64           `json:"value"`
		Tags  map[string]string `json:"tags"`
	}
	k.line(struct {
		Metric string `json:"metric"`
		Type   string `json:"type"`
		Data   data   `json:"data"`
	}{name, "Point", data{at, value, tags}})
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func (k *k6Writer) request(r genRequest) {
	end := r.start.Add(r.latency)
	tags := map[string]string{"expected_response": "true", "group": "", "method": "GET", "name": r.url,
		"proto": "HTTP/1.1", "scenario": "default", "status": strconv.Itoa(r.code), "url": r.url}
	sending := r.sending
	if r.noSending {
		sending = 0
	}
	waiting := r.latency - r.sending - r.receiving
	for _, name := range k6Metrics {
		v := 0.0
		switch name {
		case "http_reqs":
			v = 1
		case "http_req_duration":
			v = ms(r.latency)
		case "http_req_sending":
			v = ms(sending)
		case "http_req_waiting":
			v = ms(waiting)
		case "http_req_receiving":
			v = ms(r.receiving)
		case "http_req_failed":
			if r.code >= 400 {
				v = 1
			}
		}
		k.point(name, end, v, tags)
	}
}

// genK6 writes the requests in order, with a vus point every 100 requests as k6 interleaves.
func genK6(reqs []genRequest) []byte {
	var buf bytes.Buffer
	k := &k6Writer{w: &buf, seen: map[string]bool{}}
	for i, r := range reqs {
		if i%100 == 0 {
			k.point("vus", r.start, 10, map[string]string{})
		}
		k.request(r)
	}
	return buf.Bytes()
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(fmt.Sprint(err))
	}
	return v
}

func gzipWriter(w io.Writer) *gzip.Writer { return gzip.NewWriter(w) }

func jsonValid(b []byte) bool { return json.Valid(b) }
