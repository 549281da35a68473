// Package iam is a local AWS IAM endpoint for the local world and tests:
// instance profiles and the roles they carry.
//
// Server is an http.Handler that speaks the IAM Query protocol
// (form-encoded POST with Action and Version=2010-05-08, XML answers in
// <Action>Response/<Action>Result, errors as <ErrorResponse><Error>)
// closely enough for the real aws-sdk-go-v2 IAM client pointed at it with
// BaseEndpoint. With Options.Guard, signatures are verified and every
// action authorized (auth.go).
//
// Supported actions: CreateInstanceProfile, GetInstanceProfile,
// DeleteInstanceProfile, AddRoleToInstanceProfile,
// RemoveRoleFromInstanceProfile, ListInstanceProfiles (PathPrefix, Marker,
// MaxItems), TagInstanceProfile, ListInstanceProfileTags, GetRole. Roles
// are not created over the API: the ones that exist are Options.Roles
// (AddRole adds more). Errors as IAM answers them: NoSuchEntity (404),
// EntityAlreadyExists (409), LimitExceeded (409, a second role on a
// profile), DeleteConflict (409, deleting a profile that has a role),
// ValidationError (400).
package iam

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/joinery/joinery/sim/awsauth"
	"github.com/joinery/joinery/sim/internal/reqlog"
	"github.com/joinery/joinery/sim/internal/serve"
	"github.com/joinery/joinery/sim/internal/throttle"
)

// Namespace is the XML namespace of IAM API version 2010-05-08.
const Namespace = "https://iam.amazonaws.com/doc/2010-05-08/"

// DefaultRole is the node role the example EC2NodeClass names.
const DefaultRole = "KarpenterNodeRole-production"

// Options configures New.
type Options struct {
	AccountID string // default 123456789012
	// Roles are the role names that exist (default [DefaultRole]).
	Roles []string
	// Partition is the ARNs' partition (default aws).
	Partition string
	// Guard, when set, authenticates every request (SigV4) and authorizes
	// each action on the profile or role it names (sim/awsauth).
	Guard *awsauth.Guard
	// Propagation is how long a change to an instance profile takes to
	// reach EC2 (InstanceProfileARN, InstanceProfileHasRole), as IAM's
	// eventual consistency makes it on AWS: each new profile, and each role
	// added to one, reaches it after a delay in [Propagation/2,
	// Propagation] hashed from Seed and the change (default 0: at once).
	Propagation time.Duration
	// Seed varies the propagation delays from run to run (default 1).
	Seed uint64
	// Now is the clock (default time.Now; tests pass a fake clock's).
	Now func() time.Time
	// ThrottleScale turns on the account's IAM bucket (throttle.go) times
	// this factor: calls past it answer Throttling. 0: no bucket.
	ThrottleScale float64
}

// Server is the local IAM endpoint; create it with New. Safe for concurrent use.
type Server struct {
	reqlog.Recorder[Request] // SetRecording, Requests, ResetRequests

	opts     Options
	mu       sync.Mutex
	roles    map[string]*role
	profiles map[string]*profile
	seq      uint64
	now      func() time.Time
	buckets  *throttle.Set // nil: never throttled
}

type role struct {
	name, path, id string
	created        time.Time
}

type profile struct {
	name, path, id string
	created        time.Time
	roles          []string
	tags           map[string]string
	// ec2Sees and roleReaches are when EC2 first knows the profile and
	// its current role (see propagation.go).
	ec2Sees, roleReaches time.Time
}

// InstanceProfile is a snapshot of one instance profile.
type InstanceProfile struct {
	Name, Path, ARN, ID string
	Created             time.Time
	Roles               []string
	Tags                map[string]string
}

