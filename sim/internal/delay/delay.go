// Package delay reads the local world's delay options, which all say the
// same: 0 is the default, negative is off.
package delay

import "time"

// OrDefault is d, def when d is 0, and 0 (off) when d is negative.
func OrDefault(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0
	}
	return d
}
