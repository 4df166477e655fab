package history

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"
)

// freshPostgres makes an empty database on the server at url for one
// test, dropped after it.
func freshPostgres(t *testing.T, url string) *Store {
	t.Helper()
	admin, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	name := fmt.Sprintf("tandem_test_%d", time.Now().UnixNano())
	if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		a, err := sql.Open("pgx", url)
		if err == nil {
			a.Exec("DROP DATABASE " + name + " WITH (FORCE)")
			a.Close()
		}
	})
	// the same server, the new database
	i := strings.LastIndex(url, "/")
	dbURL := url[:i+1] + name
	if q := strings.Index(url[i:], "?"); q >= 0 {
		dbURL += url[i+q:]
	}
	s, err := Open(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
