// Package ssm is a local AWS Systems Manager Parameter Store endpoint for
// the local world and tests: the public parameters EKS publishes for its
// optimized images (/aws/service/eks/optimized-ami/..., /aws/service/bottlerocket/...).
//
// Server is an http.Handler that speaks the AWS JSON 1.1 protocol (POST
// with X-Amz-Target: AmazonSSM.<Operation>, JSON bodies, errors as
// {"__type": ..., "message": ...}) closely enough for the real
// aws-sdk-go-v2 SSM client pointed at it with BaseEndpoint. With
// Options.Guard, signatures are verified and each read authorized
// (auth.go).
//
// Supported operations: GetParameter and GetParameters. Values come from
// Options.Source (the local EC2 endpoint's images, so publishing a release
// there repoints `recommended`) and from Put. A missing name is
// ParameterNotFound for GetParameter and an InvalidParameters entry for
// GetParameters, as on AWS.
package ssm

import (
	"cmp"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/joinery/joinery/sim/awsauth"
	"github.com/joinery/joinery/sim/internal/reqlog"
	"github.com/joinery/joinery/sim/internal/serve"
	"github.com/joinery/joinery/sim/internal/throttle"
)

// Source answers a parameter the server does not hold itself.
type Source func(name string) (value string, version int64, modified time.Time, ok bool)

// Options configures New.
type Options struct {
	Region    string // default us-east-1
	AccountID string // default 123456789012
	Source    Source
	// Guard, when set, authenticates every request (SigV4) and authorizes
	// ssm:<op> on each parameter it reads (sim/awsauth).
	Guard *awsauth.Guard
	// ThrottleScale turns on Parameter Store's throughput limit (40 reads
	// a second) times this factor: calls past it answer
	// ThrottlingException. 0: no limit.
	ThrottleScale float64
}

// Server is the local SSM endpoint; create it with New. Safe for concurrent use.
type Server struct {
	reqlog.Recorder[Request] // SetRecording, Requests, ResetRequests

	opts   Options
	mu     sync.Mutex
	params map[string]param
	ids    serve.RequestIDs
	// buckets throttle the account's calls (nil: never).
	buckets *throttle.Set
}

type param struct {
	value    string
	version  int64
	modified time.Time
}

// New returns a Server.
func New(o Options) *Server {
	o.Region = cmp.Or(o.Region, serve.DefaultRegion)
	o.AccountID = cmp.Or(o.AccountID, serve.DefaultAccount)
	return &Server{opts: o, params: map[string]param{}, buckets: throttle.NewSet(o.ThrottleScale, nil)}
}

// Put sets a String parameter (a user's own, or one that overrides Source),
// bumping its version.
func (s *Server) Put(name, value string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.params[name]
	s.params[name] = param{value: value, version: p.version + 1, modified: time.Now().UTC()}
}

// Start serves s on addr (default 127.0.0.1:0) and returns its base URL for
// the SDK's BaseEndpoint; stop shuts it down.
func (s *Server) Start(addr string) (baseURL string, stop func(), err error) {
	return serve.Start("ssm", addr, s)
}

func (s *Server) lookup(name string) (param, bool) {
	s.mu.Lock()
	p, ok := s.params[name]
	s.mu.Unlock()
	if ok {
		return p, true
	}
	if s.opts.Source != nil {
		if v, ver, mod, ok := s.opts.Source(name); ok {
			return param{value: v, version: ver, modified: mod}, true
		}
	}
	return param{}, false
}

type apiError = serve.JSONError

func validation(format string, args ...any) *apiError {
	return &apiError{Status: http.StatusBadRequest, Type: "ValidationException", Msg: fmt.Sprintf(format, args...)}
}

type parameterJSON struct {
	Name             string  `json:"Name"`
	Type             string  `json:"Type"`
	Value            string  `json:"Value"`
	Version          int64   `json:"Version"`
	LastModifiedDate float64 `json:"LastModifiedDate"`
	ARN              string  `json:"ARN"`
	DataType         string  `json:"DataType"`
}

