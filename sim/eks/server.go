// Package eks is a local Amazon EKS endpoint for the local world and tests:
// DescribeCluster for the one cluster the local world runs, answering its
// kube-apiserver endpoint, CA bundle and service CIDR.
//
// Server is an http.Handler that speaks the REST-JSON protocol of EKS
// (GET /clusters/<name>, errors as {"__type": ..., "message": ...} with the
// X-Amzn-ErrorType header) closely enough for the real aws-sdk-go-v2 EKS
// client pointed at it with BaseEndpoint. Signatures are not checked.
// Other names are ResourceNotFoundException, as on AWS; other operations
// answer 404 UnknownOperationException.
package eks

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/joinery/joinery/sim/awsauth"
	"github.com/joinery/joinery/sim/internal/reqlog"
	"github.com/joinery/joinery/sim/internal/serve"
)

// Cluster is what DescribeCluster answers.
type Cluster struct {
	Name string // default "joinery-local"
	// Endpoint is the kube-apiserver URL, e.g. https://127.0.0.1:6443.
	Endpoint string
	// CAData is the cluster CA bundle as base64 of the PEM (EKS's
	// certificateAuthority.data).
	CAData string
	// ServiceIPv4CIDR is kubernetesNetworkConfig.serviceIpv4Cidr.
	ServiceIPv4CIDR string
	Version         string // Kubernetes minor version, e.g. "1.37"
	Status          string // default ACTIVE
	CreatedAt       time.Time
}

// Options configures New.
type Options struct {
	Region    string // default us-east-1
	AccountID string // default 123456789012
	Cluster   Cluster
	// Guard, when set, authenticates every request (SigV4) and authorizes
	// eks:DescribeCluster on the cluster it names (sim/awsauth).
	Guard *awsauth.Guard
}

// Server is the local EKS endpoint; create it with New. Safe for concurrent use.
type Server struct {
	reqlog.Recorder[Request] // SetRecording, Requests, ResetRequests

	opts Options
	mu   sync.Mutex
	seq  uint64
}

// New returns a Server for one cluster.
func New(o Options) *Server {
	o.Region = cmp.Or(o.Region, serve.DefaultRegion)
	o.AccountID = cmp.Or(o.AccountID, serve.DefaultAccount)
	if o.Cluster.Name == "" {
		o.Cluster.Name = "joinery-local"
	}
	if o.Cluster.Status == "" {
		o.Cluster.Status = "ACTIVE"
	}
	if o.Cluster.CreatedAt.IsZero() {
		o.Cluster.CreatedAt = time.Now().UTC().Truncate(time.Second)
	}
	return &Server{opts: o}
}

// SetCluster replaces what DescribeCluster answers (tests: a wrong CA, a
// cluster still CREATING).
func (s *Server) SetCluster(c Cluster) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.Status == "" {
		c.Status = "ACTIVE"
	}
	if c.CreatedAt.IsZero() {
		c.CreatedAt = s.opts.Cluster.CreatedAt
	}
	s.opts.Cluster = c
}

// Start serves s on addr (default 127.0.0.1:0) and returns its base URL for
// the SDK's BaseEndpoint; stop shuts it down.
func (s *Server) Start(addr string) (baseURL string, stop func(), err error) {
	return serve.Start("eks", addr, s)
}

// ServeHTTP answers one REST-JSON request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest, isCluster := strings.CutPrefix(r.URL.EscapedPath(), "/clusters/")
	op := "Unknown"
	if isCluster && r.Method == http.MethodGet && !strings.Contains(rest, "/") {
		op = "DescribeCluster"
	}
	s.record(r, op)
	if op != "DescribeCluster" {
		writeError(w, http.StatusNotFound, "UnknownOperationException",
			fmt.Sprintf("The local EKS endpoint answers only DescribeCluster (GET /clusters/<name>), not %s %s", r.Method, r.URL.Path))
		return
	}
	name, err := url.PathUnescape(rest)
	if err != nil {
		writeError(w, http.StatusBadRequest, "InvalidParameterException", "invalid cluster name: "+err.Error())
		return
	}
	if !s.authorize(w, r, op, name) {
		return
	}
	s.mu.Lock()
	c := s.opts.Cluster
	region, account := s.opts.Region, s.opts.AccountID
	s.seq++
	reqID := fmt.Sprintf("00000000-0000-4000-8000-%012x", s.seq)
	s.mu.Unlock()
	w.Header().Set("x-amzn-RequestId", reqID)
	if name != c.Name {
		writeError(w, http.StatusNotFound, "ResourceNotFoundException", "No cluster found for name: "+name+".")
		return
	}
	cl := map[string]any{
		"name":            c.Name,
		"arn":             fmt.Sprintf("arn:%s:eks:%s:%s:cluster/%s", awsauth.Partition(region), region, account, c.Name),
		"createdAt":       float64(c.CreatedAt.Unix()),
		"version":         c.Version,
		"roleArn":         fmt.Sprintf("arn:aws:iam::%s:role/%s-cluster", account, c.Name),
		"status":          c.Status,
		"platformVersion": "eks.1",
		"kubernetesNetworkConfig": map[string]any{
			"serviceIpv4Cidr": c.ServiceIPv4CIDR, "ipFamily": "ipv4",
		},
		"accessConfig": map[string]any{"authenticationMode": "API"},
		"tags":         map[string]string{},
	}
	// EKS shows the endpoint and CA only once the cluster is ACTIVE.
	if c.Status == "ACTIVE" {
		cl["endpoint"] = c.Endpoint
		cl["certificateAuthority"] = map[string]string{"data": c.CAData}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"cluster": cl})
}

func writeError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-ErrorType", typ)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"__type": typ, "message": msg})
}

// Request is one API request the endpoint received, as recorded once
// SetRecording(true) is called.
type Request struct {
	Time      time.Time
	Operation string // "DescribeCluster", or "Unknown"
	Path      string
	Header    http.Header
}

// Clone copies the headers (and parameters).
func (r Request) Clone() Request {
	r.Header = r.Header.Clone()
	return r
}

func (s *Server) record(r *http.Request, op string) {
	s.Record(func() Request {
		return Request{Time: time.Now(), Operation: op, Path: r.URL.Path, Header: r.Header.Clone()}
	})
}
