package iam_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdkiam "github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/joinery/joinery/sim/iam"
	"github.com/joinery/joinery/sim/internal/simtest"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// A new instance profile, and the role added to it, reach EC2 only after
// the propagation delay (in [P/2, P]); IAM itself answers at once.
func TestInstanceProfileReachesEC2AfterPropagation(t *testing.T) {
	const p = 6 * time.Second
	clk := &clock{t: time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)}
	srv := iam.New(iam.Options{Propagation: p, Now: clk.Now})
	c := simtest.Client(sdkiam.NewFromConfig, simtest.Serve(t, srv), simtest.AnyKey)
	ctx := context.Background()
	name := aws.String("joinery_2")
	if _, err := c.CreateInstanceProfile(ctx, &sdkiam.CreateInstanceProfileInput{InstanceProfileName: name}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetInstanceProfile(ctx, &sdkiam.GetInstanceProfileInput{InstanceProfileName: name}); err != nil {
		t.Fatalf("IAM answers at once: %v", err)
	}
	if _, ok := srv.InstanceProfileARN(*name); ok {
		t.Fatal("EC2 knows the profile the moment it is created")
	}
	clk.Add(p / 2)
	clk.Add(p / 2)
	if _, ok := srv.InstanceProfileARN(*name); !ok {
		t.Fatalf("EC2 does not know the profile after %s", p)
	}
	if srv.InstanceProfileHasRole(*name) {
		t.Fatal("a profile without a role has one for EC2")
	}
	if _, err := c.AddRoleToInstanceProfile(ctx, &sdkiam.AddRoleToInstanceProfileInput{InstanceProfileName: name, RoleName: aws.String(iam.DefaultRole)}); err != nil {
		t.Fatal(err)
	}
	if srv.InstanceProfileHasRole(*name) {
		t.Fatal("EC2 sees the role the moment it is added")
	}
	clk.Add(p)
	if !srv.InstanceProfileHasRole(*name) {
		t.Fatalf("EC2 does not see the role after %s", p)
	}
}
