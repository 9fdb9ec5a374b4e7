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

func TestStartSentinelFailsOverOnDemand(t *testing.T) {
	if testing.Short() {
		t.Skip("slow (Sentinels, a failover): make test runs it, -short skips it")
	}
	s := StartSentinel(t, SentinelOptions{Password: "node-pw", SentinelPassword: "sentinel-pw"})
	ctx := context.Background()
	first := s.MasterAddr(t)
	if first != s.Nodes[0].Addr {
		t.Fatalf("the Sentinels name %s, want the first node %s", first, s.Nodes[0].Addr)
	}
	// The Sentinels' password is their own: without it they refuse.
	anon := redis.NewSentinelClient(&redis.Options{Addr: s.Sentinels[0].Addr})
	defer anon.Close()
	if err := anon.Ping(ctx).Err(); err == nil || !strings.Contains(err.Error(), "NOAUTH") {
		t.Errorf("a Sentinel without its password: %v, want NOAUTH", err)
	}
	if err := s.NodeClient(t, first).Set(ctx, "before", "failover", 0).Err(); err != nil {
		t.Fatal(err)
	}
	// Replication is asynchronous: on a busy machine the failover could come before the
	// replica has the write. WAIT until it has, so a lost write is the failover's fault alone.
	if n, err := s.NodeClient(t, first).Do(ctx, "WAIT", 1, 10000).Int(); err != nil || n < 1 {
		t.Fatalf("the replica never acknowledged the write: %d %v", n, err)
	}
	promoted := s.Failover(t)
	if promoted != s.Nodes[1].Addr || s.MasterAddr(t) != promoted {
		t.Fatalf("after the failover the master is %s, want the replica %s", s.MasterAddr(t), s.Nodes[1].Addr)
	}
	if v, err := s.NodeClient(t, promoted).Get(ctx, "before").Result(); err != nil || v != "failover" {
		t.Errorf("the promoted replica lost the data: %q %v", v, err)
	}
}
