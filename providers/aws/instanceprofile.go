package aws

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
)

// InstanceProfile is an IAM instance profile and the role it carries
// (IAM allows one; "" for none).
type InstanceProfile struct {
	Name, Path, Role string
	Tags             map[string]string
}

// GetInstanceProfile returns the named instance profile; found is false
// when IAM answers NoSuchEntity.
func (c *Client) GetInstanceProfile(ctx context.Context, name string) (InstanceProfile, bool, error) {
	out, err := c.iam.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(name)})
	if isCode(err, "NoSuchEntity") {
		return InstanceProfile{}, false, nil
	}
	if err != nil {
		return InstanceProfile{}, false, fmt.Errorf("iam GetInstanceProfile %s: %w", name, err)
	}
	ip := out.InstanceProfile
	p := InstanceProfile{Name: aws.ToString(ip.InstanceProfileName), Path: aws.ToString(ip.Path), Tags: map[string]string{}}
	if len(ip.Roles) > 0 {
		p.Role = aws.ToString(ip.Roles[0].RoleName)
	}
	for _, t := range ip.Tags {
		p.Tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return p, true, nil
}

// EnsureInstanceProfile makes the instance profile p.Name exist and carry
// p.Role: created (path p.Path, default "/", tagged with p.Tags) when
// missing, its role swapped when it carries another. p.Role may be a role
// ARN or a name with a path; the role name is what IAM takes. Tags of an
// existing profile are left as they are.
func (c *Client) EnsureInstanceProfile(ctx context.Context, p InstanceProfile) error {
	if p.Name == "" || p.Role == "" {
		return fmt.Errorf("instance profile: name %q and role %q are required", p.Name, p.Role)
	}
	role := p.Role[strings.LastIndexByte(p.Role, '/')+1:]
	cur, found, err := c.GetInstanceProfile(ctx, p.Name)
	if err != nil {
		return err
	}
	if !found {
		path := p.Path
		if path == "" {
			path = "/"
		}
		var tags []iamtypes.Tag
		for _, k := range slices.Sorted(maps.Keys(p.Tags)) {
			tags = append(tags, iamtypes.Tag{Key: aws.String(k), Value: aws.String(p.Tags[k])})
		}
		_, err := c.iam.CreateInstanceProfile(ctx, &iam.CreateInstanceProfileInput{
			InstanceProfileName: aws.String(p.Name), Path: aws.String(path), Tags: tags})
		if err != nil && !isCode(err, "EntityAlreadyExists") {
			return fmt.Errorf("iam CreateInstanceProfile %s: %w", p.Name, err)
		}
		if err != nil { // created concurrently: read what is there
			if cur, _, err = c.GetInstanceProfile(ctx, p.Name); err != nil {
				return err
			}
		} else {
			cur = InstanceProfile{Name: p.Name, Path: path, Tags: maps.Clone(p.Tags)}
		}
	}
	if cur.Role == role {
		return nil
	}
	if cur.Role != "" {
		_, err := c.iam.RemoveRoleFromInstanceProfile(ctx, &iam.RemoveRoleFromInstanceProfileInput{
			InstanceProfileName: aws.String(p.Name), RoleName: aws.String(cur.Role)})
		if err != nil && !isCode(err, "NoSuchEntity") {
			return fmt.Errorf("iam RemoveRoleFromInstanceProfile %s %s: %w", p.Name, cur.Role, err)
		}
	}
	if _, err := c.iam.AddRoleToInstanceProfile(ctx, &iam.AddRoleToInstanceProfileInput{
		InstanceProfileName: aws.String(p.Name), RoleName: aws.String(role)}); err != nil {
		return fmt.Errorf("iam AddRoleToInstanceProfile %s %s: %w", p.Name, role, err)
	}
	return nil
}

// DeleteInstanceProfile removes the profile's role, then the profile; a
// profile (or role) already gone counts as removed.
func (c *Client) DeleteInstanceProfile(ctx context.Context, name string) error {
	cur, found, err := c.GetInstanceProfile(ctx, name)
	if err != nil || !found {
		return err
	}
	if cur.Role != "" {
		_, err := c.iam.RemoveRoleFromInstanceProfile(ctx, &iam.RemoveRoleFromInstanceProfileInput{
			InstanceProfileName: aws.String(name), RoleName: aws.String(cur.Role)})
		if err != nil && !isCode(err, "NoSuchEntity") {
			return fmt.Errorf("iam RemoveRoleFromInstanceProfile %s %s: %w", name, cur.Role, err)
		}
	}
	_, err = c.iam.DeleteInstanceProfile(ctx, &iam.DeleteInstanceProfileInput{InstanceProfileName: aws.String(name)})
	if err != nil && !isCode(err, "NoSuchEntity") {
		return fmt.Errorf("iam DeleteInstanceProfile %s: %w", name, err)
	}
	return nil
}