// New returns a Server with the configured roles and no instance profiles.
func New(o Options) *Server {
	o.AccountID = cmp.Or(o.AccountID, serve.DefaultAccount)
	if o.Partition == "" {
		o.Partition = "aws"
	}
	if o.Roles == nil {
		o.Roles = []string{DefaultRole}
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	s := &Server{opts: o, roles: map[string]*role{}, profiles: map[string]*profile{}, now: o.Now,
		buckets: throttle.NewSet(o.ThrottleScale, nil)}
	for _, r := range o.Roles {
		s.AddRole(r)
	}
	return s
}

// AddRole makes a role exist (path /).
func (s *Server) AddRole(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.roles[name]; !ok {
		s.roles[name] = &role{name: name, path: "/", id: uniqueID("AROA", name), created: s.now().UTC().Truncate(time.Second)}
	}
}

// InstanceProfileRoles returns the ARNs of the roles the instance profile
// holds (none when it does not exist): a launch with the profile passes
// them (iam:PassRole).
func (s *Server) InstanceProfileRoles(name string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.profiles[name]
	if !ok {
		return nil
	}
	var out []string
	for _, rn := range p.roles {
		out = append(out, s.roleARNNamed(rn))
	}
	return out
}

// InstanceProfiles returns every instance profile, by name.
func (s *Server) InstanceProfiles() []InstanceProfile {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []InstanceProfile
	for _, n := range slices.Sorted(maps.Keys(s.profiles)) {
		p := s.profiles[n]
		out = append(out, InstanceProfile{Name: p.name, Path: p.path, ARN: s.profileARN(p), ID: p.id, Created: p.created,
			Roles: append([]string(nil), p.roles...), Tags: maps.Clone(p.tags)})
	}
	return out
}

func (s *Server) profileARN(p *profile) string { return s.arn("instance-profile", p.path, p.name) }

func (s *Server) roleARN(r *role) string { return s.arn("role", r.path, r.name) }

// uniqueID is an IAM unique id: a type prefix and 17 characters derived
// from the name (stable across runs).
func uniqueID(prefix, name string) string {
	sum := sha256.Sum256([]byte(prefix + name))
	return prefix + strings.ToUpper(hex.EncodeToString(sum[:]))[:17]
}

// Start serves s on addr (default 127.0.0.1:0) and returns its base URL for
// the SDK's BaseEndpoint; stop shuts it down.
func (s *Server) Start(addr string) (baseURL string, stop func(), err error) {
	return serve.Start("iam", addr, s)
}

type apiError struct {
	status int
	code   string
	msg    string
}

func (e *apiError) Error() string { return e.code + ": " + e.msg }

func noSuchEntity(format string, args ...any) *apiError {
	return &apiError{http.StatusNotFound, "NoSuchEntity", fmt.Sprintf(format, args...)}
}

func validationError(format string, args ...any) *apiError {
	return &apiError{http.StatusBadRequest, "ValidationError", fmt.Sprintf(format, args...)}
}

var (
	namePattern = regexp.MustCompile(`^[\w+=,.@-]{1,128}$`)
	pathPattern = regexp.MustCompile(`^(/|/[\x21-\x7E]*/)$`)
)

func checkName(field, v string) *apiError {
	if v == "" {
		return validationError("1 validation error detected: Value null at '%s' failed to satisfy constraint: Member must not be null", field)
	}
	if !namePattern.MatchString(v) {
		return validationError("1 validation error detected: Value '%s' at '%s' failed to satisfy constraint: Member must satisfy regular expression pattern: [\\w+=,.@-]+", v, field)
	}
	return nil
}

type form url.Values

func (f form) get(k string) string { return url.Values(f).Get(k) }

// tags reads Tags.member.N.Key / .Value.
func (f form) tags() map[string]string {
	out := map[string]string{}
	for i := 1; ; i++ {
		k, ok := f["Tags.member."+strconv.Itoa(i)+".Key"]
		if !ok {
			return out
		}
		out[k[0]] = f.get("Tags.member." + strconv.Itoa(i) + ".Value")
	}
}

func checkTags(tags map[string]string) *apiError {
	if len(tags) > 50 {
		return &apiError{http.StatusConflict, "LimitExceeded", "The number of tags has reached the maximum limit."}
	}
	for k := range tags {
		if strings.HasPrefix(strings.ToLower(k), "aws:") {
			return &apiError{http.StatusBadRequest, "InvalidInput", "Tag keys beginning with 'aws:' are reserved."}
		}
	}
	return nil
}

type handler func(s *Server, f form) (any, *apiError)

var handlers = map[string]handler{
	"CreateInstanceProfile":         (*Server).createInstanceProfile,
	"GetInstanceProfile":            (*Server).getInstanceProfile,
	"DeleteInstanceProfile":         (*Server).deleteInstanceProfile,
	"AddRoleToInstanceProfile":      (*Server).addRole,
	"RemoveRoleFromInstanceProfile": (*Server).removeRole,
	"ListInstanceProfiles":          (*Server).listInstanceProfiles,
	"TagInstanceProfile":            (*Server).tagInstanceProfile,
	"ListInstanceProfileTags":       (*Server).listInstanceProfileTags,
	"GetRole":                       (*Server).getRole,
}

// ServeHTTP answers one IAM Query request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	caller, ok := s.authenticate(w, r)
	if !ok {
		return
	}
	if err := r.ParseForm(); err != nil {
		s.writeError(w, validationError("cannot parse request: %v", err))
		return
	}
	f := form(r.Form)
	action := f.get("Action")
	s.record(r, action, f)
	if s.throttled(w) {
		return
	}
	if v := f.get("Version"); v != "2010-05-08" {
		s.writeError(w, &apiError{http.StatusBadRequest, "InvalidAction", fmt.Sprintf("Could not find operation %s for version %s", action, v)})
		return
	}
	h, ok := handlers[action]
	if !ok {
		s.writeError(w, &apiError{http.StatusBadRequest, "InvalidAction", fmt.Sprintf("Could not find operation %s for version 2010-05-08", action)})
		return
	}
	if aerr := s.authorize(caller, action, f); aerr != nil {
		s.writeError(w, aerr)
		return
	}
	s.mu.Lock()
	result, aerr := h(s, f)
	s.seq++
	reqID := fmt.Sprintf("00000000-0000-4000-8000-%012x", s.seq)
	s.mu.Unlock()
	if aerr != nil {
		s.writeErrorID(w, aerr, reqID)
		return
	}
	var buf bytes.Buffer
	buf.WriteString(xml.Header)
	fmt.Fprintf(&buf, `<%sResponse xmlns="%s">`, action, Namespace)
	if result != nil {
		var inner bytes.Buffer
		if err := xml.NewEncoder(&inner).EncodeElement(result, xml.StartElement{Name: xml.Name{Local: action + "Result"}}); err != nil {
			s.writeErrorID(w, &apiError{http.StatusInternalServerError, "ServiceFailure", err.Error()}, reqID)
			return
		}
		buf.Write(inner.Bytes())
	}
	fmt.Fprintf(&buf, "<ResponseMetadata><RequestId>%s</RequestId></ResponseMetadata></%sResponse>", reqID, action)
	w.Header().Set("Content-Type", "text/xml")
	w.Header().Set("x-amzn-RequestId", reqID)
	_, _ = w.Write(buf.Bytes())
}

