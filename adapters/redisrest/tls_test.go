package redisrest_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolcap/toolcap/adapters/redisrest"
	"github.com/toolcap/toolcap/internal/rest"
)

// Issue 39, item 11: a rediss:// URL that names a port of plain Redis
// says so, where it said "context deadline exceeded" after the dial's 2 s.
func TestRedissToAPlainPort(t *testing.T) {
	plain := startServer(t)
	locked := startServer(t, "--requirepass", "hunter2")
	const said = "speaks plain Redis, not TLS: use redis:// for this port"
	for _, tc := range []struct {
		name string
		addr string
		want string // what the error says
	}{
		{"plain Redis", plain.Addr(), said},
		{"plain Redis that wants a password", locked.Addr(), said},
		{"nothing listening", net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t))), "connection refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := redisrest.Open("rediss://"+tc.addr+"/0", rest.Config{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			for _, op := range []struct {
				name string
				run  func(context.Context) error
			}{
				{"Open", func(ctx context.Context) error {
					_, err := s.Open(ctx, "scope", rest.NewRef())
					return err
				}},
				{"Commit", func(ctx context.Context) error {
					e, err := s.Create(ctx, "scope")
					if err != nil {
						return err
					}
					if _, err := e.Write([]byte("kept")); err != nil {
						return err
					}
					_, err = e.Commit()
					return err
				}},
			} {
				start := time.Now()
				err := op.run(context.Background())
				took := time.Since(start)
				if err == nil || errors.Is(err, rest.ErrUnknown) || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("%s = %v; want an error that says %q", op.name, err, tc.want)
				}
				if took > redisrest.DefaultTimeout {
					t.Errorf("%s took %v, over the operation's bound of %v", op.name, took, redisrest.DefaultTimeout)
				}
			}
		})
	}
}

// A rediss:// URL of a port that does serve TLS works as before.
func TestRedissToATLSPort(t *testing.T) {
	dir := t.TempDir()
	cert, key := selfSigned(t, dir)
	tlsPort := freePort(t)
	startServer(t, "--tls-port", strconv.Itoa(tlsPort), "--tls-cert-file", cert, "--tls-key-file", key,
		"--tls-ca-cert-file", cert, "--tls-auth-clients", "no")
	s, err := redisrest.Open("rediss://"+net.JoinHostPort("127.0.0.1", strconv.Itoa(tlsPort))+"/0?skip_verify=true", rest.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	info := put(t, s, "scope", []byte("kept over TLS"))
	if !readable(t, s, "scope", info.Ref) {
		t.Errorf("the entry written over TLS is not readable")
	}
}

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key
// to dir, and returns their paths.
func selfSigned(t *testing.T, dir string) (cert, key string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return cert, key
}
