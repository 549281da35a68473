package kube

import (
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/joinery/joinery/sim/internal/freeport"
)

func testPorts(t *testing.T) Ports {
	p, err := freeport.Pick(6)
	if err != nil {
		t.Fatal(err)
	}
	return Ports{Etcd: p[0], EtcdPeer: p[1], APIServer: p[2], Scheduler: p[3], ControllerManager: p[4], Kwok: p[5]}
}

func TestCheckPortsFree(t *testing.T) {
	if err := checkPorts(testPorts(t)); err != nil {
		t.Fatal(err)
	}
}

func TestCheckPortsInUse(t *testing.T) {
	defer func(w time.Duration) { portWait = w }(portWait)
	portWait = 0
	ports := testPorts(t)
	for _, host := range []string{"127.0.0.1", "0.0.0.0"} {
		l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(ports.APIServer)))
		if err != nil {
			t.Fatal(err)
		}
		err = checkPorts(ports)
		l.Close()
		if err == nil {
			t.Fatalf("listener on %s:%d not detected", host, ports.APIServer)
		}
		msg := err.Error()
		want := "port " + strconv.Itoa(ports.APIServer) + " (kube-apiserver) is in use"
		if !strings.HasPrefix(msg, want) || !strings.Contains(msg, "starter dev") || strings.Contains(msg, "\n") {
			t.Errorf("error %q: want one line starting %q and naming `starter dev`", msg, want)
		}
		if runtime.GOOS == "linux" && !strings.Contains(msg, "pid "+strconv.Itoa(os.Getpid())) {
			t.Errorf("error %q does not name the holder, pid %d", msg, os.Getpid())
		}
	}
}

func TestCheckPortsInvalid(t *testing.T) {
	p := testPorts(t)
	p.Kwok = p.Etcd
	if err := checkPorts(p); err == nil || !strings.Contains(err.Error(), "both etcd and kwok") {
		t.Errorf("duplicate port: %v", err)
	}
	p = testPorts(t)
	p.Scheduler = 70000
	if err := checkPorts(p); err == nil || !strings.Contains(err.Error(), "kube-scheduler") {
		t.Errorf("out-of-range port: %v", err)
	}
}

func TestOptionsDefaults(t *testing.T) {
	o, err := Options{StateDir: "rel", Ports: Ports{APIServer: 1}}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if !filepath.IsAbs(o.StateDir) || o.Ports.APIServer != 1 || o.Ports.Etcd != 23790 || o.Ports.Kwok != 16480 || o.Log == nil || o.Progress == nil {
		t.Fatalf("defaults: %+v", o)
	}
	o, err = Options{}.withDefaults() // inside the repo: <root>/.joinery/kube
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(o.StateDir, filepath.Join(".joinery", "kube")) || !fileExists(filepath.Join(filepath.Dir(filepath.Dir(o.StateDir)), buildScript)) {
		t.Fatalf("default state dir %s is not <repo>/.joinery/kube", o.StateDir)
	}
}
