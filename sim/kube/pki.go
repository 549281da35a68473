package kube

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// PKI file names inside StateDir/pki.
const (
	caCertFile        = "ca.crt"
	caKeyFile         = "ca.key"
	apiserverCertFile = "apiserver.crt"
	apiserverKeyFile  = "apiserver.key"
	adminCertFile     = "admin.crt"
	adminKeyFile      = "admin.key"
	saKeyFile         = "sa.key"
	saPubFile         = "sa.pub"
)

var pkiFiles = []string{caCertFile, caKeyFile, apiserverCertFile, apiserverKeyFile, adminCertFile, adminKeyFile, saKeyFile, saPubFile}

const (
	pkiValidity   = 10 * 365 * 24 * time.Hour
	pkiMinLeft    = 30 * 24 * time.Hour // regenerate when a cert expires sooner than this
	adminUser     = "joinery-admin"
	adminGroup    = "system:masters"
	apiserverName = "kube-apiserver"
)

// apiserverSANs are the names the serving certificate is valid for: loopback,
// plus the in-cluster service names and the first service IP (10.0.0.1 of
// --service-cluster-ip-range=10.0.0.0/24), so in-cluster clients work too.
var (
	apiserverDNSNames = []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}
	apiserverIPs      = []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1"), net.ParseIP("10.0.0.1")}
)

// pki is the control plane's key material, as PEM, with the paths it lives at.
type pki struct {
	dir         string
	caCert      []byte // PEM
	adminCert   []byte // PEM
	adminKey    []byte // PEM, PKCS#8
	regenerated bool   // true when ensurePKI created new material
}

func (p *pki) path(name string) string { return filepath.Join(p.dir, name) }

// ensurePKI loads the PKI from dir if it is complete and valid, and otherwise
// generates a fresh one with crypto/x509 (a new CA invalidates the old certs,
// so everything is regenerated together):
//   - CA: ECDSA P-256, self-signed, 10 years;
//   - apiserver serving cert: ECDSA P-256, serverAuth, for 127.0.0.1, ::1,
//     localhost and the kubernetes.default service names;
//   - admin client cert: ECDSA P-256, clientAuth, CN=joinery-admin, O=system:masters;
//   - service-account key pair: RSA 2048 (sa.key PKCS#8, sa.pub PKIX).
//
// reason explains a regeneration ("" when reused or created in an empty dir).
func ensurePKI(dir string, now time.Time) (p *pki, reason string, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, "", err
	}
	p, err = loadPKI(dir, now)
	if err == nil {
		return p, "", nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		reason = err.Error()
	}
	p, err = generatePKI(dir, now)
	return p, reason, err
}

