package study

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// Expand replaces every ${NAME} in s with lookup(NAME). lookup reports
// whether NAME is unknown; "$${" stands for a literal "${". An unclosed
// placeholder, an empty name or an unknown one is an error.
func Expand(s string, lookup func(name string) (value string, unknown bool)) (string, error) {
	return expand(s, lookup, false)
}

// expand is Expand; keep leaves every "$${" as it is, for a string that is
// to be expanded again (see Bind).
func expand(s string, lookup func(name string) (value string, unknown bool), keep bool) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		if i > 0 && s[i-1] == '$' {
			if keep {
				b.WriteString(s[:i+2])
			} else {
				b.WriteString(s[:i-1] + "${")
			}
			s = s[i+2:]
			continue
		}
		b.WriteString(s[:i])
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			return "", fmt.Errorf("unclosed placeholder in %q", s)
		}
		name := s[i+2 : i+end]
		if name == "" {
			return "", errors.New("empty placeholder ${}")
		}
		val, unknown := lookup(name)
		if unknown {
			return "", fmt.Errorf("unknown placeholder ${%s}", name)
		}
		b.WriteString(val)
		s = s[i+end+1:]
	}
}

// ExpandEnv replaces every ${env.NAME} in s with the environment
// variable's value and leaves other placeholders as they are; an unset
// variable is an error.
func ExpandEnv(s string) (string, error) {
	var missing string
	out, err := Expand(s, func(name string) (string, bool) {
		if env, ok := strings.CutPrefix(name, "env."); ok {
			v, set := os.LookupEnv(env)
			if !set && missing == "" {
				missing = env
			}
			return v, false
		}
		return "${" + name + "}", false
	})
	if err != nil {
		return "", err
	}
	if missing != "" {
		return "", fmt.Errorf("environment variable %s is not set", missing)
	}
	return out, nil
}

// Placeholders lists the names of the placeholders in s, in order.
func Placeholders(s string) []string {
	var names []string
	Expand(s, func(name string) (string, bool) {
		names = append(names, name)
		return "", false
	})
	return names
}

// escape makes s literal where placeholders are expanded: each "${" is
// written "$${".
func escape(s string) string { return strings.ReplaceAll(s, "${", "$${") }

// envName is the variable a placeholder's name reads, if it is env.NAME.
func envName(placeholder string) (string, bool) {
	return strings.CutPrefix(placeholder, "env.")
}
