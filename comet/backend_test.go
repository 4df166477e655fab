package comet

import (
	"os"
	"path/filepath"
	"testing"
)

func TestBackend(t *testing.T) {
	home := t.TempDir()
	if b, err := Backend(home, nil); err != nil || b != DefaultBackend {
		t.Errorf("no config: %q, %v; want %s", b, err, DefaultBackend)
	}
	os.MkdirAll(filepath.Join(home, "config"), 0o755)
	cfg := filepath.Join(home, "config", "config.toml")
	os.WriteFile(cfg, []byte("moniker = \"n\"\ndb_backend = \"pebbledb\"\n\n[rpc]\nladdr = \"tcp://127.0.0.1:26657\"\n"), 0o644)
	if b, err := Backend(home, nil); err != nil || b != "pebbledb" {
		t.Errorf("config names pebbledb: %q, %v", b, err)
	}
	if b, _ := Backend(home, map[string]string{"CMT_DB_BACKEND": "badgerdb"}); b != "badgerdb" {
		t.Errorf("the environment overrides the config: %q", b)
	}
	os.WriteFile(cfg, []byte("db_backend = [unclosed\n"), 0o644)
	if _, err := Backend(home, nil); err == nil {
		t.Error("a malformed config read without an error")
	}
}
