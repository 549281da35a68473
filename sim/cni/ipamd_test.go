package cni

import "testing"

// The worked cases of the CNI's docs/eni-and-ip-target.md and
// docs/prefix-and-ip-target.md.
func TestWant(t *testing.T) {
	t3small := Limits{ENIs: 3, IPv4PerENI: 4}
	m5large := Limits{ENIs: 3, IPv4PerENI: 10}
	p3dn := Limits{ENIs: 15, IPv4PerENI: 50}
	cases := []struct {
		name string
		s    Settings
		l    Limits
		used int
		want Pool
	}{
		{"t3.small idle: one ENI, 3 secondaries", Settings{}, t3small, 0, Pool{1, 4}},
		{"t3.small 5 pods: 3 ENIs, 9 secondaries", Settings{}, t3small, 5, Pool{3, 12}},
		{"t3.small 9 pods: capped at 3 ENIs", Settings{}, t3small, 9, Pool{3, 12}},
		{"m5.large idle draws 10", Settings{}, m5large, 0, Pool{1, 10}},
		{"m5.large first pod: about 20", Settings{}, m5large, 1, Pool{2, 20}},
		{"p3dn idle: 49 secondaries", Settings{}, p3dn, 0, Pool{1, 50}},
		{"p3dn 3 pods: 2 ENIs, 98 secondaries", Settings{}, p3dn, 3, Pool{2, 100}},
		{"WARM_ENI_TARGET=2", Settings{WarmENITarget: 2}, m5large, 0, Pool{2, 20}},
		{"WARM_IP_TARGET=2, 3 pods", Settings{WarmIPTarget: 2}, m5large, 3, Pool{1, 6}},
		{"WARM_IP_TARGET=5, 7 pods: a second ENI", Settings{WarmIPTarget: 5}, m5large, 7, Pool{2, 14}},
		{"MINIMUM_IP_TARGET=12 idle", Settings{MinimumIPTarget: 12, WarmIPTarget: 1}, m5large, 0, Pool{2, 14}},
		{"prefix delegation idle: one /28", Settings{PrefixDelegation: true}, t3small, 0, Pool{1, 17}},
		{"prefix delegation 17 pods: 3 prefixes", Settings{PrefixDelegation: true}, t3small, 17, Pool{1, 49}},
		{"prefix delegation MINIMUM_IP_TARGET=20 rounds to 32", Settings{PrefixDelegation: true, MinimumIPTarget: 20, WarmIPTarget: 1}, t3small, 0, Pool{1, 33}},
		{"prefix delegation spills onto a second ENI", Settings{PrefixDelegation: true}, t3small, 48, Pool{2, 66}},
		{"a type without limits keeps its primary", Settings{}, Limits{}, 3, Pool{1, 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.s.Want(c.l, c.used); got != c.want {
				t.Errorf("Want(%+v, %d) = %+v, want %+v", c.l, c.used, got, c.want)
			}
		})
	}
}
