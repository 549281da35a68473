package controller

import (
	"testing"
	"time"

	"github.com/joinery/joinery/providers/temporal"
)

func TestWithDefaultsFillsZeroFields(t *testing.T) {
	got := Config{}.WithDefaults()
	want := map[string][2]string{
		"TemporalAddress":    {got.TemporalAddress, "127.0.0.1:7233"},
		"Namespace":          {got.Namespace, "default"},
		"Temporal.HostPort":  {got.Temporal.HostPort, "127.0.0.1:7233"},
		"Temporal.Namespace": {got.Temporal.Namespace, "default"},
		"Region":             {got.Region, "us-east-1"},
		"ClusterName":        {got.ClusterName, "joinery"},
		"StateNamespace":     {got.StateNamespace, "default"},
		"LeaseNamespace":     {got.LeaseNamespace, "default"},
		"BatchIdle":          {got.BatchIdle.String(), "1s"},
		"BatchMax":           {got.BatchMax.String(), "10s"},
		"NodeClassResync":    {got.NodeClassResync.String(), "1m0s"},
		"MetricsAddr":        {got.MetricsAddr, ""},
	}
	for field, v := range want {
		if v[0] != v[1] {
			t.Errorf("%s = %q, want %q", field, v[0], v[1])
		}
	}
	if got.Log == nil {
		t.Error("Log is nil, want a no-op logger")
	}
}

func TestWithDefaultsKeepsSetFields(t *testing.T) {
	in := Config{
		Connection: Connection{TemporalAddress: "temporal:7233", Namespace: "prod", Region: "eu-west-1",
			Temporal: temporal.Config{HostPort: "other:7233", Namespace: "cloud.ns"}},
		Cluster: Cluster{ClusterName: "prod-eks", LeaseNamespace: "joinery-system"},
		Tuning:  Tuning{BatchIdle: 2 * time.Second, BatchMax: time.Minute, NodeClassResync: time.Second},
	}
	got := in.WithDefaults()
	want := map[string][2]string{
		"TemporalAddress":    {got.TemporalAddress, "temporal:7233"},
		"Namespace":          {got.Namespace, "prod"},
		"Temporal.HostPort":  {got.Temporal.HostPort, "other:7233"},
		"Temporal.Namespace": {got.Temporal.Namespace, "cloud.ns"},
		"Region":             {got.Region, "eu-west-1"},
		"ClusterName":        {got.ClusterName, "prod-eks"},
		"StateNamespace":     {got.StateNamespace, "joinery-system"}, // from LeaseNamespace
		"LeaseNamespace":     {got.LeaseNamespace, "joinery-system"},
		"BatchIdle":          {got.BatchIdle.String(), "2s"},
		"BatchMax":           {got.BatchMax.String(), "1m0s"},
		"NodeClassResync":    {got.NodeClassResync.String(), "1s"},
	}
	for field, v := range want {
		if v[0] != v[1] {
			t.Errorf("%s = %q, want %q", field, v[0], v[1])
		}
	}
	if got := (Config{Connection: Connection{TemporalAddress: "temporal:7233", Namespace: "prod"}}).WithDefaults().Temporal; got.HostPort != "temporal:7233" || got.Namespace != "prod" {
		t.Errorf("Temporal = %s/%s, want the connection to follow TemporalAddress and Namespace", got.HostPort, got.Namespace)
	}
}
