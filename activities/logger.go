package activities

import (
	"context"

	"go.temporal.io/sdk/activity"
	"go.uber.org/zap"
)

// activityLogger is log with the workflow id and activity name of ctx,
// when ctx is an activity's (every log line about a saga step names its
// workflow).
func activityLogger(ctx context.Context, log *zap.Logger) *zap.Logger {
	if !activity.IsActivity(ctx) {
		return log
	}
	info := activity.GetInfo(ctx)
	return log.With(zap.String("workflow", info.WorkflowExecution.ID), zap.String("activity", info.ActivityType.Name))
}
