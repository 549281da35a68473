package ec2

import (
	"net/http"
	"strings"

	"github.com/joinery/joinery/sim/awsauth"
)

// Authentication and per-call authorization (Options.Guard): the caller's
// SigV4 key must be known, and every action the call performs on every
// resource it touches or creates must be allowed by the caller's policy,
// as the EC2 service authorization reference lists them. CreateFleet's
// launches (ec2:RunInstances, ec2:CreateTags at creation, iam:PassRole)
// are authorized per override, in authz_fleet.go.

// authenticate verifies the request's signature; without a guard every
// request passes (caller nil).
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request) (*awsauth.Caller, bool) {
	return s.opts.Guard.Caller(w, r, "ec2", refuse)
}

// refuse answers a refused signature (no request id yet).
func refuse(w http.ResponseWriter, f *awsauth.Failure) { writeError(w, "", authError(f)) }

// authError is a refusal as EC2 answers it.
func authError(f *awsauth.Failure) *apiError {
	switch f.Kind {
	case awsauth.MissingAuthentication:
		return newError(http.StatusUnauthorized, "MissingAuthenticationToken",
			"The request must contain either a valid (registered) AWS access key ID or X.509 certificate.")
	case awsauth.UnknownAccessKey:
		return newError(http.StatusUnauthorized, "AuthFailure", "AWS was not able to validate the provided access credentials")
	case awsauth.SignatureMismatch:
		return newError(http.StatusForbidden, "SignatureDoesNotMatch", "%s", f.Message)
	case awsauth.SignatureExpired:
		return newError(http.StatusBadRequest, "RequestExpired", "Request has expired. %s", f.Message)
	case awsauth.Denied:
		return newError(http.StatusForbidden, CodeUnauthorizedOperation, "%s", f.EC2Message())
	}
	return newError(http.StatusBadRequest, "IncompleteSignature", "%s", f.Message)
}

// authorize evaluates the call's request-level checks for the caller.
func (s *Server) authorize(c *awsauth.Caller, action string, f form) *apiError {
	checks := func() []awsauth.Check {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.checksLocked(action, f)
	}
	if fl := s.opts.Guard.AuthorizeCaller(c, "ec2", action, checks); fl != nil {
		return authError(fl)
	}
	return nil
}

// checksLocked lists what the action does to which resources. Actions
// without resource-level permissions (the Describe calls) are checked on
// "*".
func (s *Server) checksLocked(action string, f form) []awsauth.Check {
	switch action {
	case "CreateFleet":
		return s.fleetChecksLocked(f)
	case "TerminateInstances":
		return s.instanceChecksLocked("ec2:TerminateInstances", f.strings("InstanceId"))
	case "DescribeInstanceAttribute":
		return s.instanceChecksLocked("ec2:DescribeInstanceAttribute", []string{f.get("InstanceId")})
	case "CreateTags":
		return s.createTagsChecksLocked(f)
	case "CreateLaunchTemplate":
		return s.createTemplateChecksLocked(f)
	case "DeleteLaunchTemplate":
		return s.deleteTemplateChecksLocked(f)
	case "CreatePlacementGroup":
		return s.createPlacementGroupChecksLocked(f)
	case "DeletePlacementGroup":
		return s.deletePlacementGroupChecksLocked(f)
	}
	return []awsauth.Check{{Action: "ec2:" + action, Resource: "*", Context: s.keys().Context()}}
}

// keys are the condition keys of every EC2 check.
func (s *Server) keys() awsauth.Keys { return awsauth.Keys{}.Set("ec2:Region", s.opts.Region) }

// arn is an EC2 resource's ARN in this account; images and snapshots
// (owned by another account, or public) have none in theirs.
func (s *Server) arn(kind, id string) string {
	account := s.opts.AccountID
	if kind == "image" || kind == "snapshot" {
		account = ""
	}
	return "arn:" + awsauth.Partition(s.opts.Region) + ":ec2:" + s.opts.Region + ":" + account + ":" + kind + "/" + id
}

// instanceChecksLocked: the action on each instance that exists, with its
// tags and attributes (an unknown id is left to the handler's NotFound).
func (s *Server) instanceChecksLocked(action string, ids []string) []awsauth.Check {
	var out []awsauth.Check
	for _, id := range ids {
		in, ok := s.instances[id]
		if !ok {
			continue
		}
		out = append(out, awsauth.Check{Action: action, Resource: s.arn("instance", id), Context: s.instanceKeys(in).Context()})
	}
	return out
}

