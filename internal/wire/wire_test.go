package wire_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/redisconn"
	"github.com/limitctl/limitctl/internal/rediserr"
	"github.com/limitctl/limitctl/internal/redistest"
	"github.com/limitctl/limitctl/internal/wire"
)

func TestMain(m *testing.M) { redistest.Main(m) }

func dialT(t *testing.T, opt *redis.Options) *wire.Conn {
	t.Helper()
	c, err := wire.Dial(context.Background(), opt)
	if err != nil {
		t.Fatalf("dial %s: %v", opt.Addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// outcome is a reply as the code reading it sees it: the value, whether it was redis.Nil, and
// an error reply's text and whether it is Redis's own (redis.Error).
type outcome struct {
	Val   any
	Nil   bool
	Err   string
	Reply bool
}

func outcomeOf(v any, err error) outcome {
	var re redis.Error
	o := outcome{Val: v, Nil: err == redis.Nil, Reply: errors.As(err, &re)}
	if err != nil && err != redis.Nil {
		o.Err = err.Error()
	}
	return o
}

// normal makes an element that is an error reply comparable across the two clients (each has
// its own error type): its text.
func normal(v any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normal(e)
		}
		return out
	case map[any]any:
		out := map[any]any{}
		for k, e := range x {
			out[normal(k)] = normal(e)
		}
		return out
	case error:
		return "error: " + x.Error()
	case float64:
		if math.IsNaN(x) {
			return "NaN"
		}
	}
	return v
}

// Every reply reads as go-redis reads it, in RESP2 and RESP3: the same command, sent by go-redis
// (Do) and by wire on connections of the same options, gives the same value, the same redis.Nil
// and the same error reply. The commands cover every type either protocol has: what scripts
// return (integers, strings, tables, nested tables, Lua false, status and error tables, numbers
// cut to integers), maps, sets, doubles, booleans, big numbers, verbatim strings and errors.
func TestRepliesReadAsGoRedisReadsThem(t *testing.T) {
	srv := redistest.Shared(t)
	ctx := context.Background()
	seed := srv.Client(t)
	if err := seed.HSet(ctx, "wire:{t}:h", "a", "1", "b", "2").Err(); err != nil {
		t.Fatal(err)
	}
	seed.SAdd(ctx, "wire:{t}:s", "x", "y")
	seed.ZAdd(ctx, "wire:{t}:z", redis.Z{Score: 1.5, Member: "m"})
	seed.Set(ctx, "wire:{t}:n", strings.Repeat("v", 100_000), 0) // longer than the read buffer
	commands := [][]any{
		{"ping"},
		{"eval", "return 42", 0},
		{"eval", "return -7", 0},
		{"eval", "return 'text'", 0},
		{"eval", "return {1, 'two', {3, {4}}}", 0},
		{"eval", "return false", 0},
		{"eval", "return true", 0},
		{"eval", "return nil", 0},
		{"eval", "return 3.9", 0},
		{"eval", "return {1, false, 3}", 0}, // a nil element: the table ends at it
		{"eval", "return redis.status_reply('FINE')", 0},
		{"eval", "return redis.error_reply('MYERR went wrong')", 0},
		{"eval", "return {1, redis.error_reply('INNER bad')}", 0},
		{"eval", "redis.setresp(3); return redis.call('hgetall', KEYS[1])", 1, "wire:{t}:h"},
		{"eval", "redis.setresp(3); return redis.call('smembers', KEYS[1])", 1, "wire:{t}:s"},
		{"eval", "redis.setresp(3); return redis.call('zscore', KEYS[1], 'm')", 1, "wire:{t}:z"},
		{"eval", "redis.setresp(3); return {double=2.5}", 0},
		{"eval", "redis.setresp(3); return {big_number='123456789012345678901234567890'}", 0},
		{"eval", "redis.setresp(3); return {map={a=1}}", 0},
		{"eval", "redis.setresp(3); return {verbatim_string={format='txt', string='hi'}}", 0},
		{"eval", "redis.setresp(3); return {double=0/0}", 0},
		{"eval", "return redis.call('get', 'wire:{t}:missing')", 0},
		{"hgetall", "wire:{t}:h"},
		{"smembers", "wire:{t}:s"},
		{"zscore", "wire:{t}:z", "m"},
		{"get", "wire:{t}:n"},
		{"get", "wire:{t}:missing"},
		{"evalsha", strings.Repeat("0", 40), 0},
		{"nosuchcommand"},
		{"incr", "wire:{t}:h"}, // WRONGTYPE
		{"client", "info"},     // verbatim under RESP3; its id differs, so only its type is compared
		{"set", "wire:{t}:args", 1.25},
		{"get", "wire:{t}:args"},
		{"set", "wire:{t}:args", true},
		{"get", "wire:{t}:args"},
		{"set", "wire:{t}:args", 90 * time.Millisecond},
		{"get", "wire:{t}:args"},
	}
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			opt := &redis.Options{Addr: srv.Addr, Protocol: proto, DisableIdentity: true}
			rdb := redis.NewClient(opt)
			defer rdb.Close()
			c := dialT(t, opt)
			if got := c.RESP3(); got != (proto == 3) {
				t.Fatalf("RESP3() = %v, want %v", got, proto == 3)
			}
			for _, cmd := range commands {
				want := outcomeOf(rdb.Do(ctx, cmd...).Result())
				got := outcomeOf(c.Call(ctx, cmd...))
				if cmd[0] == "client" {
					want.Val, got.Val = fmt.Sprintf("%T", want.Val), fmt.Sprintf("%T", got.Val)
				}
				want.Val, got.Val = normal(want.Val), normal(got.Val)
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%q:\n got %#v\nwant %#v", cmd, got, want)
				}
			}
		})
	}
}

