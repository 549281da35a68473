package catalog

import "testing"

func TestQuotaBucket(t *testing.T) {
	for it, want := range map[string]string{
		"m5.large": "standard", "c7gn.16xlarge": "standard", "m7i-flex.large": "standard", "r8g.metal-24xl": "standard",
		"t3a.nano": "standard", "i4i.xlarge": "standard", "im4gn.large": "standard", "is4gen.xlarge": "standard",
		"z1d.large": "standard", "d3en.xlarge": "standard", "hs1.8xlarge": "standard", "a1.medium": "standard",
		"g5.xlarge": "g", "g5g.xlarge": "g", "gr6.4xlarge": "g", "vt1.3xlarge": "g",
		"p4d.24xlarge": "p", "p5e.48xlarge": "p", "inf2.xlarge": "inf", "trn1.32xlarge": "trn", "dl1.24xlarge": "dl",
		"f1.2xlarge": "f", "x2iedn.xlarge": "x", "x8g.large": "x", "hpc7g.4xlarge": "hpc",
		"u-6tb1.56xlarge": "u", "u7i-12tb.224xlarge": "u", "mac2.metal": "mac",
	} {
		if got := QuotaBucket(it); got != want {
			t.Errorf("QuotaBucket(%s) = %q, want %q", it, got, want)
		}
	}
	// Every type of the embedded catalog has a bucket.
	for _, it := range MustDefault().Types {
		if QuotaBucket(it.Name) == "" {
			t.Errorf("%s: no quota bucket", it.Name)
		}
	}
}