func (s *Server) instanceKeys(in *instance) awsauth.Keys {
	return s.keys().ResourceTags("ec2", in.Tags).Set("ec2:InstanceID", in.ID).Set("ec2:InstanceType", in.InstanceType).
		Set("ec2:AvailabilityZone", in.Zone).Set("ec2:InstanceProfile", in.IAMInstanceProfileArn).
		Set("ec2:InstanceMarketType", marketType(in.CapacityType)).Set("ec2:Tenancy", "default").Set("ec2:RootDeviceType", "ebs")
}

func marketType(capacityType string) string {
	if capacityType == CapacityTypeSpot {
		return "spot"
	}
	return "on-demand"
}

// createTagsChecksLocked: ec2:CreateTags on each resource, with the tags
// it has and the tags the request adds (not at creation: no
// ec2:CreateAction).
func (s *Server) createTagsChecksLocked(f form) []awsauth.Check {
	tags := f.tags("Tag")
	var out []awsauth.Check
	for _, id := range f.strings("ResourceId") {
		kind, existing := s.resourceLocked(id)
		out = append(out, awsauth.Check{Action: "ec2:CreateTags", Resource: s.arn(kind, id),
			Context: s.keys().ResourceTags("ec2", existing).RequestTags(tags).Context()})
	}
	return out
}

// resourceLocked is an id's resource type and its tags (nil when unknown).
func (s *Server) resourceLocked(id string) (kind string, tags map[string]string) {
	prefix, _, _ := strings.Cut(id, "-")
	switch prefix {
	case "i":
		if in, ok := s.instances[id]; ok {
			tags = in.Tags
		}
		return "instance", tags
	case "lt":
		if lt := s.templateByIDLocked(id); lt != nil {
			tags = lt.Tags
		}
		return "launch-template", tags
	case "subnet":
		if sn := s.subnetByID(id); sn != nil {
			tags = sn.tags
		}
		return "subnet", tags
	case "sg":
		if g := s.groupBy(func(g *securityGroup) bool { return g.id == id }); g != nil {
			tags = g.tags
		}
		return "security-group", tags
	case "ami":
		if im, ok := s.images[id]; ok {
			tags = im.Tags
		}
		return "image", tags
	}
	kinds := map[string]string{"vol": "volume", "snap": "snapshot", "eni": "network-interface", "fleet": "fleet",
		"sir": "spot-instances-request", "cr": "capacity-reservation", "vpc": "vpc"}
	if k, ok := kinds[prefix]; ok {
		return k, nil
	}
	return prefix, nil
}

// createTemplateChecksLocked: ec2:CreateLaunchTemplate on the new template
// with its tags, and ec2:CreateTags at its creation when it has tags.
func (s *Server) createTemplateChecksLocked(f form) []awsauth.Check {
	tags := tagSpecs(f, "TagSpecification")["launch-template"]
	out := []awsauth.Check{{Action: "ec2:CreateLaunchTemplate", Resource: s.arn("launch-template", "*"),
		Context: s.keys().RequestTags(tags).Context()}}
	if len(tags) > 0 {
		out = append(out, awsauth.Check{Action: "ec2:CreateTags", Resource: s.arn("launch-template", "*"),
			Context: s.keys().RequestTags(tags).Set("ec2:CreateAction", "CreateLaunchTemplate").Context()})
	}
	return out
}

// deleteTemplateChecksLocked: ec2:DeleteLaunchTemplate on the template,
// with its tags (an unknown one is left to the handler's NotFound).
func (s *Server) deleteTemplateChecksLocked(f form) []awsauth.Check {
	lt, err := s.resolveTemplateLocked(f.get("LaunchTemplateId"), f.get("LaunchTemplateName"))
	if err != nil {
		return nil
	}
	return []awsauth.Check{{Action: "ec2:DeleteLaunchTemplate", Resource: s.arn("launch-template", lt.ID),
		Context: s.keys().ResourceTags("ec2", lt.Tags).Context()}}
}

// tagSpecs reads a TagSpecification list: resource type -> tags.
func tagSpecs(f form, prefix string) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, i := range f.indices(prefix) {
		p := at(prefix, i)
		rt := f.get(p + ".ResourceType")
		if out[rt] == nil {
			out[rt] = map[string]string{}
		}
		for k, v := range f.tags(p + ".Tag") {
			out[rt][k] = v
		}
	}
	return out
}
