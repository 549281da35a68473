package kubelet

import (
	"testing"
)

func TestDataVolumeIsTheLaunchedOne(t *testing.T) {
	devs := []BlockDevice{{DeviceName: "/dev/xvda", VolumeSize: 4}, {DeviceName: "/dev/xvdb", VolumeSize: 50}}
	for _, c := range []struct {
		devs   []BlockDevice
		format string
		gib    int64
	}{
		{devs, FormatNodeadm, 4},
		{devs, FormatBottlerocket, 50},
		{devs[1:], FormatNodeadm, 50},
		{nil, FormatNodeadm, 20},
	} {
		if got := dataVolumeBytes(c.devs, c.format); got != c.gib<<30 {
			t.Errorf("%v %s: %d GiB, want %d", c.devs, c.format, got>>30, c.gib)
		}
	}
}