// ReadInts reads every reply as Read does, and an array of integers (a shipped script's reply)
// into the caller's integers: the same commands, sent twice in one pipeline (the second time
// through AppendScript when a script's), give the same reply both ways.
func TestReadIntsReadsEveryReplyAsReadDoes(t *testing.T) {
	srv := redistest.Shared(t)
	ctx := context.Background()
	scripts := []string{ // the first four are arrays of integers
		"return {1, 0, -2}", "return {}", "return {7}", "return {1, 2, 3, 4, 5, 6}",
		"return {1, 'two', 3}", "return {1, 2, 3, 4, 5, 'six'}", "return {1, {2}}", "return {1, false, 3}",
		"return {1, redis.error_reply('INNER bad')}", "return 42", "return 'text'", "return nil",
		"return redis.error_reply('MYERR went wrong')", "redis.setresp(3); return {map={a=1}}",
		"redis.setresp(3); return {double=2.5}",
	}
	for _, proto := range []int{2, 3} {
		c := dialT(t, &redis.Options{Addr: srv.Addr, Protocol: proto, DisableIdentity: true})
		for _, script := range scripts {
			if err := c.Append("eval", script, 1, "wire:{t}:k", "arg"); err != nil {
				t.Fatal(err)
			}
			if err := c.AppendScript("EVAL", script, []string{"wire:{t}:k"}, []any{"arg"}); err != nil {
				t.Fatal(err)
			}
			if err := c.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			want := outcomeOf(c.Read())
			var first [4]int64
			n, ints, v, err := c.ReadInts(first[:])
			got := outcomeOf(v, err)
			if ints {
				arr := make([]any, n)
				for i := range arr {
					arr[i] = first[min(i, len(first)-1)]
				}
				if n > len(first) { // only the first are kept: compare those
					want.Val = want.Val.([]any)[:len(first)]
					arr = arr[:len(first)]
				}
				got.Val = arr
			}
			if isInts := script == scripts[0] || script == scripts[1] || script == scripts[2] || script == scripts[3]; ints != isInts {
				t.Errorf("RESP%d %q: read as integers %v, want %v", proto, script, ints, isInts)
			}
			want.Val, got.Val = normal(want.Val), normal(got.Val)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("RESP%d %q:\n got %#v (ints %v)\nwant %#v", proto, script, got, ints, want)
			}
		}
		if v, err := c.Call(ctx, "ping"); v != "PONG" || err != nil {
			t.Fatalf("RESP%d after the replies: %v, %v", proto, v, err)
		}
	}
}

