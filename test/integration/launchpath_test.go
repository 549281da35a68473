//go:build integration

package integration

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/controller"
	"github.com/joinery/joinery/workflows"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// TestLaunchPathFromNodeClassStatus walks the real launch path: a class
// that cannot resolve its security groups launches nothing and says why,
// on itself and on the pending pods; once fixed, nodes boot from a
// generated launch template whose user data alone carries the pool's label,
// taint and maxPods; a newer EKS image release drifts them and they are
// replaced, one at a time as the budget says.
func TestLaunchPathFromNodeClassStatus(t *testing.T) {
	parallel(t)
	e := startEnvWith(t, true, func(c *controller.Config) {
		c.NodeClassResync = 2 * time.Second
		c.DisruptionPassInterval, c.DisruptionValidationDelay = 2*time.Second, 2*time.Second
	})
	dc := dynamicClient(t, e)
	e.applyYAML(t, readTestdata(t, "data-pool.yaml"))

	// 1. Not Ready, with the reason; the pods hear why; nothing launched.
	var cls *apiv1.EC2NodeClass
	waitFor(t, time.Minute, "EC2NodeClass data SecurityGroupsReady=False", func() bool {
		cls = getNodeClass(t, e, dc, "data")
		c := apiv1.FindCondition(cls.Status.Conditions, apiv1.ConditionSecurityGroupsReady)
		return c != nil && c.Status == metav1.ConditionFalse && c.Reason == "SecurityGroupsNotFound"
	})
	if ready := apiv1.FindCondition(cls.Status.Conditions, apiv1.ConditionReady); ready.Status != metav1.ConditionFalse {
		t.Fatalf("Ready = %+v", ready)
	}
	waitFor(t, time.Minute, "FailedScheduling naming SecurityGroupsReady on an etl pod", func() bool {
		evs, err := e.kc.CoreV1().Events("default").List(e.ctx, metav1.ListOptions{FieldSelector: "reason=FailedScheduling"})
		if err != nil {
			return false
		}
		for _, ev := range evs.Items {
			if strings.HasPrefix(ev.InvolvedObject.Name, "etl-") && ev.Source.Component == "joinery" &&
				strings.Contains(ev.Message, "SecurityGroupsReady=False") {
				return true
			}
		}
		return false
	})
	if n := len(e.w.EC2.Instances()); n != 0 {
		t.Fatalf("%d instances launched from a class that is not Ready", n)
	}

	// 2. Fix the selector: the pods get nodes booted from user data.
	patch := []byte(`{"spec":{"securityGroupSelectorTerms":[{"tags":{"karpenter.sh/discovery":"production-eks"}}]}}`)
	if _, err := dc.Resource(apiv1.EC2NodeClassGVR).Patch(e.ctx, "data", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 3*time.Minute, "2 etl pods Running", func() bool { n, _ := e.readyPods("app=etl"); return n == 2 })
	cls = getNodeClass(t, e, dc, "data")
	if len(cls.Status.Subnets) != 3 || len(cls.Status.SecurityGroups) != 1 || len(cls.Status.AMIs) < 4 || cls.Status.InstanceProfile == "" {
		t.Fatalf("status = %+v", cls.Status)
	}
	firstImage := checkDataNodes(t, e, cls, "")

	// 3. A newer EKS release: the nodes drift and are replaced.
	if _, err := e.w.EC2.PublishImageRelease("v20261201"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, "a data NodeClaim Drifted=True (AMIDrift)", func() bool {
		for _, nc := range e.nodeClaimObjs(t, dc) {
			if d := apiv1.FindCondition(nc.Status.Conditions, apiv1.ConditionDrifted); nc.Labels[apiv1.LabelNodePool] == "data" &&
				d != nil && d.Status == metav1.ConditionTrue && d.Reason == "AMIDrift" {
				return true
			}
		}
		return false
	})
	waitFor(t, 4*time.Minute, "every data node on the new image", func() bool {
		n, _ := e.readyPods("app=etl")
		if n != 2 {
			return false
		}
		for _, i := range e.w.EC2.Instances() {
			if i.Tags[apiv1.TagNodePool] == "data" && i.State == "running" && i.ImageID == firstImage {
				return false
			}
		}
		return true
	})
	checkDataNodes(t, e, getNodeClass(t, e, dc, "data"), firstImage)
}

