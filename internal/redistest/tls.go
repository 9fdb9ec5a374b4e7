package redistest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/embedded"
)

// CA is a throw-away certificate authority generated for one test.
type CA struct {
	File string // the CA certificate, PEM
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

// NewCA generates a CA (ECDSA P-256, valid for a day) and writes its certificate to dir.
func NewCA(t testing.TB, dir, name string) *CA {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber:          serial(t),
		Subject:               pkix.Name{CommonName: name, Organization: []string{"limitctl tests"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	ca := &CA{File: filepath.Join(dir, name+".pem"), cert: cert, key: key}
	writePEM(t, ca.File, "CERTIFICATE", der)
	return ca
}

// Pool is a certificate pool holding only this CA.
func (ca *CA) Pool(t testing.TB) *x509.CertPool {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	return pool
}

// IssueServer signs a server certificate for 127.0.0.1 and localhost and writes the pair to
// dir as name.pem and name.key.
func (ca *CA) IssueServer(t testing.TB, dir, name string) (certFile, keyFile string) {
	t.Helper()
	return ca.issue(t, dir, name, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "localhost"},
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	})
}

// IssueClient signs a client certificate and writes the pair to dir as name.pem and name.key.
func (ca *CA) IssueClient(t testing.TB, dir, name string) (certFile, keyFile string) {
	t.Helper()
	return ca.issue(t, dir, name, &x509.Certificate{
		Subject:     pkix.Name{CommonName: name},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
}

func (ca *CA) issue(t testing.TB, dir, name string, tmpl *x509.Certificate) (string, string) {
	t.Helper()
	key := newKey(t)
	tmpl.SerialNumber = serial(t)
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := filepath.Join(dir, name+".pem"), filepath.Join(dir, name+".key")
	writePEM(t, certFile, "CERTIFICATE", der)
	writePEM(t, keyFile, "PRIVATE KEY", keyDER)
	return certFile, keyFile
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func serial(t testing.TB) *big.Int {
	t.Helper()
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func writePEM(t testing.TB, path, kind string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TLSOptions configure StartTLS.
type TLSOptions struct {
	// AuthClients is tls-auth-clients: "yes" (a client certificate is required), "optional"
	// (verified when sent) or "no" (never asked for; the default).
	AuthClients string
	// Extra are further config directives, e.g. ACL users.
	Extra []string
}

// TLSServer is a redis-server that listens only for TLS, with the files of the throw-away PKI
// it was started with.
type TLSServer struct {
	*Server
	CAFile                        string // the CA that signed the server and the client certificate
	ServerCertFile, ServerKeyFile string
	ClientCertFile, ClientKeyFile string // a client certificate signed by the CA
}

// StartTLS generates a CA, a server certificate for 127.0.0.1/localhost and a client
// certificate in t.TempDir(), and runs redis-server with only a TLS port (port 0, tls-port)
// on loopback. It stops when the test ends.
func StartTLS(t testing.TB, opts TLSOptions) *TLSServer {
	t.Helper()
	auth := opts.AuthClients
	if auth == "" {
		auth = "no"
	}
	dir := t.TempDir()
	ca := NewCA(t, dir, "ca")
	s := &TLSServer{CAFile: ca.File}
	s.ServerCertFile, s.ServerKeyFile = ca.IssueServer(t, dir, "server")
	s.ClientCertFile, s.ClientKeyFile = ca.IssueClient(t, dir, "client")
	p, err := embedded.StartProcessFunc(Binary(t), func(port int) []string {
		return append([]string{
			"port 0", "tls-port " + strconv.Itoa(port),
			"tls-cert-file " + s.ServerCertFile, "tls-key-file " + s.ServerKeyFile,
			"tls-ca-cert-file " + s.CAFile, "tls-auth-clients " + auth,
		}, opts.Extra...)
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Server = &Server{p}
	t.Cleanup(s.Stop)
	return s
}

// URL is the rediss:// address of the server.
func (s *TLSServer) URL() string { return "rediss://" + s.Addr }

// TLSConfig trusts the test CA and presents the client certificate.
func (s *TLSServer) TLSConfig(t testing.TB) *tls.Config {
	t.Helper()
	pool := x509.NewCertPool()
	if pemBytes, err := os.ReadFile(s.CAFile); err != nil || !pool.AppendCertsFromPEM(pemBytes) {
		t.Fatalf("reading the test CA %s: %v", s.CAFile, err)
	}
	cert, err := tls.LoadX509KeyPair(s.ClientCertFile, s.ClientKeyFile)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
}

// Client returns a TLS client for the server (trusting the CA, with the client certificate),
// closed at the end of the test.
func (s *TLSServer) Client(t testing.TB) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: s.Addr, TLSConfig: s.TLSConfig(t)})
	t.Cleanup(func() { c.Close() })
	return c
}
