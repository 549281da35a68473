package record

import (
	"compress/gzip"
	"io"
	"os"
	"strings"
)

// WriteFile writes r to path, gzipped when the name ends in .gz (a
// recording compresses about thirty times).
func WriteFile(path string, r *Recording) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	var w io.Writer = f
	var zw *gzip.Writer
	if strings.HasSuffix(path, ".gz") {
		zw, _ = gzip.NewWriterLevel(f, gzip.BestCompression)
		w = zw
	}
	if err := r.Write(w); err != nil {
		f.Close()
		return err
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

// ReadFile reads a recording written by WriteFile.
func ReadFile(path string) (*Recording, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rd io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		rd = zr
	}
	return Read(rd)
}
