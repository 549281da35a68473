package world

import (
	"testing"
	"time"
)

func TestBootPhasesDefaults(t *testing.T) {
	for _, tc := range []struct {
		in        BootPhases
		bootDelay time.Duration
		want      BootPhases
	}{
		{BootPhases{}, 0, BootPhases{Pending: 0, Register: DefaultBootRegister, NetworkReady: DefaultBootNetworkReady}},
		{BootPhases{}, 3 * time.Second, BootPhases{Pending: 3 * time.Second, Register: DefaultBootRegister, NetworkReady: DefaultBootNetworkReady}},
		{BootPhases{Pending: 5 * time.Second, Register: -1, NetworkReady: 8 * time.Second}, 3 * time.Second,
			BootPhases{Pending: 5 * time.Second, Register: 0, NetworkReady: 8 * time.Second}},
	} {
		if got := tc.in.withDefaults(tc.bootDelay); got != tc.want {
			t.Errorf("%+v with BootDelay %s: %+v, want %+v", tc.in, tc.bootDelay, got, tc.want)
		}
	}
}
