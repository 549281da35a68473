package gang

import (
	"strings"
	"testing"
	"time"

	"github.com/joinery/joinery/api/provreq"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestHonoured(t *testing.T) {
	for class, want := range map[string]bool{
		provreq.ClassAtomic: true, provreq.ClassAtomicShort: true, provreq.ClassCheckCapacity: false, "queued-provisioning.gke.io": false, "": false,
	} {
		ok, why := Honoured(class)
		if ok != want || (!ok && !strings.Contains(why, provreq.ClassAtomic)) {
			t.Errorf("%q: %v %q, want %v and a reason naming the honoured class", class, ok, why, want)
		}
	}
}

func TestBackoff(t *testing.T) {
	want := []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second, 300 * time.Second, 300 * time.Second}
	for i, w := range want {
		if got := Backoff(i + 1); got != w {
			t.Errorf("try %d: %s, want %s", i+1, got, w)
		}
	}
}

func TestCheckAllOrNothing(t *testing.T) {
	if v := Check(4, nil); !v.OK {
		t.Errorf("all placed: %+v", v)
	}
	v := Check(4, []Unplaced{
		{Pod: "default/training-0-3", Reason: "no offering has capacity"},
		{Pod: "default/training-0-2", Reason: "no offering has capacity"},
		{Pod: "default/training-0-1", Reason: "exceeds NodePool gpu limits"},
	})
	want := "3 of 4 pods fit nowhere, so no node is launched: default/training-0-1: exceeds NodePool gpu limits; default/training-0-2 and 1 more: no offering has capacity"
	if v.OK || v.Reason != ReasonCapacityNotFound || v.Message != want {
		t.Errorf("got %+v\nwant %q", v, want)
	}
	if v := Check(0, nil); v.OK || v.Reason != ReasonInvalid {
		t.Errorf("no pods: %+v", v)
	}
}

func TestConditions(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 22, 0, 0, 0, time.UTC)
	c := Conditions(nil, OutcomeLaunching, "", "try 1: launching 4 node(s)", 1, t0)
	if len(c) != 2 || c[0].Type != provreq.Accepted || c[0].Status != metav1.ConditionTrue || c[1].Type != provreq.Provisioned ||
		c[1].Status != metav1.ConditionFalse || c[1].Reason != ReasonProvisioning {
		t.Fatalf("launching: %+v", c)
	}
	t1 := t0.Add(time.Minute)
	c = Conditions(c, OutcomeFailed, ReasonInsufficient, "try 1: insufficient capacity", 1, t1)
	if c[1].Reason != ReasonInsufficient || !c[1].LastTransitionTime.Time.Equal(t0) || !c[0].LastTransitionTime.Time.Equal(t0) {
		t.Errorf("failed: %+v (a False that stays False keeps its transition time)", c)
	}
	c = Conditions(c, OutcomeProvisioned, "", "all 4 Ready", 1, t1)
	if c[1].Status != metav1.ConditionTrue || c[1].Reason != ReasonProvisioned || !c[1].LastTransitionTime.Time.Equal(t1) {
		t.Errorf("provisioned: %+v", c[1])
	}
	c = Conditions(c, OutcomeExpired, "", "the booking of 10m0s ended", 1, t1.Add(10*time.Minute))
	pr := &provreq.ProvisioningRequest{Status: provreq.Status{Conditions: c}}
	if !pr.Is(provreq.BookingExpired) || !pr.Is(provreq.Provisioned) || !Done(pr) {
		t.Errorf("expired: %+v", c)
	}
	nh := Conditions(nil, OutcomeNotHonoured, ReasonClassNotHonoured, "not implemented", 2, t0)
	if len(nh) != 1 || nh[0].Status != metav1.ConditionFalse || nh[0].ObservedGeneration != 2 {
		t.Errorf("not honoured: %+v", nh)
	}
}

func TestValidate(t *testing.T) {
	ok := provreq.ProvisioningRequest{Spec: provreq.Spec{ProvisioningClassName: provreq.ClassAtomic,
		PodSets: []provreq.PodSet{{PodTemplateRef: provreq.Reference{Name: "t"}, Count: 4}}}}
	if err := ok.Validate(); err != nil || ok.Pods() != 4 {
		t.Fatalf("valid: %v, %d pods", err, ok.Pods())
	}
	for field, mutate := range map[string]func(*provreq.ProvisioningRequest){
		"spec.provisioningClassName":          func(p *provreq.ProvisioningRequest) { p.Spec.ProvisioningClassName = "" },
		"spec.podSets:":                       func(p *provreq.ProvisioningRequest) { p.Spec.PodSets = nil },
		"spec.podSets[0].podTemplateRef.name": func(p *provreq.ProvisioningRequest) { p.Spec.PodSets[0].PodTemplateRef.Name = "" },
		"spec.podSets[0].count":               func(p *provreq.ProvisioningRequest) { p.Spec.PodSets[0].Count = 0 },
	} {
		p := ok
		p.Spec.PodSets = append([]provreq.PodSet(nil), ok.Spec.PodSets...)
		mutate(&p)
		if err := p.Validate(); err == nil || !strings.HasPrefix(err.Error(), field) {
			t.Errorf("%s: %v", field, err)
		}
	}
}

func TestConsumedRequest(t *testing.T) {
	if got := provreq.ConsumedRequest(map[string]string{provreq.AnnotationConsume: "a"}); got != "a" {
		t.Errorf("v1 key: %q", got)
	}
	if got := provreq.ConsumedRequest(map[string]string{provreq.AnnotationConsumeDeprecated: "b"}); got != "b" {
		t.Errorf("deprecated key: %q", got)
	}
	if got := provreq.ConsumedRequest(nil); got != "" {
		t.Errorf("none: %q", got)
	}
}

func TestValidUntil(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 22, 0, 0, 0, time.UTC)
	p := &provreq.ProvisioningRequest{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(t0)}}
	if u, err := ValidUntil(p); err != nil || !u.IsZero() {
		t.Errorf("unset: %v %v", u, err)
	}
	p.Spec.Parameters = map[string]string{ParamValidUntilSeconds: "600"}
	if u, err := ValidUntil(p); err != nil || !u.Equal(t0.Add(10*time.Minute)) {
		t.Errorf("600: %v %v", u, err)
	}
	p.Spec.Parameters[ParamValidUntilSeconds] = "ten"
	if _, err := ValidUntil(p); err == nil || !strings.Contains(err.Error(), "spec.parameters.ValidUntilSeconds") {
		t.Errorf("ten: %v", err)
	}
}