func (s *Server) parameterJSON(name string, p param) parameterJSON {
	return parameterJSON{Name: name, Type: "String", Value: p.value, Version: p.version,
		LastModifiedDate: float64(p.modified.UnixMilli()) / 1000, ARN: s.parameterARN(name), DataType: "text"}
}

// checkName applies SSM's name rules: at most 2048 characters, and a
// hierarchical name starts with "/".
func checkName(name string) *apiError {
	if name == "" {
		return validation("1 validation error detected: Value at 'name' failed to satisfy constraint: Member must have length greater than or equal to 1")
	}
	if len(name) > 2048 {
		return validation("1 validation error detected: Value at 'name' failed to satisfy constraint: Member must have length less than or equal to 2048")
	}
	if strings.Contains(name, "/") && !strings.HasPrefix(name, "/") {
		return validation("Parameter name: can't be prefixed with \"ssm\" (case-insensitive). If formed as a path, it must be fully qualified with a leading forward slash (\"/\").")
	}
	return nil
}

// ServeHTTP answers one AWS JSON 1.1 request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	op, err := serve.JSONOperation(r, "AmazonSSM.", "SSM")
	s.record(r, op)
	if err != nil {
		writeError(w, err)
		return
	}
	if s.throttled(w) {
		return
	}
	if !s.authorize(w, r, op) {
		return
	}
	var out any
	switch op {
	case "GetParameter":
		var in struct {
			Name           string
			WithDecryption bool
		}
		if err = serve.DecodeJSONBody(r, &in); err == nil {
			out, err = s.getParameter(in.Name)
		}
	case "GetParameters":
		var in struct {
			Names          []string
			WithDecryption bool
		}
		if err = serve.DecodeJSONBody(r, &in); err == nil {
			out, err = s.getParameters(in.Names)
		}
	default:
		err = &apiError{Status: http.StatusBadRequest, Type: "UnknownOperationException", Msg: "The local SSM endpoint does not implement " + op}
	}
	if err != nil {
		writeError(w, err)
		return
	}
	serve.WriteJSON(w, s.ids.Next(), out)
}

func (s *Server) getParameter(name string) (any, *apiError) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	p, ok := s.lookup(name)
	if !ok {
		return nil, &apiError{Status: http.StatusBadRequest, Type: "ParameterNotFound", Msg: "Parameter " + name + " not found."}
	}
	return map[string]any{"Parameter": s.parameterJSON(name, p)}, nil
}

func (s *Server) getParameters(names []string) (any, *apiError) {
	if len(names) == 0 {
		return nil, validation("1 validation error detected: Value null at 'names' failed to satisfy constraint: Member must not be null")
	}
	if len(names) > 10 {
		return nil, validation("1 validation error detected: Value '[%s]' at 'names' failed to satisfy constraint: Member must have length less than or equal to 10",
			strings.Join(names, ", "))
	}
	found := []parameterJSON{}
	invalid := []string{}
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			continue
		}
		seen[n] = true
		if err := checkName(n); err != nil {
			return nil, err
		}
		if p, ok := s.lookup(n); ok {
			found = append(found, s.parameterJSON(n, p))
		} else {
			invalid = append(invalid, n)
		}
	}
	return map[string]any{"Parameters": found, "InvalidParameters": invalid}, nil
}

func writeError(w http.ResponseWriter, e *apiError) { serve.WriteJSONError(w, e, "message") }

// Request is one API request the endpoint received, as recorded once
// SetRecording(true) is called (tests compare the operations made with
// deploy/iam-policy.json); Operation is "GetParameter", without AmazonSSM.
type Request = reqlog.Call

func (s *Server) record(r *http.Request, op string) {
	s.Record(func() Request { return reqlog.NewCall(r, op) })
}
