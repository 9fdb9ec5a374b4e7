package redistest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

func TestStartTLSServesOnlyTLSAndVerifiesClients(t *testing.T) {
	s := StartTLS(t, TLSOptions{AuthClients: "yes"})
	ctx := context.Background()
	if err := s.Client(t).Ping(ctx).Err(); err != nil {
		t.Fatalf("TLS client with the CA and a client certificate: %v", err)
	}

	plain := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1})
	defer plain.Close()
	if err := plain.Ping(ctx).Err(); err == nil {
		t.Error("a plain-text client got an answer from the TLS port")
	}

	noCert := s.TLSConfig(t)
	noCert.Certificates = nil
	anon := redis.NewClient(&redis.Options{Addr: s.Addr, TLSConfig: noCert, MaxRetries: -1})
	defer anon.Close()
	if err := anon.Ping(ctx).Err(); err == nil {
		t.Error("tls-auth-clients yes let a client without a certificate in")
	}

	// A CA that did not sign the server's certificate, and the system roots, are both refused.
	other := NewCA(t, t.TempDir(), "other")
	for name, roots := range map[string]*x509.CertPool{"another CA": other.Pool(t), "the system roots": nil} {
		c := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1,
			TLSConfig: &tls.Config{RootCAs: roots, Certificates: s.TLSConfig(t).Certificates}})
		err := c.Ping(ctx).Err()
		c.Close()
		if err == nil || !strings.Contains(err.Error(), "certificate") {
			t.Errorf("a client trusting %s: %v, want a certificate error", name, err)
		}
	}
}

func TestStartTLSOptionalClientCertificates(t *testing.T) {
	s := StartTLS(t, TLSOptions{AuthClients: "optional"})
	conf := s.TLSConfig(t)
	conf.Certificates = nil
	c := redis.NewClient(&redis.Options{Addr: s.Addr, TLSConfig: conf})
	defer c.Close()
	if err := c.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("tls-auth-clients optional refused a client without a certificate: %v", err)
	}
}

func TestStartACLTurnsTheDefaultUserOff(t *testing.T) {
	s := StartACL(t, "user reader on >reader-pw ~app:* +get")
	ctx := context.Background()
	if err := s.Client(t).Ping(ctx).Err(); err == nil || !strings.Contains(err.Error(), "NOAUTH") {
		t.Errorf("unauthenticated PING: %v, want NOAUTH", err)
	}
	reader := s.ClientAs(t, "reader", "reader-pw")
	if err := reader.Get(ctx, "app:x").Err(); err != redis.Nil {
		t.Errorf("reader GET app:x: %v, want nil reply", err)
	}
	if err := reader.Set(ctx, "app:x", 1, 0).Err(); err == nil || !strings.Contains(err.Error(), "NOPERM") {
		t.Errorf("reader SET: %v, want NOPERM", err)
	}
	s.SetUser(t, "reader +set")
	if err := reader.Set(ctx, "app:x", 1, 0).Err(); err != nil {
		t.Errorf("reader SET after SETUSER +set: %v", err)
	}
}
