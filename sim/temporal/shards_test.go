package temporal

import (
	"os"
	"path/filepath"
	"testing"
)

// A database keeps the shard count it was created with: one when it
// predates the .shards file, the recorded count otherwise.
func TestDBShards(t *testing.T) {
	db := filepath.Join(t.TempDir(), "temporal.db")
	if n := dbShards(db); n != 1 {
		t.Fatalf("no .shards file: %d shards, want 1", n)
	}
	if err := os.WriteFile(db+shardsSuffix, []byte("4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if n := dbShards(db); n != 4 {
		t.Fatalf("recorded 4: got %d", n)
	}
	if err := os.WriteFile(db+shardsSuffix, []byte("zero"), 0o644); err != nil {
		t.Fatal(err)
	}
	if n := dbShards(db); n != 1 {
		t.Fatalf("unreadable count: got %d, want 1", n)
	}
}
