package runner

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/tandem-bench/tandem/internal/redact"
	"github.com/tandem-bench/tandem/study"
	"github.com/tandem-bench/tandem/target"
)

// expander resolves a target's placeholders, choosing its ports once.
type expander struct {
	self, workdir, studyDir string
	ports                   map[string]int
	// services are the running services' endpoints.
	services map[string]map[string]string
	// secrets are the values expanded from ${env.*} and the passwords of
	// the URLs expanded: never written or printed (redact).
	secrets []string
}

// redact hides every secret the expander has expanded, and any URL
// password, in s: for what tandem writes and prints.
func (e *expander) redact(s string) string {
	for _, v := range e.secrets {
		s = strings.ReplaceAll(s, v, redact.Hidden)
	}
	return redact.URLs(s)
}

// shown is how an argument expanded from tmpl is recorded: as written
// where it used ${env.*} (so it is reproducible without the value), else
// expanded with any URL password hidden.
func (e *expander) shown(tmpl []string, expanded []string) []string {
	out := make([]string, len(expanded))
	for i, v := range expanded {
		if strings.Contains(tmpl[i], "${env.") {
			out[i] = tmpl[i]
		} else {
			out[i] = e.redact(v)
		}
	}
	return out
}

// secret notes an expanded value to keep out of what tandem writes.
func (e *expander) secret(v string) {
	if len(v) >= minSecret && !slices.Contains(e.secrets, v) {
		e.secrets = append(e.secrets, v)
	}
}

// newExpander is an expander with its own ports and scratch dir.
func (r *runner) newExpander(workdir string) *expander {
	dir := "."
	if r.s.File != "" {
		dir = filepath.Dir(r.s.File)
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return &expander{self: r.o.Self, workdir: workdir, studyDir: dir, ports: map[string]int{}, services: r.serviceEndpoints}
}

func (e *expander) expand(s string) (string, error) {
	var lookupErr error
	out, err := study.Expand(s, func(name string) (string, bool) {
		ns, rest, _ := strings.Cut(name, ".")
		switch {
		case name == "tandem":
			return e.self, e.self == ""
		case name == "workdir":
			return e.workdir, false
		case name == "studydir":
			return e.studyDir, false
		case ns == "services":
			svc, ep, _ := strings.Cut(rest, ".")
			v, ok := e.services[svc][ep]
			if !ok && lookupErr == nil {
				lookupErr = fmt.Errorf("service %s has no running endpoint %s", svc, ep)
			}
			if u, err := url.Parse(v); err == nil && u.User != nil {
				if pw, ok := u.User.Password(); ok {
					e.secret(pw)
				}
			}
			return v, false
		case ns == "port":
			p, ok := e.ports[rest]
			if !ok {
				var err error
				if p, err = target.FreePort(); err != nil {
					lookupErr = err
					return "", false
				}
				e.ports[rest] = p
			}
			return strconv.Itoa(p), false
		case ns == "env":
			v, ok := os.LookupEnv(rest)
			if !ok {
				lookupErr = fmt.Errorf("environment variable %s is not set", rest)
			}
			e.secret(v)
			return v, false
		}
		return "", true
	})
	if lookupErr != nil {
		return "", lookupErr
	}
	return out, err
}

func (e *expander) all(in []string) ([]string, error) {
	out := make([]string, len(in))
	for i, s := range in {
		var err error
		if out[i], err = e.expand(s); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// minSecret is the shortest value redact hides wherever it appears: a
// shorter one (a port, a flag such as 1) would mangle every message it
// occurs in, and arguments that use ${env.*} are recorded as written
// anyway (shown).
const minSecret = 6
