package temporal

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// pki writes a CA, a server certificate for 127.0.0.1 and a client
// certificate into dir; it returns the paths and the CA pool.
type pki struct {
	caFile, serverCert, serverKey, clientCert, clientKey string
	pool                                                 *x509.CertPool
}

func newPKI(t *testing.T) pki {
	t.Helper()
	dir := t.TempDir()
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test ca"}, IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	caDER, _ := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	ca, _ := x509.ParseCertificate(caDER)
	leaf := func(name string, usage x509.ExtKeyUsage, serial int64) (string, string) {
		k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"temporal.test"},
			ExtKeyUsage: []x509.ExtKeyUsage{usage}, KeyUsage: x509.KeyUsageDigitalSignature,
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
		der, _ := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		kd, _ := x509.MarshalECPrivateKey(k)
		return write(name+".crt", "CERTIFICATE", der), write(name+".key", "EC PRIVATE KEY", kd)
	}
	p := pki{caFile: write("ca.crt", "CERTIFICATE", caDER), pool: x509.NewCertPool()}
	p.pool.AddCert(ca)
	p.serverCert, p.serverKey = leaf("server", x509.ExtKeyUsageServerAuth, 2)
	p.clientCert, p.clientKey = leaf("client", x509.ExtKeyUsageClientAuth, 3)
	return p
}

func TestPlaintextByDefault(t *testing.T) {
	conn, err := Load(Config{HostPort: "127.0.0.1:7233"})
	if err != nil {
		t.Fatal(err)
	}
	if !conn.Plaintext() || conn.Encrypted() || conn.Options.Credentials != nil || conn.Options.DataConverter != nil {
		t.Errorf("zero config: %s", conn.Describe())
	}
	if conn.Options.Namespace != "default" {
		t.Errorf("namespace %q", conn.Options.Namespace)
	}
}

func TestHalfConfiguredTLSIsRefused(t *testing.T) {
	p := newPKI(t)
	missing := filepath.Join(t.TempDir(), "missing.pem")
	garbage := filepath.Join(t.TempDir(), "garbage.pem")
	_ = os.WriteFile(garbage, []byte("not pem"), 0o600)
	for name, tc := range map[string]struct {
		cfg  Config
		want string
	}{
		"cert without key":        {Config{TLSCertFile: p.clientCert}, "no key"},
		"key without cert":        {Config{TLSKeyFile: p.clientKey}, "no certificate"},
		"server name alone":       {Config{TLSServerName: "temporal.test"}, "TLS is off"},
		"unreadable cert":         {Config{TLSCertFile: missing, TLSKeyFile: p.clientKey}, "missing.pem"},
		"unreadable key":          {Config{TLSCertFile: p.clientCert, TLSKeyFile: missing}, "missing.pem"},
		"key of another cert":     {Config{TLSCertFile: p.clientCert, TLSKeyFile: p.serverKey}, "private key does not match"},
		"unreadable CA":           {Config{TLSCAFile: missing}, "missing.pem"},
		"CA without certificates": {Config{TLSCAFile: garbage}, "no PEM certificate"},
		"two API keys":            {Config{APIKey: "a", APIKeyFile: garbage}, "keep one"},
		"two keyrings":            {Config{CodecKeyFile: missing, CodecKeys: "{}"}, "keep one"},
		"unreadable keyring":      {Config{CodecKeyFile: missing}, "missing.pem"},
	} {
		_, err := Load(tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to mention %q", name, err, tc.want)
		}
	}
}

func TestMutualTLSHandshake(t *testing.T) {
	p := newPKI(t)
	conn, err := Load(Config{HostPort: "127.0.0.1:7233", TLSCertFile: p.clientCert, TLSKeyFile: p.clientKey, TLSCAFile: p.caFile})
	if err != nil {
		t.Fatal(err)
	}
	if conn.Describe() != "mTLS, payloads in clear" {
		t.Errorf("describe: %s", conn.Describe())
	}
	srvPair, err := tls.LoadX509KeyPair(p.serverCert, p.serverKey)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{srvPair}, ClientCAs: p.pool, ClientAuth: tls.RequireAndVerifyClientCert})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.(*tls.Conn).Handshake()
			_, _ = c.Write([]byte("ok"))
			c.Close()
		}
	}()
	dial := func(cfg *tls.Config) error {
		c, err := tls.Dial("tcp", ln.Addr().String(), cfg)
		if err != nil {
			return err
		}
		defer c.Close()
		_, err = io.ReadAll(c)
		return err
	}
	cfg := conn.Options.ConnectionOptions.TLS.Clone()
	if err := dial(cfg); err != nil {
		t.Fatalf("mTLS handshake with the loaded config: %v", err)
	}
	// Without the client certificate the server refuses.
	noCert := cfg.Clone()
	noCert.Certificates = nil
	if err := dial(noCert); err == nil {
		t.Error("handshake without a client certificate succeeded")
	}
	// With the system roots instead of the CA the server is not trusted.
	sys, err := Load(Config{HostPort: ln.Addr().String(), TLSCertFile: p.clientCert, TLSKeyFile: p.clientKey})
	if err != nil {
		t.Fatal(err)
	}
	if err := dial(sys.Options.ConnectionOptions.TLS.Clone()); err == nil {
		t.Error("server certificate from an unknown CA accepted")
	}
}

func TestAPIKeyImpliesTLS(t *testing.T) {
	f := filepath.Join(t.TempDir(), "key")
	_ = os.WriteFile(f, []byte("secret-key\n"), 0o600)
	for _, c := range []Config{{APIKey: "secret-key"}, {APIKeyFile: f}} {
		conn, err := Load(c)
		if err != nil {
			t.Fatal(err)
		}
		if conn.Plaintext() || conn.Options.Credentials == nil {
			t.Errorf("%+v: %s", c, conn.Describe())
		}
	}
	// A CA alone: TLS, no client certificate.
	p := newPKI(t)
	conn, err := Load(Config{TLSCAFile: p.caFile, TLSServerName: "temporal.test"})
	if err != nil || conn.Plaintext() || len(conn.Options.ConnectionOptions.TLS.Certificates) != 0 ||
		conn.Options.ConnectionOptions.TLS.ServerName != "temporal.test" {
		t.Errorf("CA alone: %v", err)
	}
}

func TestEncryptionAndEnv(t *testing.T) {
	keys := `{"activeKeyId":"k1","keys":{"k1":"` + base64.StdEncoding.EncodeToString(make([]byte, 32)) + `"}}`
	env := map[string]string{EnvCodecKeys: keys, EnvTLSServerName: "x"}
	c := FromEnv(func(k string) string { return env[k] })
	c.TLS = true
	conn, err := Load(c)
	if err != nil {
		t.Fatal(err)
	}
	if !conn.Encrypted() || conn.Options.DataConverter == nil || conn.Options.FailureConverter == nil {
		t.Errorf("codec not set: %s", conn.Describe())
	}
	if conn.Describe() != "TLS, payloads encrypted (active key k1)" {
		t.Errorf("describe: %s", conn.Describe())
	}
	if !IsLoopback("127.0.0.1:7233") || !IsLoopback("localhost:7233") || !IsLoopback("[::1]:7233") || IsLoopback("temporal:7233") {
		t.Error("IsLoopback")
	}
}
