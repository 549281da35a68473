package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	simec2 "github.com/joinery/joinery/sim/ec2"
)

// status lists the discovered subnets with DescribeSubnets' free count,
// under DescribeSubnets' field names in JSON.
func TestStatusSubnets(t *testing.T) {
	srv := simec2.New(simec2.Options{ClusterTag: "production-eks"})
	url, stop, err := srv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	ids := srv.SubnetIDs()
	if err := srv.SetSubnetAvailable(ids[0], 7); err != nil {
		t.Fatal(err)
	}
	sns, err := subnetFlags{ec2URL: url, region: "us-east-1", discoveryTag: "production-eks"}.subnets(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(sns) != len(ids) || sns[0].SubnetID != ids[0] || sns[0].AvailableIPAddressCount != 7 ||
		sns[0].AvailabilityZone != "us-east-1a" || !strings.HasPrefix(sns[0].CidrBlock, "10.0.0.0/") {
		t.Fatalf("subnets = %+v, want %d with %s (us-east-1a, 10.0.0.0/..) at 7 free", sns, len(ids), ids[0])
	}
	if sns[1].AvailableIPAddressCount < 1000 {
		t.Errorf("subnet %s: %d free, want the untouched block's", sns[1].SubnetID, sns[1].AvailableIPAddressCount)
	}
	var buf bytes.Buffer
	printSubnets(&buf, sns)
	if !strings.Contains(buf.String(), ids[0]) || !strings.Contains(buf.String(), " 7\n") {
		t.Errorf("printed:\n%s", buf.String())
	}
	none, err := subnetFlags{ec2URL: url, region: "us-east-1", discoveryTag: "other-cluster"}.subnets(context.Background())
	if err != nil || len(none) != 0 {
		t.Errorf("another cluster's tag: %+v, %v", none, err)
	}
}
