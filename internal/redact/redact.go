// Package redact hides the passwords of URLs in what tandem prints and
// writes: progress lines, errors, results.
package redact

import "regexp"

// urlPassword matches the scheme://user:password@ of a URL.
var urlPassword = regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://[^:/@\s]*:)[^@\s/]+@`)

// Hidden is what a password is replaced with.
const Hidden = "xxx"

// URLs returns s with the password of every URL in it replaced by Hidden;
// the rest of s, the URLs included, stays as written.
func URLs(s string) string { return urlPassword.ReplaceAllString(s, "${1}"+Hidden+"@") }