// A pipeline: commands appended together go out in one write, and their replies come back in
// order, each its own, an error reply among them breaking nothing.
func TestPipelinedRepliesComeBackInOrder(t *testing.T) {
	srv := redistest.Shared(t)
	ctx := context.Background()
	c := dialT(t, &redis.Options{Addr: srv.Addr, Protocol: 2})
	for i := range 500 {
		if err := c.Append("eval", "if ARGV[1] % 7 == 0 then return redis.error_reply('SEVEN ' .. ARGV[1]) end return tonumber(ARGV[1])", 0, i); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range 500 {
		v, err := c.Read()
		if i%7 == 0 {
			if !redis.HasErrorPrefix(err, "SEVEN") || err.Error() != fmt.Sprintf("SEVEN %d", i) {
				t.Fatalf("reply %d: %v, %v; want the error reply SEVEN %d", i, v, err, i)
			}
			continue
		}
		if err != nil || v != int64(i) {
			t.Fatalf("reply %d: %v, %v", i, v, err)
		}
	}
	if _, err := c.Read(); err == nil || c.Err() != nil {
		t.Fatalf("a read with no reply due: %v (the connection must stay usable: %v)", err, c.Err())
	}
	if v, err := c.Call(ctx, "ping"); v != "PONG" || err != nil {
		t.Fatalf("after the pipeline: %v, %v", v, err)
	}
}

// An argument of a type the writer does not know is refused before anything is written, and
// the connection stays usable.
func TestAnUnsupportedArgumentIsRefused(t *testing.T) {
	c := dialT(t, &redis.Options{Addr: redistest.Shared(t).Addr})
	if err := c.Append("set", "k", struct{}{}); !errors.Is(err, wire.ErrUnsupportedArg) {
		t.Fatalf("Append(struct{}) = %v, want ErrUnsupportedArg", err)
	}
	if v, err := c.Call(context.Background(), "ping"); v != "PONG" || err != nil {
		t.Fatalf("after the refusal: %v, %v", v, err)
	}
}

// AUTH as an ACL user (HELLO under RESP3, AUTH under RESP2), a refused password classified as
// go-redis's is, a command the user may not run refused as NOPERM, and SELECT of a database.
func TestAnACLUserIsAuthenticatedAndBounded(t *testing.T) {
	srv := redistest.StartACL(t, "user hammer on >hammer-pw ~wire:* +@all -flushall")
	ctx := context.Background()
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			c := dialT(t, &redis.Options{Addr: srv.Addr, Protocol: proto, Username: "hammer", Password: "hammer-pw", DB: 3})
			if who, err := c.Call(ctx, "acl", "whoami"); who != "hammer" || err != nil {
				t.Fatalf("ACL WHOAMI = %v, %v", who, err)
			}
			if _, err := c.Call(ctx, "set", "wire:db", "three"); err != nil {
				t.Fatal(err)
			}
			admin := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: redistest.AdminUser, Password: redistest.AdminPassword, DB: 3})
			defer admin.Close()
			if v, err := admin.Get(ctx, "wire:db").Result(); v != "three" || err != nil {
				t.Fatalf("the write went to another database than 3: %q, %v", v, err)
			}
			if _, err := c.Call(ctx, "flushall"); !rediserr.IsACLRefusal(err) {
				t.Fatalf("FLUSHALL as a user without it: %v, want NOPERM", err)
			}
			_, err := wire.Dial(ctx, &redis.Options{Addr: srv.Addr, Protocol: proto, Username: "hammer", Password: "wrong"})
			if !rediserr.IsAuthFailure(err) || !strings.Contains(err.Error(), "WRONGPASS") {
				t.Fatalf("a wrong password: %v, want WRONGPASS classified as a refusal", err)
			}
			_, err = wire.Dial(ctx, &redis.Options{Addr: srv.Addr, Protocol: proto})
			if err != nil { // the default user is off: the connection opens, and the first command is refused
				t.Fatalf("no credentials: %v", err)
			}
		})
	}
}

