package kube

import (
	"bytes"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

func TestPKIGeneratedAndVerifies(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	p, reason, err := ensurePKI(dir, now)
	if err != nil {
		t.Fatal(err)
	}
	if !p.regenerated || reason != "" {
		t.Fatalf("first ensurePKI: regenerated=%v reason=%q, want a silent fresh generation", p.regenerated, reason)
	}
	for _, f := range pkiFiles {
		st, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Ext(f) == ".key" && st.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v, want 0600", f, st.Mode().Perm())
		}
	}
	read := func(f string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	ca := mustCert(t, read(caCertFile))
	if !ca.IsCA || ca.PublicKeyAlgorithm != x509.ECDSA || ca.NotAfter.Before(now.Add(9*365*24*time.Hour)) {
		t.Errorf("CA: IsCA=%v alg=%v notAfter=%v", ca.IsCA, ca.PublicKeyAlgorithm, ca.NotAfter)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca)

	srv := mustCert(t, read(apiserverCertFile))
	for _, host := range []string{"127.0.0.1", "localhost", "kubernetes.default.svc"} {
		if _, err := srv.Verify(x509.VerifyOptions{Roots: roots, DNSName: host, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
			t.Errorf("apiserver cert for %s: %v", host, err)
		}
	}
	if err := srv.VerifyHostname("example.com"); err == nil {
		t.Error("apiserver cert valid for example.com")
	}

	adm := mustCert(t, read(adminCertFile))
	if _, err := adm.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("admin cert: %v", err)
	}
	if !slices.Equal(adm.Subject.Organization, []string{"system:masters"}) {
		t.Errorf("admin O=%v, want system:masters", adm.Subject.Organization)
	}
	if _, err := adm.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err == nil {
		t.Error("admin cert usable as a server cert")
	}

	k, err := parsePrivateKeyPEM(read(saKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	rk, ok := k.(*rsa.PrivateKey)
	if !ok || rk.N.BitLen() != 2048 {
		t.Fatalf("sa.key: %T, want RSA 2048", k)
	}
	blk, _ := pem.Decode(read(saPubFile))
	pub, err := x509.ParsePKIXPublicKey(blk.Bytes)
	if err != nil || !rk.PublicKey.Equal(pub) {
		t.Fatalf("sa.pub does not match sa.key: %v", err)
	}
}

func TestPKIReusedWhenValid(t *testing.T) {
	dir := t.TempDir()
	p1, _, err := ensurePKI(dir, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	p2, reason, err := ensurePKI(dir, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if p2.regenerated || reason != "" || !bytes.Equal(p1.caCert, p2.caCert) || !bytes.Equal(p1.adminKey, p2.adminKey) {
		t.Fatalf("second ensurePKI regenerated=%v reason=%q; want the same PKI reused", p2.regenerated, reason)
	}
}

func TestPKIRegeneratedWhenBrokenOrExpiring(t *testing.T) {
	for name, damage := range map[string]func(dir string){
		"missing file": func(dir string) { os.Remove(filepath.Join(dir, adminKeyFile)) },
		"garbage cert": func(dir string) { os.WriteFile(filepath.Join(dir, apiserverCertFile), []byte("junk"), 0o644) },
		"foreign key": func(dir string) {
			other := t.TempDir()
			if _, _, err := ensurePKI(other, time.Now()); err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(filepath.Join(other, saPubFile))
			os.WriteFile(filepath.Join(dir, saPubFile), b, 0o644)
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			p1, _, err := ensurePKI(dir, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			damage(dir)
			p2, _, err := ensurePKI(dir, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if !p2.regenerated || bytes.Equal(p1.caCert, p2.caCert) {
				t.Fatal("damaged PKI was not regenerated")
			}
			if _, err := loadPKI(dir, time.Now()); err != nil {
				t.Fatalf("regenerated PKI does not load: %v", err)
			}
		})
	}
	t.Run("expiring", func(t *testing.T) {
		dir := t.TempDir()
		if _, _, err := ensurePKI(dir, time.Now()); err != nil {
			t.Fatal(err)
		}
		p, reason, err := ensurePKI(dir, time.Now().Add(pkiValidity-time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if !p.regenerated || reason == "" {
			t.Fatalf("PKI about to expire was reused (reason %q)", reason)
		}
	})
}

// TestPKIMutualTLS serves with the apiserver certificate, demands client certs
// signed by the CA, and connects with RESTConfig's TLS settings: what
// kube-apiserver and client-go will do with these files.
func TestPKIMutualTLS(t *testing.T) {
	dir := t.TempDir()
	p, _, err := ensurePKI(dir, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	srvPair, err := tls.LoadX509KeyPair(p.path(apiserverCertFile), p.path(apiserverKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(p.caCert)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.TLS.PeerCertificates[0].Subject.Organization[0])
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{srvPair}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}
	srv.StartTLS()
	defer srv.Close()

	hc, err := rest.HTTPClientFor(restConfigFor(srv.URL, p)) // srv.URL is https://127.0.0.1:port
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hc.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if string(body) != "system:masters" {
		t.Fatalf("server saw client group %q", body)
	}

	// and the written kubeconfig carries the same credentials
	kc := kubeconfigYAML(srv.URL, p)
	for _, want := range []string{"server: " + srv.URL, "client-certificate-data:", "current-context: " + kubeconfigContext} {
		if !bytes.Contains(kc, []byte(want)) {
			t.Errorf("kubeconfig lacks %q", want)
		}
	}
}

func mustCert(t *testing.T, b []byte) *x509.Certificate {
	t.Helper()
	c, err := parseCertPEM(b)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
