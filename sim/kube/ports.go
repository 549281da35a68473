package kube

import (
	"fmt"
	"net"
	"strconv"
	"time"
)

// portUse is one port the control plane will listen on and who uses it.
type portUse struct {
	port      int
	component string
}

// list returns the ports in start order with the component that listens there.
func (p Ports) list() []portUse {
	return []portUse{
		{p.Etcd, "etcd"}, {p.EtcdPeer, "etcd peer"}, {p.APIServer, "kube-apiserver"},
		{p.Scheduler, "kube-scheduler"}, {p.ControllerManager, "kube-controller-manager"}, {p.Kwok, "kwok"},
	}
}

// checkPorts fails with a one-line, actionable error if a port is out of range,
// given twice, or already in use on 127.0.0.1 (a listener on 0.0.0.0 counts).
func checkPorts(p Ports) error {
	seen := map[int]string{}
	for _, u := range p.list() {
		if u.port <= 0 || u.port > 65535 {
			return fmt.Errorf("port %d (%s) is not a valid TCP port", u.port, u.component)
		}
		if other, dup := seen[u.port]; dup {
			return fmt.Errorf("port %d is configured for both %s and %s: give each component its own port", u.port, other, u.component)
		}
		seen[u.port] = u.component
	}
	for _, u := range p.list() {
		// A world stopped just before (the previous test) may still be
		// releasing its ports: give it a few seconds.
		err := portFree(u.port)
		for end := time.Now().Add(portWait); err != nil && time.Now().Before(end); err = portFree(u.port) {
			time.Sleep(200 * time.Millisecond)
		}
		if err != nil {
			by := ""
			if h := portHolder(u.port); h != "" {
				by = " by " + h
			}
			return fmt.Errorf("port %d (%s) is in use%s: is another `starter dev` (or local cluster) running? stop it, or choose other ports", u.port, u.component, by)
		}
	}
	return nil
}

// portWait is how long checkPorts waits for a busy port to be released.
var portWait = 10 * time.Second

// portFree reports whether a listener can bind 127.0.0.1:port right now.
func portFree(port int) error {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return err
	}
	return l.Close()
}
