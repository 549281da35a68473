package kube

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// component is one control-plane process: how to run it and how to tell it is ready.
type component struct {
	name     string // also the binary's name in BinDir
	port     int    // the port it is probed on (for the log)
	args     []string
	ready    probe
	interval time.Duration // probe interval
}

func (c *Cluster) etcd(dataDir string) component {
	o := c.opts.Ports
	client := fmt.Sprintf("http://127.0.0.1:%d", o.Etcd)
	peer := fmt.Sprintf("http://127.0.0.1:%d", o.EtcdPeer)
	return component{
		name: "etcd",
		port: o.Etcd,
		args: []string{
			"--name=joinery",
			"--data-dir=" + dataDir,
			"--listen-client-urls=" + client, "--advertise-client-urls=" + client,
			"--listen-peer-urls=" + peer, "--initial-advertise-peer-urls=" + peer,
			"--initial-cluster=joinery=" + peer,
			"--unsafe-no-fsync", // local world: speed over durability against power loss
			"--log-level=warn",
		},
		ready:    httpProbe(newHTTPClient(nil), client+"/health", `"health":"true"`),
		interval: 50 * time.Millisecond,
	}
}

func (c *Cluster) apiserver() component {
	o := c.opts.Ports
	pk := c.pki.path
	tlsConf, err := adminTLS(c.pki)
	if err != nil { // cannot happen: ensurePKI verified the pair
		panic(err)
	}
	hc := newHTTPClient(tlsConf)
	return component{
		name: "kube-apiserver",
		port: o.APIServer,
		args: []string{
			fmt.Sprintf("--etcd-servers=http://127.0.0.1:%d", o.Etcd),
			"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
			fmt.Sprintf("--secure-port=%d", o.APIServer),
			"--tls-cert-file=" + pk(apiserverCertFile), "--tls-private-key-file=" + pk(apiserverKeyFile),
			"--client-ca-file=" + pk(caCertFile),
			"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
			"--service-account-key-file=" + pk(saPubFile), "--service-account-signing-key-file=" + pk(saKeyFile),
			"--service-cluster-ip-range=" + ServiceCIDR,
			"--authorization-mode=RBAC",
			// No ServiceAccount admission (pods need no "default" SA token) and no
			// TaintNodesByCondition (new Nodes would carry node.kubernetes.io/not-ready
			// until a node-lifecycle controller removed it).
			"--disable-admission-plugins=ServiceAccount,TaintNodesByCondition",
			"--allow-privileged=true",
			"--endpoint-reconciler-type=none", // the advertise address is loopback
			"--cert-dir=" + filepath.Join(c.opts.StateDir, "apiserver-certs"),
		},
		ready: allProbes(
			httpProbe(hc, c.server+"/readyz", "ok"),
			httpProbe(hc, c.server+"/api/v1/namespaces/default", `"name":"default"`),
		),
		interval: 100 * time.Millisecond,
	}
}

// clientArgs are the flags the scheduler and the controller-manager share.
func (c *Cluster) clientArgs(port int, certDir string) []string {
	return []string{
		"--kubeconfig=" + c.kubeconfig,
		"--authentication-kubeconfig=" + c.kubeconfig, "--authorization-kubeconfig=" + c.kubeconfig,
		"--authentication-skip-lookup", // no requestheader CA to look up
		// Metrics and profiles readable without credentials (loopback
		// only), so a benchmark can ask where the scheduler's time goes.
		"--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics,/debug/pprof,/debug/pprof/*",
		"--leader-elect=false",
		"--bind-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", port),
		"--cert-dir=" + filepath.Join(c.opts.StateDir, certDir),
		// Client rate limits of a large managed control plane, not the
		// defaults (scheduler 50, controller-manager 20 QPS), at which
		// creating a large Deployment's pods, not Joinery, would dominate
		// a benchmark.
		"--kube-api-qps=300", "--kube-api-burst=600",
	}
}

func (c *Cluster) scheduler() component {
	port := c.opts.Ports.Scheduler
	return component{
		name:     "kube-scheduler",
		port:     port,
		args:     c.clientArgs(port, "scheduler-certs"),
		ready:    httpProbe(newHTTPClient(insecureTLS()), fmt.Sprintf("https://127.0.0.1:%d/healthz", port), "ok"),
		interval: 100 * time.Millisecond,
	}
}

func (c *Cluster) controllerManager() component {
	port := c.opts.Ports.ControllerManager
	return component{
		name: "kube-controller-manager",
		port: port,
		args: append(c.clientArgs(port, "kcm-certs"),
			"--controllers="+strings.Join(c.opts.Controllers, ","),
			"--use-service-account-credentials=false",
		),
		ready:    httpProbe(newHTTPClient(insecureTLS()), fmt.Sprintf("https://127.0.0.1:%d/healthz", port), "ok"),
		interval: 100 * time.Millisecond,
	}
}

func (c *Cluster) kwok() component {
	port := c.opts.Ports.Kwok
	return component{
		name: "kwok",
		port: port,
		args: []string{
			"--config=" + filepath.Join(c.opts.StateDir, kwokStagesFile),
			"--kubeconfig=" + c.kubeconfig,
			"--manage-all-nodes=false",
			"--manage-nodes-with-annotation-selector=" + KwokNodeAnnotation + "=" + KwokNodeAnnotationValue,
			"--node-ip=127.0.0.1",
			fmt.Sprintf("--node-port=%d", kwokNodePort),
			"--cidr=" + kwokPodCIDR,
			fmt.Sprintf("--server-address=127.0.0.1:%d", port), // else it listens on 0.0.0.0:<node-port>
		},
		ready:    httpProbe(newHTTPClient(nil), fmt.Sprintf("http://127.0.0.1:%d/healthz", port), "ok"),
		interval: 100 * time.Millisecond,
	}
}

// ServiceCIDR is the kube-apiserver's service IP range (what EKS reports as
// kubernetesNetworkConfig.serviceIpv4Cidr).
const ServiceCIDR = "10.0.0.0/24"
