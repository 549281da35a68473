package serve

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
)

func TestStartServesUntilStop(t *testing.T) {
	base, stop, err := Start("test", "", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "path="+r.URL.Path)
	}))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(base, "http://127.0.0.1:") {
		t.Fatalf("base URL %q, want http://127.0.0.1:<port>", base)
	}
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get(base + "/x")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "path=/x" {
		t.Fatalf("body %q, want path=/x", body)
	}
	stop()
	stop() // a second stop does nothing
	if _, err := c.Get(base + "/x"); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("after stop: err %v, want connection refused", err)
	}
}

func TestListenErrorNamesTheSim(t *testing.T) {
	ln, base, err := Listen("ec2", "")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := strings.TrimPrefix(base, "http://")
	_, _, err = Listen("ec2", addr)
	if err == nil || !strings.HasPrefix(err.Error(), "ec2 sim: listen "+addr+": ") {
		t.Fatalf("err %v, want one starting %q", err, "ec2 sim: listen "+addr+": ")
	}
}
