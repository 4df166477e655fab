//go:build unix

package target

import (
	"os"
	"path/filepath"
	"testing"
)

// A preallocated-looking (sparse) file counts by the blocks it holds, as du
// shows, with its size as the apparent use; a file linked twice is counted
// once in blocks (it used to count 64 MiB for a 4 KiB-block file).
func TestDiskUsageCountsBlocks(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "wal"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(64 << 20); err != nil { // a hole, as a preallocated WAL segment
		t.Fatal(err)
	}
	if _, err := f.WriteAt(make([]byte, 4096), 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.WriteFile(filepath.Join(dir, "data"), make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(dir, "data"), filepath.Join(dir, "data.link")); err != nil {
		t.Fatal(err)
	}
	d, err := DiskUsage(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(64<<20 + 2<<20); d.Apparent != want {
		t.Errorf("apparent %d, want %d (every file's size)", d.Apparent, want)
	}
	// data's 1 MiB once, wal's written 4 KiB, and room for the file
	// systems' block sizes and metadata blocks: far from 66 MiB
	if d.Allocated < 1<<20 || d.Allocated > 4<<20 {
		t.Errorf("allocated %d; want about 1 MiB (the blocks held: data once, wal's one written block)", d.Allocated)
	}
}
