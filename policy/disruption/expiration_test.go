package disruption

import (
	"strings"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestExpiryOfAClaim(t *testing.T) {
	cases := []struct {
		expireAfter string
		at          time.Time
		never       bool
		err         string
	}{
		{"", t0.Add(720 * time.Hour), false, ""}, // its pool is gone: Karpenter v1's default
		{"720h", t0.Add(720 * time.Hour), false, ""},
		{"2m", t0.Add(2 * time.Minute), false, ""},
		{"1h30m", t0.Add(90 * time.Minute), false, ""},
		{"0s", t0, false, ""},
		{"Never", time.Time{}, true, ""},
		{"2d", time.Time{}, true, `nodeclaim c: spec.expireAfter "2d": must be a duration`},
		{"-5m", time.Time{}, true, `nodeclaim c: spec.expireAfter "-5m": must be a duration`},
	}
	for _, c := range cases {
		nc := &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "c", CreationTimestamp: metav1.NewTime(t0)}}
		nc.Spec.ExpireAfter = c.expireAfter
		e, err := ExpiryOf(nc, nil)
		if c.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), c.err) || !e.Never {
				t.Errorf("%q: %+v, %v; want never and error %q", c.expireAfter, e, err, c.err)
			}
			continue
		}
		if err != nil || e.Never != c.never || !e.At.Equal(c.at) {
			t.Errorf("%q: %+v, %v; want at %s never %v", c.expireAfter, e, err, c.at, c.never)
		}
		if c.never {
			if e.Expired(t0.Add(100000 * time.Hour)) {
				t.Errorf("%q expired", c.expireAfter)
			}
			continue
		}
		if e.Expired(c.at.Add(-time.Nanosecond)) || !e.Expired(c.at) || !e.Expired(c.at.Add(time.Hour)) {
			t.Errorf("%q: expired just before %s, or not at or after it", c.expireAfter, c.at)
		}
	}
}

// A NodeClaim without expireAfter (launched before Joinery copied it)
// follows its NodePool's, 720h when the pool leaves it unset; its own
// value wins over the pool's.
func TestExpiryOfAClaimWithoutItsOwnFollowsItsPool(t *testing.T) {
	pool := testPool("general-purpose")
	pool.SetDefaults()
	nc := &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "c", CreationTimestamp: metav1.NewTime(t0)}}
	if e, err := ExpiryOf(nc, pool); err != nil || !e.At.Equal(t0.Add(720*time.Hour)) {
		t.Errorf("pool defaulted: %+v %v, want 720h", e, err)
	}
	pool.Spec.Template.Spec.ExpireAfter = "Never"
	if e, err := ExpiryOf(nc, pool); err != nil || !e.Never {
		t.Errorf("pool Never: %+v %v", e, err)
	}
	nc.Spec.ExpireAfter = "2m"
	if e, err := ExpiryOf(nc, pool); err != nil || !e.At.Equal(t0.Add(2*time.Minute)) {
		t.Errorf("own 2m, pool Never: %+v %v", e, err)
	}
}

// An unset NodePool expireAfter defaults to 720h, which the claims launched
// from it carry; Never is kept; the defaulting does not change the hash.
func TestNodePoolExpireAfterDefaults(t *testing.T) {
	np := hashPool()
	before := NodePoolHash(np)
	np.SetDefaults()
	if np.Spec.Template.Spec.ExpireAfter != "720h" || NodePoolHash(np) != before {
		t.Errorf("defaulted expireAfter %q, hash changed %v", np.Spec.Template.Spec.ExpireAfter, NodePoolHash(np) != before)
	}
	np.Spec.Template.Spec.ExpireAfter = "Never"
	np.SetDefaults()
	if np.Spec.Template.Spec.ExpireAfter != "Never" {
		t.Errorf("Never defaulted to %q", np.Spec.Template.Spec.ExpireAfter)
	}
}