// checkDataNodes checks each running data instance and its Node; it
// returns their image (which must differ from notImage).
func checkDataNodes(t *testing.T, e *env, cls *apiv1.EC2NodeClass, notImage string) string {
	t.Helper()
	image := ""
	for _, i := range e.w.EC2.Instances() {
		if i.Tags[apiv1.TagNodePool] != "data" || i.State != "running" {
			continue
		}
		if !strings.HasPrefix(i.LaunchTemplateName, "joinery/joinery-it/") {
			t.Errorf("instance %s launched from template %q, not a generated one", i.ID, i.LaunchTemplateName)
		}
		img, ok := e.w.EC2.Image(i.ImageID)
		if !ok || img.Architecture != "x86_64" || img.Variant != "standard" || i.ImageID == notImage {
			t.Errorf("instance %s (%s) booted image %+v", i.ID, i.InstanceType, img)
		}
		if !contains(cls.Status.AMIs, i.ImageID) {
			t.Errorf("instance %s image %s is not in status.amis", i.ID, i.ImageID)
		}
		if i.IAMInstanceProfile != cls.Status.InstanceProfile {
			t.Errorf("instance %s profile %q, want %q", i.ID, i.IAMInstanceProfile, cls.Status.InstanceProfile)
		}
		ud, _ := base64.StdEncoding.DecodeString(i.UserData)
		if !strings.Contains(string(ud), "team=data") || !strings.Contains(string(ud), "key: dedicated") || !strings.Contains(string(ud), "maxPods: 20") {
			t.Errorf("instance %s user data lacks the pool's label, taint or maxPods:\n%s", i.ID, ud)
		}
		image = i.ImageID
		n, err := e.kc.CoreV1().Nodes().Get(e.ctx, i.PrivateDNSName, metav1.GetOptions{})
		if err != nil {
			t.Errorf("node of %s: %v", i.ID, err)
			continue
		}
		if n.Labels["team"] != "data" || !hasTaint(n.Spec.Taints, "dedicated", "data") {
			t.Errorf("node %s labels %v taints %v", n.Name, n.Labels, n.Spec.Taints)
		}
		if pods := n.Status.Allocatable[corev1.ResourcePods]; pods.Value() != 20 {
			t.Errorf("node %s allocatable pods %s, want 20 (spec.kubelet.maxPods)", n.Name, pods.String())
		}
	}
	if image == "" {
		t.Fatal("no running data instance")
	}
	return image
}

// TestWrongCABundleNeverJoins: user data naming another CA makes the
// kubelet refuse to join; the registration TTL terminates the instance and
// the NodeClaim's saga says why.
func TestWrongCABundleNeverJoins(t *testing.T) {
	parallel(t)
	e := startEnvWith(t, true, func(c *controller.Config) {
		c.ClusterCABundle = otherCA(t)
		c.RegistrationTTL = 20 * time.Second
	})
	e.applyYAML(t, bytes.Replace(readTestdata(t, "data-pool.yaml"), []byte("no-such-cluster"), []byte("production-eks"), 1))
	launched := e.waitLaunched(t)
	id := launched[0].ID
	waitFor(t, 2*time.Minute, "the never-joined instance terminated", func() bool {
		i, ok := e.w.EC2.Instance(id)
		return ok && (i.State == "terminated" || i.State == "shutting-down")
	})
	nodes, err := e.kc.CoreV1().Nodes().List(e.ctx, launchedNodes)
	if err != nil || len(nodes.Items) != 0 {
		t.Fatalf("nodes joined with a foreign CA: %v (%v)", nodes, err)
	}
	claim := launched[0].Tags[apiv1.TagNodeClaim]
	run := e.tc.GetWorkflow(e.ctx, "nodeclaim/"+claim, "")
	var st workflows.NodeClaimStatus
	err = run.Get(e.ctx, &st)
	if err == nil || !strings.Contains(err.Error(), "not Ready within registration TTL") {
		t.Fatalf("nodeclaim/%s ended with %v, want the registration TTL failure", claim, err)
	}
}

func otherCA(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "not-the-cluster"},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

func dynamicClient(t *testing.T, e *env) dynamic.Interface {
	t.Helper()
	dc, err := dynamic.NewForConfig(e.w.Kube.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	return dc
}

func getNodeClass(t *testing.T, e *env, dc dynamic.Interface, name string) *apiv1.EC2NodeClass {
	t.Helper()
	u, err := dc.Resource(apiv1.EC2NodeClassGVR).Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cls := &apiv1.EC2NodeClass{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, cls); err != nil {
		t.Fatal(err)
	}
	return cls
}

func (e *env) nodeClaimObjs(t *testing.T, dc dynamic.Interface) []*apiv1.NodeClaim {
	t.Helper()
	ctx, cancel := context.WithTimeout(e.ctx, 10*time.Second)
	defer cancel()
	l, err := dc.Resource(apiv1.NodeClaimGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil
	}
	var out []*apiv1.NodeClaim
	for i := range l.Items {
		nc := &apiv1.NodeClaim{}
		if runtime.DefaultUnstructuredConverter.FromUnstructured(l.Items[i].Object, nc) == nil {
			out = append(out, nc)
		}
	}
	return out
}

func contains(amis []apiv1.AMIStatus, id string) bool {
	for _, a := range amis {
		if a.ID == id {
			return true
		}
	}
	return false
}

func hasTaint(ts []corev1.Taint, key, value string) bool {
	for _, t := range ts {
		if t.Key == key && t.Value == value {
			return true
		}
	}
	return false
}