// TLS, with the options redisconn builds from the same flags the hammer takes (--tls-ca,
// a client certificate): dialled and set up as go-redis's connection is.
func TestTLSConnectsWithTheResolvedOptions(t *testing.T) {
	srv := redistest.StartTLS(t, redistest.TLSOptions{AuthClients: "yes"})
	cfg, err := redisconn.Resolve(redisconn.Options{URL: "rediss://" + srv.Addr, TLSCA: srv.CAFile, TLSCert: srv.ClientCertFile,
		TLSKey: srv.ClientKeyFile, Timeout: 5 * time.Second, NoCheckoutProbe: true}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	c := dialT(t, cfg.Single)
	if v, err := c.Call(context.Background(), "eval", "return {1, 2}", 0); !reflect.DeepEqual(v, []any{int64(1), int64(2)}) || err != nil {
		t.Fatalf("EVAL over TLS: %v, %v", v, err)
	}
	plain := *cfg.Single
	plain.TLSConfig, plain.Dialer = nil, nil
	if c, err := wire.Dial(context.Background(), &plain); err == nil {
		_, err = c.Call(context.Background(), "ping")
		c.Close()
		if err == nil {
			t.Fatal("a plain connection to a TLS-only port was answered")
		}
	}
}

// A reply later than the read timeout is a timeout error (as rediserr classifies go-redis's),
// the connection is broken from then on (its next reply would be the late one), and a new
// connection works.
func TestATimeoutBreaksTheConnection(t *testing.T) {
	srv := redistest.Start(t, "enable-debug-command yes")
	ctx := context.Background()
	opt := &redis.Options{Addr: srv.Addr, ReadTimeout: 100 * time.Millisecond}
	c := dialT(t, opt)
	_, err := c.Call(ctx, "debug", "sleep", "0.5")
	if !rediserr.NetTimeout(err) {
		t.Fatalf("DEBUG SLEEP past the read timeout: %v, want a timeout", err)
	}
	if _, err2 := c.Call(ctx, "ping"); c.Err() == nil || err2 == nil {
		t.Fatalf("after a timeout the connection must stay broken: %v", err2)
	}
	time.Sleep(500 * time.Millisecond)
	if v, err := dialT(t, opt).Call(ctx, "ping"); v != "PONG" || err != nil {
		t.Fatalf("a new connection: %v, %v", v, err)
	}
	// A context's deadline sooner than the timeout bounds the read too.
	long := dialT(t, &redis.Options{Addr: srv.Addr, ReadTimeout: time.Minute})
	dctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := long.Call(dctx, "debug", "sleep", "0.3"); !rediserr.NetTimeout(err) {
		t.Fatalf("a context deadline of 100ms: %v, want a timeout", err)
	}
}

// A server that closes the connection (CLIENT KILL) is an error of the connection, as
// rediserr classifies go-redis's.
func TestAKilledConnectionIsAConnectionError(t *testing.T) {
	srv := redistest.Shared(t)
	ctx := context.Background()
	c := dialT(t, &redis.Options{Addr: srv.Addr, ClientName: "wire-killed"})
	if _, err := c.Call(ctx, "ping"); err != nil {
		t.Fatal(err)
	}
	if err := srv.Client(t).Do(ctx, "client", "kill", "skipme", "yes", "type", "normal").Err(); err != nil {
		t.Fatal(err)
	}
	_, err := c.Call(ctx, "ping")
	if err == nil || !rediserr.Dropped(err) {
		t.Fatalf("after CLIENT KILL: %v, want a lost connection", err)
	}
}

// Big numbers and doubles come back typed, as go-redis gives them.
func TestRESP3Scalars(t *testing.T) {
	c := dialT(t, &redis.Options{Addr: redistest.Shared(t).Addr, Protocol: 3})
	v, err := c.Call(context.Background(), "eval", "redis.setresp(3); return {big_number='-98765432109876543210'}", 0)
	want, _ := new(big.Int).SetString("-98765432109876543210", 10)
	if b, ok := v.(*big.Int); !ok || b.Cmp(want) != 0 || err != nil {
		t.Fatalf("big number: %#v, %v", v, err)
	}
}

// cannedServer accepts one connection on loopback and, once it has read a command, writes
// each of writes with a pause between them, so the reader's buffer is refilled part way
// through a reply. It stands in for Redis only where the bytes on the wire, not Redis's
// semantics, are under test.
func cannedServer(t *testing.T, writes ...string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		buf := make([]byte, 4096)
		if _, err := c.Read(buf); err != nil {
			return
		}
		for _, w := range writes {
			if _, err := c.Write([]byte(w)); err != nil {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		c.Read(buf) // until the client is done
	}()
	return ln.Addr().String()
}

// A reply's type is read before its body: when the body's bytes arrive later and the reader's
// buffer is refilled, the bytes that slide into place are the body's, never the reply's type.
// A bulk string whose body starts with '!' stays a string, an array whose element starts with
// '>' stays an array (not a push to skip), and the replies after them are each their own call's.
func TestARefilledBufferKeepsEachReplysType(t *testing.T) {
	body := "!" + strings.Repeat("a", 20000)
	arr := ">" + strings.Repeat("b", 20000)
	addr := cannedServer(t,
		fmt.Sprintf("$%d\r\n%s", len(body), body[:100]), body[100:]+"\r\n",
		fmt.Sprintf("*1\r\n$%d\r\n%s", len(arr), arr[:100]), arr[100:]+"\r\n",
		":3\r\n")
	c := dialT(t, &redis.Options{Addr: addr, Protocol: 2, ReadTimeout: 5 * time.Second})
	for i := 0; i < 3; i++ {
		if err := c.Append("get", "k"); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if v, err := c.Read(); v != body || err != nil {
		t.Fatalf("reply 1: %.20q..., %.40v; want the bulk string that starts with '!'", v, err)
	}
	if v, err := c.Read(); !reflect.DeepEqual(v, []any{arr}) || err != nil {
		t.Fatalf("reply 2: %.20v, %v; want the array of one string that starts with '>'", v, err)
	}
	if v, err := c.Read(); v != int64(3) || err != nil {
		t.Fatalf("reply 3: %v, %v; want 3 (the third call's own reply)", v, err)
	}
}
