// Package logging builds Joinery's zap loggers (JSON in production,
// console in development) and adapts them for the Temporal SDK.
package logging

import (
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// New returns a JSON logger at info level, or a console logger when dev.
// level may be "debug", "info", "warn" or "error" (empty: info).
func New(dev bool, level string) (*zap.Logger, error) {
	var cfg zap.Config
	if dev {
		cfg = zap.NewDevelopmentConfig()
		cfg.EncoderConfig.EncodeLevel = zapcore.CapitalColorLevelEncoder
		cfg.DisableStacktrace = true
	} else {
		cfg = zap.NewProductionConfig()
	}
	if level != "" {
		lvl, err := zapcore.ParseLevel(level)
		if err != nil {
			return nil, err
		}
		cfg.Level = zap.NewAtomicLevelAt(lvl)
	} else {
		cfg.Level = zap.NewAtomicLevelAt(zap.InfoLevel)
	}
	return cfg.Build()
}

// Temporal adapts a zap logger to the Temporal SDK's log.Logger
// (key-value pairs become zap fields).
type Temporal struct{ Z *zap.SugaredLogger }

// NewTemporal wraps z for the SDK; the SDK's own lines are tagged component=temporal-sdk.
func NewTemporal(z *zap.Logger) *Temporal {
	return &Temporal{Z: z.WithOptions(zap.AddCallerSkip(1)).With(zap.String("component", "temporal-sdk")).Sugar()}
}

// NopTemporal is an SDK logger that writes nothing: for clients whose
// connection chatter has no reader (a CLI's terminal, setup clients).
func NopTemporal() *Temporal { return NewTemporal(zap.NewNop()) }

func (t *Temporal) Debug(msg string, kv ...interface{}) { t.Z.Debugw(msg, kv...) }
func (t *Temporal) Info(msg string, kv ...interface{})  { t.Z.Infow(msg, kv...) }
func (t *Temporal) Warn(msg string, kv ...interface{})  { t.Z.Warnw(msg, kv...) }
func (t *Temporal) Error(msg string, kv ...interface{}) { t.Z.Errorw(msg, kv...) }

// NewFile returns a JSON logger appending to path.
func NewFile(path, level string) (*zap.Logger, error) {
	cfg := zap.NewProductionConfig()
	cfg.OutputPaths = []string{path}
	cfg.ErrorOutputPaths = []string{path}
	if level != "" {
		lvl, err := zapcore.ParseLevel(level)
		if err != nil {
			return nil, err
		}
		cfg.Level = zap.NewAtomicLevelAt(lvl)
	}
	return cfg.Build()
}
