// Package kube runs a real, loopback-only Kubernetes control plane for the
// local world and integration tests: etcd, kube-apiserver, kube-scheduler,
// kube-controller-manager and kwok (which stands in for kubelets: it marks
// Nodes annotated kwok.x-k8s.io/node=fake Ready and makes their Pods Running).
//
// The binaries are built once from the Go module proxy by hack/kube/build.sh
// into a versioned cache folder. Everything a cluster needs (etcd data, PKI,
// admin kubeconfig, logs, pid files) lives in one state directory, so a second
// Start on the same directory resumes the same cluster:
//
//	c, err := kube.Start(ctx, kube.Options{StateDir: ".joinery/kube", Log: os.Stderr})
//	if err != nil { ... }
//	defer c.Stop()
//	kube.InstallCRDs(ctx, c.RESTConfig())
//	// KUBECONFIG=c.Kubeconfig() kubectl get nodes
//
// Layout of the state directory:
//
//	pki/                     CA, apiserver serving cert, admin client cert, service-account keys
//	etcd/                    etcd data (survives Stop)
//	admin.kubeconfig         cluster-admin kubeconfig (system:masters), self-contained
//	kwok-stages.yaml         kwok's Stage configuration (written from an embedded copy)
//	logs/<component>.log     each process's output (the previous run's in <component>.log.1)
//	run/<component>.pid      pids of running children (removed by Stop)
//	apiserver-certs/ ...     self-signed serving certs of the components
//
// Child processes run in their own process group, so a Ctrl-C in the terminal
// reaches only our process: a program should catch SIGINT/SIGTERM (for example
// with signal.NotifyContext) and call Stop for an orderly shutdown. If our
// process dies instead, the kernel SIGKILLs the children (Linux,
// PR_SET_PDEATHSIG), so no etcd or kube-apiserver outlives a crashed run; the
// next Start notices the left-over pid files and resumes. The package works on
// Linux and macOS (there, without the kernel's guarantee).
package kube