func (s *Server) writeError(w http.ResponseWriter, e *apiError) { s.writeErrorID(w, e, "") }

func (s *Server) writeErrorID(w http.ResponseWriter, e *apiError, reqID string) {
	typ := "Sender"
	if e.status >= 500 {
		typ = "Receiver"
	}
	var buf bytes.Buffer
	buf.WriteString(xml.Header)
	_ = xml.NewEncoder(&buf).Encode(struct {
		XMLName   xml.Name `xml:"ErrorResponse"`
		Xmlns     string   `xml:"xmlns,attr"`
		Type      string   `xml:"Error>Type"`
		Code      string   `xml:"Error>Code"`
		Message   string   `xml:"Error>Message"`
		RequestID string   `xml:"RequestId"`
	}{Xmlns: Namespace, Type: typ, Code: e.code, Message: e.msg, RequestID: reqID})
	w.Header().Set("Content-Type", "text/xml")
	w.WriteHeader(e.status)
	_, _ = w.Write(buf.Bytes())
}

// ---- XML shapes ----

type tagXML struct {
	Key   string `xml:"Key"`
	Value string `xml:"Value"`
}

func tagList(tags map[string]string) []tagXML {
	var out []tagXML
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		out = append(out, tagXML{k, tags[k]})
	}
	return out
}

type roleXML struct {
	Path                     string `xml:"Path"`
	RoleName                 string `xml:"RoleName"`
	RoleID                   string `xml:"RoleId"`
	Arn                      string `xml:"Arn"`
	CreateDate               string `xml:"CreateDate"`
	AssumeRolePolicyDocument string `xml:"AssumeRolePolicyDocument,omitempty"`
	MaxSessionDuration       int    `xml:"MaxSessionDuration,omitempty"`
}

