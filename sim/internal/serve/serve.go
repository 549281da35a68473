// Package serve runs a sim endpoint's http.Handler on a loopback listener.
package serve

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// Listen listens on addr (default "127.0.0.1:0", an ephemeral port) and
// returns the listener with its base URL, e.g. "http://127.0.0.1:41234".
// name prefixes the error ("ec2" -> "ec2 sim: listen ...").
func Listen(name, addr string) (ln net.Listener, baseURL string, err error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err = net.Listen("tcp", addr)
	if err != nil {
		return nil, "", fmt.Errorf("%s sim: listen %s: %w", name, addr, err)
	}
	return ln, "http://" + ln.Addr().String(), nil
}

// Serve serves h on ln in the background. stop shuts the server down,
// giving requests in flight up to 2 s; calling it again does nothing.
func Serve(ln net.Listener, h http.Handler) (stop func()) {
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	return sync.OnceFunc(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = hs.Shutdown(ctx)
	})
}

// Start is Listen then Serve: h served on addr, its base URL and stop.
func Start(name, addr string, h http.Handler) (baseURL string, stop func(), err error) {
	ln, baseURL, err := Listen(name, addr)
	if err != nil {
		return "", nil, err
	}
	return baseURL, Serve(ln, h), nil
}

// The region and account a local endpoint serves when its options name
// none.
const (
	DefaultRegion  = "us-east-1"
	DefaultAccount = "123456789012"
)
