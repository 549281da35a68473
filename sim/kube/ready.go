package kube

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"time"
)

// probe is one readiness check of a component: nil means ready.
type probe func(ctx context.Context) error

// newHTTPClient returns a client for loopback probes. tlsConf may be nil.
func newHTTPClient(tlsConf *tls.Config) *http.Client {
	return &http.Client{
		Timeout: 3 * time.Second,
		Transport: &http.Transport{
			Proxy:             nil, // loopback only, never through a proxy
			TLSClientConfig:   tlsConf,
			DisableKeepAlives: true,
		},
	}
}

// adminTLS is a client TLS config that trusts the cluster CA and presents the
// admin certificate.
func adminTLS(p *pki) (*tls.Config, error) {
	cert, err := tls.X509KeyPair(p.adminCert, p.adminKey)
	if err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(p.caCert)
	return &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// insecureTLS is for the scheduler's and controller-manager's /healthz, which
// are served with self-signed certificates they create in their --cert-dir.
func insecureTLS() *tls.Config {
	return &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12} //nolint:gosec // loopback health probe only
}

// httpProbe GETs url and succeeds on HTTP 200 with a body containing want.
func httpProbe(c *http.Client, url, want string) probe {
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := c.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte(want)) {
			return fmt.Errorf("GET %s: %s: %s", url, resp.Status, bytes.TrimSpace(body))
		}
		return nil
	}
}

// allProbes succeeds when every probe does, in order.
func allProbes(ps ...probe) probe {
	return func(ctx context.Context) error {
		for _, p := range ps {
			if err := p(ctx); err != nil {
				return err
			}
		}
		return nil
	}
}

// waitReady polls pr every interval until it succeeds, the process exits, ctx
// ends or timeout passes; failures carry the tail of the process's log.
func waitReady(ctx context.Context, p *process, pr probe, timeout, interval time.Duration) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	var last error
	for {
		pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		last = pr(pctx)
		cancel()
		if last == nil {
			return nil
		}
		select {
		case <-p.done:
			return p.failure("%s exited during startup (%v)", p.name, p.exitErr)
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", p.name, ctx.Err())
		case <-deadline.C:
			return p.failure("%s not ready after %s (last probe: %v)", p.name, timeout, last)
		case <-tick.C:
		}
	}
}