type profileXML struct {
	Path                string    `xml:"Path"`
	InstanceProfileName string    `xml:"InstanceProfileName"`
	InstanceProfileID   string    `xml:"InstanceProfileId"`
	Arn                 string    `xml:"Arn"`
	CreateDate          string    `xml:"CreateDate"`
	Roles               []roleXML `xml:"Roles>member"`
	Tags                []tagXML  `xml:"Tags>member,omitempty"`
}

const ec2TrustPolicy = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}`

func (s *Server) roleXML(r *role) roleXML {
	return roleXML{Path: r.path, RoleName: r.name, RoleID: r.id, Arn: s.roleARN(r), CreateDate: isoTime(r.created),
		AssumeRolePolicyDocument: url.QueryEscape(ec2TrustPolicy), MaxSessionDuration: 3600}
}

func (s *Server) profileXML(p *profile) profileXML {
	x := profileXML{Path: p.path, InstanceProfileName: p.name, InstanceProfileID: p.id, Arn: s.profileARN(p),
		CreateDate: isoTime(p.created), Roles: []roleXML{}, Tags: tagList(p.tags)}
	for _, rn := range p.roles {
		if r, ok := s.roles[rn]; ok {
			x.Roles = append(x.Roles, s.roleXML(r))
		}
	}
	return x
}

func isoTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05Z") }

// ---- actions (called with s.mu held) ----

func (s *Server) profileNamed(f form) (*profile, *apiError) {
	name := f.get("InstanceProfileName")
	if err := checkName("instanceProfileName", name); err != nil {
		return nil, err
	}
	p, ok := s.profiles[name]
	if !ok {
		return nil, noSuchEntity("Instance Profile %s cannot be found.", name)
	}
	return p, nil
}

func (s *Server) createInstanceProfile(f form) (any, *apiError) {
	name, path := f.get("InstanceProfileName"), f.get("Path")
	if err := checkName("instanceProfileName", name); err != nil {
		return nil, err
	}
	if path == "" {
		path = "/"
	}
	if len(path) > 512 || !pathPattern.MatchString(path) {
		return nil, validationError("The specified value for path is invalid. It must begin and end with / and contain only alphanumeric characters and/or / characters.")
	}
	tags := f.tags()
	if err := checkTags(tags); err != nil {
		return nil, err
	}
	if _, dup := s.profiles[name]; dup {
		return nil, &apiError{http.StatusConflict, "EntityAlreadyExists", fmt.Sprintf("Instance Profile %s already exists.", name)}
	}
	p := &profile{name: name, path: path, id: uniqueID("AIPA", name+s.now().String()), created: s.now().UTC().Truncate(time.Second), tags: tags}
	p.ec2Sees = s.reachesEC2(p.id)
	s.profiles[name] = p
	return struct {
		InstanceProfile profileXML `xml:"InstanceProfile"`
	}{s.profileXML(p)}, nil
}

func (s *Server) getInstanceProfile(f form) (any, *apiError) {
	p, err := s.profileNamed(f)
	if err != nil {
		return nil, err
	}
	return struct {
		InstanceProfile profileXML `xml:"InstanceProfile"`
	}{s.profileXML(p)}, nil
}

func (s *Server) deleteInstanceProfile(f form) (any, *apiError) {
	p, err := s.profileNamed(f)
	if err != nil {
		return nil, err
	}
	if len(p.roles) > 0 {
		return nil, &apiError{http.StatusConflict, "DeleteConflict", "Cannot delete entity, must remove roles from instance profile first."}
	}
	delete(s.profiles, p.name)
	return nil, nil
}

func (s *Server) roleNamed(name string) (*role, *apiError) {
	if err := checkName("roleName", name); err != nil {
		return nil, err
	}
	r, ok := s.roles[name]
	if !ok {
		return nil, noSuchEntity("The role with name %s cannot be found.", name)
	}
	return r, nil
}

func (s *Server) addRole(f form) (any, *apiError) {
	p, err := s.profileNamed(f)
	if err != nil {
		return nil, err
	}
	r, err := s.roleNamed(f.get("RoleName"))
	if err != nil {
		return nil, err
	}
	if len(p.roles) > 0 {
		return nil, &apiError{http.StatusConflict, "LimitExceeded", "Cannot exceed quota for InstanceSessionsPerInstanceProfile: 1"}
	}
	p.roles = append(p.roles, r.name)
	p.roleReaches = s.reachesEC2(p.id + "/role/" + r.name + "/" + s.now().String())
	return nil, nil
}

func (s *Server) removeRole(f form) (any, *apiError) {
	p, err := s.profileNamed(f)
	if err != nil {
		return nil, err
	}
	name := f.get("RoleName")
	if err := checkName("roleName", name); err != nil {
		return nil, err
	}
	for i, rn := range p.roles {
		if rn == name {
			p.roles = append(p.roles[:i], p.roles[i+1:]...)
			return nil, nil
		}
	}
	return nil, noSuchEntity("The role with name %s cannot be found.", name)
}

func (s *Server) listInstanceProfiles(f form) (any, *apiError) {
	prefix := f.get("PathPrefix")
	if prefix == "" {
		prefix = "/"
	}
	if !strings.HasPrefix(prefix, "/") {
		return nil, validationError("The specified value for pathPrefix is invalid. It must begin with /.")
	}
	max := 100
	if v := f.get("MaxItems"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			return nil, validationError("1 validation error detected: Value '%s' at 'maxItems' failed to satisfy constraint: Member must have value between 1 and 1000", v)
		}
		max = n
	}
	marker := f.get("Marker")
	var names []string
	for _, n := range slices.Sorted(maps.Keys(s.profiles)) {
		if strings.HasPrefix(s.profiles[n].path, prefix) && (marker == "" || n >= marker) {
			names = append(names, n)
		}
	}
	out := struct {
		InstanceProfiles []profileXML `xml:"InstanceProfiles>member"`
		IsTruncated      bool         `xml:"IsTruncated"`
		Marker           string       `xml:"Marker,omitempty"`
	}{InstanceProfiles: []profileXML{}}
	if len(names) > max {
		out.IsTruncated, out.Marker = true, names[max]
		names = names[:max]
	}
	for _, n := range names {
		x := s.profileXML(s.profiles[n])
		x.Tags = nil // ListInstanceProfiles does not return tags
		out.InstanceProfiles = append(out.InstanceProfiles, x)
	}
	return out, nil
}

func (s *Server) tagInstanceProfile(f form) (any, *apiError) {
	p, err := s.profileNamed(f)
	if err != nil {
		return nil, err
	}
	tags := f.tags()
	if len(tags) == 0 {
		return nil, validationError("1 validation error detected: Value null at 'tags' failed to satisfy constraint: Member must not be null")
	}
	merged := maps.Clone(p.tags)
	maps.Copy(merged, tags)
	if err := checkTags(merged); err != nil {
		return nil, err
	}
	p.tags = merged
	return nil, nil
}

func (s *Server) listInstanceProfileTags(f form) (any, *apiError) {
	p, err := s.profileNamed(f)
	if err != nil {
		return nil, err
	}
	return struct {
		Tags        []tagXML `xml:"Tags>member"`
		IsTruncated bool     `xml:"IsTruncated"`
	}{Tags: tagList(p.tags)}, nil
}

func (s *Server) getRole(f form) (any, *apiError) {
	r, err := s.roleNamed(f.get("RoleName"))
	if err != nil {
		return nil, err
	}
	return struct {
		Role roleXML `xml:"Role"`
	}{s.roleXML(r)}, nil
}

// Request is one API request the endpoint received, as recorded once
// SetRecording(true) is called (tests compare the actions made with
// deploy/iam-policy.json).
type Request struct {
	Time   time.Time
	Action string // "CreateInstanceProfile"
	Header http.Header
	Params url.Values
}

// Clone copies the headers (and parameters).
func (r Request) Clone() Request {
	r.Header = r.Header.Clone()
	r.Params = reqlog.CloneValues(r.Params)
	return r
}

func (s *Server) record(r *http.Request, action string, f form) {
	s.Record(func() Request {
		return Request{Time: time.Now(), Action: action, Header: r.Header.Clone(), Params: reqlog.CloneValues(url.Values(f))}
	})
}
