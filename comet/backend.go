package comet

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pelletier/go-toml/v2"
)

// DefaultBackend is the database CometBFT uses when its config names none.
const DefaultBackend = "goleveldb"

// Backend is the database a CometBFT node with this home stores its
// blocks in: CMT_DB_BACKEND from env (the node's environment) if set,
// else db_backend in home/config/config.toml, else DefaultBackend. Its
// `report` tool must be given the same (--database-type).
func Backend(home string, env map[string]string) (string, error) {
	if b := env["CMT_DB_BACKEND"]; b != "" {
		return b, nil
	}
	path := filepath.Join(home, "config", "config.toml")
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return DefaultBackend, nil
	}
	if err != nil {
		return "", fmt.Errorf("cometbft backend: %w", err)
	}
	var cfg struct {
		DBBackend string `toml:"db_backend"`
	}
	if err := toml.Unmarshal(data, &cfg); err != nil {
		return "", fmt.Errorf("cometbft backend: %s: %w", path, err)
	}
	if cfg.DBBackend == "" {
		return DefaultBackend, nil
	}
	return cfg.DBBackend, nil
}
