package world

import (
	"context"
	"fmt"
)

// RestartTemporal stops the embedded Temporal server and starts it again on
// the same ports from the same store (SQLite file or PostgreSQL databases); running workflows resume from
// their persisted histories. Kubernetes, EC2 and SQS keep running.
func (w *World) RestartTemporal(ctx context.Context) error {
	if w.Temporal == nil {
		return fmt.Errorf("temporal is not running")
	}
	s, err := w.Temporal.Restart(ctx)
	if err != nil {
		return fmt.Errorf("restart temporal: %w", err)
	}
	w.Temporal = s
	return nil
}
