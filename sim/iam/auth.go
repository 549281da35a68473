package iam

import (
	"net/http"

	"github.com/joinery/joinery/sim/awsauth"
)

// Authentication and authorization (Options.Guard): each action on the
// instance profile or role it names, with the profile's tags
// (aws:ResourceTag) and the tags the request applies (aws:RequestTag);
// creating a profile with tags also needs iam:TagInstanceProfile, and
// adding a role to a profile passes the role (iam:PassRole, to EC2).

// authenticate verifies the signature; without a guard every request
// passes (caller nil).
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request) (*awsauth.Caller, bool) {
	return s.opts.Guard.Caller(w, r, "iam", s.refuse)
}

func (s *Server) refuse(w http.ResponseWriter, f *awsauth.Failure) { s.writeError(w, authError(f)) }

// authError is a refusal as IAM answers it.
func authError(f *awsauth.Failure) *apiError {
	switch f.Kind {
	case awsauth.MissingAuthentication:
		return &apiError{http.StatusForbidden, "MissingAuthenticationToken", f.Message}
	case awsauth.UnknownAccessKey:
		return &apiError{http.StatusForbidden, "InvalidClientTokenId", f.Message}
	case awsauth.SignatureMismatch, awsauth.SignatureExpired:
		return &apiError{http.StatusForbidden, "SignatureDoesNotMatch", f.Message}
	case awsauth.Denied:
		return &apiError{http.StatusForbidden, "AccessDenied", f.Message}
	}
	return &apiError{http.StatusBadRequest, "IncompleteSignature", f.Message}
}

// authorize evaluates the action's checks for the caller.
func (s *Server) authorize(c *awsauth.Caller, action string, f form) *apiError {
	checks := func() []awsauth.Check {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.checksLocked(action, f)
	}
	if fl := s.opts.Guard.AuthorizeCaller(c, "iam", action, checks); fl != nil {
		return authError(fl)
	}
	return nil
}

func (s *Server) checksLocked(action string, f form) []awsauth.Check {
	iamAction := "iam:" + action
	switch action {
	case "ListInstanceProfiles":
		return []awsauth.Check{{Action: iamAction, Resource: "*", Context: awsauth.Keys{}.Context()}}
	case "GetRole":
		return []awsauth.Check{{Action: iamAction, Resource: s.roleARNNamed(f.get("RoleName")), Context: awsauth.Keys{}.Context()}}
	case "CreateInstanceProfile":
		return s.createChecks(f)
	}
	arn, tags := s.profileLocked(f.get("InstanceProfileName"))
	keys := awsauth.Keys{}.ResourceTags("", tags)
	if action == "TagInstanceProfile" {
		keys.RequestTags(f.tags())
	}
	out := []awsauth.Check{{Action: iamAction, Resource: arn, Context: keys.Context()}}
	if action == "AddRoleToInstanceProfile" {
		out = append(out, awsauth.Check{Action: "iam:PassRole", Resource: s.roleARNNamed(f.get("RoleName")),
			Context: awsauth.Keys{}.Set("iam:PassedToService", "ec2.amazonaws.com").Context()})
	}
	return out
}

// createChecks: the new profile with the request's tags; tagging it at
// creation is iam:TagInstanceProfile too.
func (s *Server) createChecks(f form) []awsauth.Check {
	path := f.get("Path")
	if path == "" {
		path = "/"
	}
	arn := s.arn("instance-profile", path, f.get("InstanceProfileName"))
	tags := f.tags()
	out := []awsauth.Check{{Action: "iam:CreateInstanceProfile", Resource: arn, Context: awsauth.Keys{}.RequestTags(tags).Context()}}
	if len(tags) > 0 {
		out = append(out, awsauth.Check{Action: "iam:TagInstanceProfile", Resource: arn, Context: awsauth.Keys{}.RequestTags(tags).Context()})
	}
	return out
}

// profileLocked is the named profile's ARN and tags (path / and no tags
// when it does not exist: the handler answers NoSuchEntity).
func (s *Server) profileLocked(name string) (string, map[string]string) {
	if p, ok := s.profiles[name]; ok {
		return s.profileARN(p), p.tags
	}
	return s.arn("instance-profile", "/", name), nil
}

func (s *Server) roleARNNamed(name string) string {
	if r, ok := s.roles[name]; ok {
		return s.roleARN(r)
	}
	return s.arn("role", "/", name)
}

func (s *Server) arn(kind, path, name string) string {
	return "arn:" + s.opts.Partition + ":iam::" + s.opts.AccountID + ":" + kind + path + name
}
