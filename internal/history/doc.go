// Package history streams the records a load tool already wrote (vegeta's JSON and CSV
// encodings, k6's JSON lines, limitctl's own `hammer --record` files) as Records: each request's
// bounds on when the limiter could have decided it, its status, URL and key, and the file and
// line it came from. It reads a record at a time, in bounded memory whatever the file's length,
// and merges several files in time order; it never judges.
//
// # Which instants the tools record
//
// A Record's Start is a lower bound on the instant the limiter decided (the request's first byte
// was sent no earlier) and its End an upper bound (the response's first byte was received no
// later). Each format gives them as its tool measures, read from the tools' sources:
//
// vegeta v12 (lib/attack.go, Attacker.hit): Timestamp is taken under the attack's sequence lock
// before the target is read, the request built and http.Client.Do called, so before any dial
// and before the request's first byte: Start = timestamp. Latency is time.Since(Timestamp) in a
// deferred function that runs after the body was read to its end (io.ReadAll, then io.Copy to
// io.Discard) and closed, so it reaches past the response's first byte: End = timestamp +
// latency, a loose but certain bound. Both are on one monotonic clock per attack
// (atk.began.Add(time.Since(atk.began))), written as wall time: the records of one attack are
// comparable; two attacks' only as far as their hosts' wall clocks agree. Seq is the attack's
// request counter, unique within an attack, so two attacks' files merged repeat seqs without
// being duplicates (only an identical record is). Headers are the response's.
// Encodings (lib/results.go): JSON is easyjson's field order attack, seq, code, timestamp
// (RFC 3339 with nanoseconds), latency (ns), bytes_out, bytes_in, error, body (base64), method,
// url, headers ({name: [values]}), one object a line; CSV has no header row and the columns
// timestamp (Unix ns), code, latency (ns), bytes_out, bytes_in, error, body (base64), attack,
// seq, method, url, headers (base64 of the header block as http.Header.Write writes it).
//
// k6 (internal/output/json: json.go, wrapper.go; lib/netext/httpext: tracer.go, transport.go):
// each line is a {"type":"Metric"} definition (the first time a metric is seen) or a
// {"type":"Point","metric":M,"data":{"time","value","tags"}} sample. Every HTTP request is one
// Trail whose samples are written together, in the order http_reqs (value 1),
// http_req_duration, _blocked, _connecting, _tls_handshaking, _sending, _waiting, _receiving
// (and http_req_failed when a response callback is set), all with the same time and tags
// (Trail.SaveSamples). That time is Trail.EndTime, taken by Tracer.Done after the body was
// read: the request's end, not its start. Values are milliseconds (metrics.D). Duration is
// sending + waiting + receiving, where sending starts when the connection was ready (after any
// dial and TLS handshake), so EndTime - http_req_duration is no later than the first byte sent:
// Start. Receiving is EndTime minus the response's first byte (GotFirstResponseByte), so
// EndTime - http_req_receiving is the response's first byte: End (EndTime itself when no
// receiving point was written). A request whose write was never reported (WroteRequest) has
// sending 0 and a duration that starts at its response: its Start is unknown. The tracer reads
// the wall clock (time.Now().UnixNano()), so a clock step inside a request moves its bounds.
// Tags: url (the cleaned URL, or the name tag when the script set one), name, method, status
// ("0" for a request that got no response), proto, scenario, expected_response; k6 writes no
// headers and no sequence number.
//
// limitctl (Call, RunHeader in limitctl.go): sent_us is read before the call is written and
// received_us after its reply was read, on the run's monotonic clock from the header's
// started_unix_ns: Start = sent, End = received.
//
// A bound a record does not give is never guessed: the record carries a flag (StartUnknown,
// EndUnknown, StatusUnknown) and the judge counts it as not judged.
package history
