package httptarget

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
)

// TestARetriedRequestSaysSo: a server that reads a request on a kept-alive connection and
// closes it unanswered may have decided it; the transport sends a GET again on a new
// connection, and the decision says the endpoint may have seen it twice.
func TestARetriedRequestSaysSo(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var conns, requests atomic.Int64
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			first := conns.Add(1) == 1
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for n := 0; ; n++ {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					requests.Add(1)
					req.Body.Close()
					if first && n == 1 {
						return // read, perhaps decided, never answered
					}
					resp := &http.Response{StatusCode: 200, ProtoMajor: 1, ProtoMinor: 1, ContentLength: 0, Header: http.Header{}}
					if err := resp.Write(c); err != nil {
						return
					}
				}
			}()
		}
	}()
	tg := newTarget(t, Spec{URL: "http://" + l.Addr().String() + "/"}, Options{Conns: 1})
	d, err := tg.Acquire(context.Background(), "k", Call{})
	if err != nil || d.Retried {
		t.Fatalf("first call: %+v, %v", d, err)
	}
	d, err = tg.Acquire(context.Background(), "k", Call{Seq: 1})
	if err != nil || !d.Allowed || !d.Retried {
		t.Fatalf("second call, read and dropped on its kept-alive connection: %+v, %v; want admitted and Retried", d, err)
	}
	if requests.Load() != 3 || conns.Load() != 2 {
		t.Errorf("the server read %d requests on %d connections; want 3 on 2", requests.Load(), conns.Load())
	}
}
