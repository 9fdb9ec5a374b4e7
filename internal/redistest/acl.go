package redistest

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// The administrator of a StartACL server; the default user is off.
const (
	AdminUser     = "admin"
	AdminPassword = "admin-pw"
)

// StartACL runs a redis-server whose users come from config directives: the default user is
// off (an unauthenticated client can do nothing) and AdminUser may do anything. Extra
// directives may add users ("user ops on >pw ~app:* +get").
func StartACL(t testing.TB, extra ...string) *Server {
	t.Helper()
	return Start(t, append([]string{"user default off", "user " + AdminUser + " on >" + AdminPassword + " ~* &* +@all"}, extra...)...)
}

// ClientAs returns a client authenticated as user, closed at the end of the test.
func (s *Server) ClientAs(t testing.TB, user, password string) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: s.Addr, Username: user, Password: password})
	t.Cleanup(func() { c.Close() })
	return c
}

// SetUser runs ACL SETUSER as the administrator, e.g. SetUser(t, "ops reset on >pw ~* +get").
func (s *Server) SetUser(t testing.TB, rule string) {
	t.Helper()
	args := []any{"ACL", "SETUSER"}
	for _, f := range strings.Fields(rule) {
		args = append(args, f)
	}
	if err := s.ClientAs(t, AdminUser, AdminPassword).Do(context.Background(), args...).Err(); err != nil {
		t.Fatalf("ACL SETUSER %s: %v", rule, err)
	}
}

// StartPasswordOnly runs a redis-server as a password-only server older than 6 looks to a
// client: requirepass set and HELLO renamed away, so a client falls back to RESP2 and AUTH.
func StartPasswordOnly(t testing.TB, password string, extra ...string) *Server {
	t.Helper()
	return Start(t, append([]string{"requirepass " + password, `rename-command HELLO ""`}, extra...)...)
}