// loadPKI reads and verifies an existing PKI; os.ErrNotExist when a file is missing.
func loadPKI(dir string, now time.Time) (*pki, error) {
	b := map[string][]byte{}
	for _, f := range pkiFiles {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			return nil, err
		}
		b[f] = data
	}
	ca, err := parseCertPEM(b[caCertFile])
	if err != nil {
		return nil, fmt.Errorf("pki: %s: %w", caCertFile, err)
	}
	if _, err := tls.X509KeyPair(b[caCertFile], b[caKeyFile]); err != nil {
		return nil, fmt.Errorf("pki: CA key does not match: %w", err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	check := func(certFile, keyFile string, usage x509.ExtKeyUsage, host string) (*x509.Certificate, error) {
		if _, err := tls.X509KeyPair(b[certFile], b[keyFile]); err != nil {
			return nil, fmt.Errorf("pki: %s: %w", certFile, err)
		}
		c, err := parseCertPEM(b[certFile])
		if err != nil {
			return nil, fmt.Errorf("pki: %s: %w", certFile, err)
		}
		if _, err := c.Verify(x509.VerifyOptions{Roots: roots, DNSName: host, CurrentTime: now.Add(pkiMinLeft), KeyUsages: []x509.ExtKeyUsage{usage}}); err != nil {
			return nil, fmt.Errorf("pki: %s: %w", certFile, err)
		}
		return c, nil
	}
	if _, err := check(apiserverCertFile, apiserverKeyFile, x509.ExtKeyUsageServerAuth, "127.0.0.1"); err != nil {
		return nil, err
	}
	admin, err := check(adminCertFile, adminKeyFile, x509.ExtKeyUsageClientAuth, "")
	if err != nil {
		return nil, err
	}
	if !slices.Contains(admin.Subject.Organization, adminGroup) {
		return nil, fmt.Errorf("pki: %s is not in group %s", adminCertFile, adminGroup)
	}
	if err := checkSAKeys(b[saKeyFile], b[saPubFile]); err != nil {
		return nil, err
	}
	return &pki{dir: dir, caCert: b[caCertFile], adminCert: b[adminCertFile], adminKey: b[adminKeyFile]}, nil
}

func checkSAKeys(keyPEM, pubPEM []byte) error {
	k, err := parsePrivateKeyPEM(keyPEM)
	if err != nil {
		return fmt.Errorf("pki: %s: %w", saKeyFile, err)
	}
	rk, ok := k.(*rsa.PrivateKey)
	if !ok {
		return fmt.Errorf("pki: %s is not an RSA key", saKeyFile)
	}
	blk, _ := pem.Decode(pubPEM)
	if blk == nil {
		return fmt.Errorf("pki: %s: no PEM block", saPubFile)
	}
	pub, err := x509.ParsePKIXPublicKey(blk.Bytes)
	if err != nil {
		return fmt.Errorf("pki: %s: %w", saPubFile, err)
	}
	if !rk.PublicKey.Equal(pub) {
		return fmt.Errorf("pki: %s does not match %s", saPubFile, saKeyFile)
	}
	return nil
}

// generatePKI creates all key material and writes it atomically into dir.
func generatePKI(dir string, now time.Time) (*pki, error) {
	notBefore := now.Add(-time.Hour) // tolerate small clock skew
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: "joinery-local-ca", Organization: []string{"joinery"}},
		NotBefore:             notBefore,
		NotAfter:              now.Add(pkiValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, caCert, err := signCert(caTmpl, caTmpl, caKey.Public(), caKey)
	if err != nil {
		return nil, err
	}
	leaf := func(tmpl *x509.Certificate) (certPEM, keyPEM []byte, err error) {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, nil, err
		}
		tmpl.NotBefore, tmpl.NotAfter = notBefore, now.Add(pkiValidity)
		tmpl.KeyUsage = x509.KeyUsageDigitalSignature
		tmpl.BasicConstraintsValid = true
		der, _, err := signCert(tmpl, caCert, k.Public(), caKey)
		if err != nil {
			return nil, nil, err
		}
		kp, err := privateKeyPEM(k)
		return certPEMOf(der), kp, err
	}
	srvCert, srvKey, err := leaf(&x509.Certificate{
		Subject:     pkix.Name{CommonName: apiserverName},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    apiserverDNSNames,
		IPAddresses: apiserverIPs,
	})
	if err != nil {
		return nil, err
	}
	admCert, admKey, err := leaf(&x509.Certificate{
		Subject:     pkix.Name{CommonName: adminUser, Organization: []string{adminGroup}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		return nil, err
	}
	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	saKeyPEM, err := privateKeyPEM(saKey)
	if err != nil {
		return nil, err
	}
	saPubDER, err := x509.MarshalPKIXPublicKey(saKey.Public())
	if err != nil {
		return nil, err
	}
	caKeyPEM, err := privateKeyPEM(caKey)
	if err != nil {
		return nil, err
	}
	caPEM := certPEMOf(caDER)
	files := []struct {
		name string
		data []byte
		mode os.FileMode
	}{
		{caCertFile, caPEM, 0o644}, {caKeyFile, caKeyPEM, 0o600},
		{apiserverCertFile, srvCert, 0o644}, {apiserverKeyFile, srvKey, 0o600},
		{adminCertFile, admCert, 0o644}, {adminKeyFile, admKey, 0o600},
		{saKeyFile, saKeyPEM, 0o600}, {saPubFile, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: saPubDER}), 0o644},
	}
	for _, f := range files {
		if err := writeFileAtomic(filepath.Join(dir, f.name), f.data, f.mode); err != nil {
			return nil, err
		}
	}
	return &pki{dir: dir, caCert: caPEM, adminCert: admCert, adminKey: admKey, regenerated: true}, nil
}

// signCert issues a certificate from tmpl with a random 128-bit serial.
func signCert(tmpl, parent *x509.Certificate, pub crypto.PublicKey, signer crypto.Signer) ([]byte, *x509.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, nil, err
	}
	tmpl.SerialNumber = serial
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, signer)
	if err != nil {
		return nil, nil, err
	}
	c, err := x509.ParseCertificate(der)
	return der, c, err
}

func certPEMOf(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func privateKeyPEM(k crypto.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

func parseCertPEM(b []byte) (*x509.Certificate, error) {
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != "CERTIFICATE" {
		return nil, errors.New("no CERTIFICATE PEM block")
	}
	return x509.ParseCertificate(blk.Bytes)
}

func parsePrivateKeyPEM(b []byte) (crypto.PrivateKey, error) {
	blk, _ := pem.Decode(b)
	if blk == nil {
		return nil, errors.New("no PEM block")
	}
	switch blk.Type {
	case "RSA PRIVATE KEY":
		return x509.ParsePKCS1PrivateKey(blk.Bytes)
	case "EC PRIVATE KEY":
		return x509.ParseECPrivateKey(blk.Bytes)
	default:
		return x509.ParsePKCS8PrivateKey(blk.Bytes)
	}
}

// writeFileAtomic writes data to a temporary file and renames it over path.
func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
