package wire_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/rediserr"
	"github.com/limitctl/limitctl/internal/redistest"
	"github.com/limitctl/limitctl/internal/wire"
)

// oldServer answers as a password-only Redis 5 does: HELLO is an unknown command, AUTH takes the
// password alone (two arguments are a wrong number of them), and nothing runs before AUTH.
// It records every AUTH it is sent.
type oldServer struct {
	addr     string
	password string
	mu       sync.Mutex
	auths    [][]string
}

func startOldServer(t *testing.T, password string) *oldServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	s := &oldServer{addr: ln.Addr().String(), password: password}
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			go s.serve(nc)
		}
	}()
	return s
}

func (s *oldServer) serve(nc net.Conn) {
	defer nc.Close()
	rd := bufio.NewReader(nc)
	authed := false
	for {
		cmd, err := readCommand(rd)
		if err != nil {
			return
		}
		var reply string
		switch name := strings.ToLower(cmd[0]); {
		case name == "auth":
			s.mu.Lock()
			s.auths = append(s.auths, cmd)
			s.mu.Unlock()
			switch {
			case len(cmd) != 2:
				reply = "-ERR wrong number of arguments for 'auth' command"
			case cmd[1] != s.password:
				reply = "-ERR invalid password"
			default:
				authed, reply = true, "+OK"
			}
		case name == "hello":
			reply = "-ERR unknown command 'hello'"
		case !authed:
			reply = "-NOAUTH Authentication required."
		case name == "ping":
			reply = "+PONG"
		default:
			reply = "-ERR unknown command '" + name + "'"
		}
		if _, err := nc.Write([]byte(reply + "\r\n")); err != nil {
			return
		}
	}
}

func (s *oldServer) authsSent() [][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]string(nil), s.auths...)
}

// readCommand reads one command as a client sends it: an array of bulk strings.
func readCommand(rd *bufio.Reader) ([]string, error) {
	header, err := rd.ReadString('\n')
	if err != nil {
		return nil, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(header, "*")))
	if err != nil || n < 1 {
		return nil, fmt.Errorf("not a command: %q", header)
	}
	cmd := make([]string, n)
	for i := range cmd {
		line, err := rd.ReadString('\n')
		if err != nil {
			return nil, err
		}
		size, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "$")))
		if err != nil {
			return nil, fmt.Errorf("not a bulk string: %q", line)
		}
		b := make([]byte, size+2)
		if _, err := readFullFrom(rd, b); err != nil {
			return nil, err
		}
		cmd[i] = string(b[:size])
	}
	return cmd, nil
}

func readFullFrom(rd *bufio.Reader, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := rd.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// A server that refuses HELLO is sent AUTH as go-redis sends it: the password alone when no
// user is named (a password-only server older than 6 knows no other form), the user and the
// password when one is.
func TestAServerWithoutHELLOIsSentAUTHAsGoRedisSendsIt(t *testing.T) {
	ctx := context.Background()
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			old := startOldServer(t, "old-pw")
			c := dialT(t, &redis.Options{Addr: old.addr, Protocol: proto, Password: "old-pw"})
			if v, err := c.Call(ctx, "ping"); v != "PONG" || err != nil {
				t.Fatalf("PING after AUTH: %v, %v", v, err)
			}
			if c.RESP3() {
				t.Fatal("a server that refused HELLO is spoken to in RESP3")
			}
			if got, want := old.authsSent(), [][]string{{"auth", "old-pw"}}; !reflect.DeepEqual(got, want) {
				t.Fatalf("AUTH sent: %q, want %q", got, want)
			}

			named := startOldServer(t, "old-pw")
			_, err := wire.Dial(ctx, &redis.Options{Addr: named.addr, Protocol: proto, Username: "ops", Password: "old-pw"})
			if got, want := named.authsSent(), [][]string{{"auth", "ops", "old-pw"}}; !reflect.DeepEqual(got, want) {
				t.Fatalf("AUTH sent with a user: %q, want %q", got, want)
			}
			if err == nil || !strings.Contains(err.Error(), "wrong number of arguments") {
				t.Fatalf("a user name on a server without ACLs: %v, want its refusal", err)
			}
		})
	}
}

// On a real server with requirepass and HELLO renamed away, the password alone connects in
// either protocol (falling back to RESP2), and a wrong one is refused as rediserr classifies it.
func TestAPasswordOnlyServerWithoutHELLO(t *testing.T) {
	srv := redistest.StartPasswordOnly(t, "only-pw")
	ctx := context.Background()
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			c := dialT(t, &redis.Options{Addr: srv.Addr, Protocol: proto, Password: "only-pw", DB: 2, ClientName: "wire-old"})
			if c.RESP3() {
				t.Fatal("HELLO is renamed away, yet the connection speaks RESP3")
			}
			if v, err := c.Call(ctx, "client", "getname"); v != "wire-old" || err != nil {
				t.Fatalf("CLIENT GETNAME = %v, %v", v, err)
			}
			_, err := wire.Dial(ctx, &redis.Options{Addr: srv.Addr, Protocol: proto, Password: "wrong"})
			if !rediserr.IsAuthFailure(err) {
				t.Fatalf("a wrong password: %v, want an authentication failure", err)
			}
			_, err = wire.Dial(ctx, &redis.Options{Addr: srv.Addr, Protocol: proto})
			if err != nil { // no password: the connection opens, and the first command is refused
				t.Fatalf("no password: %v", err)
			}
		})
	}
}
