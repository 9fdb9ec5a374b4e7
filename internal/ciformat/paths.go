package ciformat

import (
	"net/url"
	"path/filepath"
	"strings"
)

// StdinName is what lint calls standard input in its diagnostics.
const StdinName = "<stdin>"

// relPath is name as CI tools expect a file: relative to the working directory wd with forward
// slashes when it lies inside wd (inside true), else its absolute path. Code scanning and
// annotations resolve relative paths against the checkout, where a CI job runs.
func relPath(wd, name string) (path string, inside bool) {
	if name == StdinName {
		return name, false
	}
	abs := name
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(wd, name)
	}
	rel, err := filepath.Rel(wd, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return filepath.ToSlash(abs), false
	}
	return filepath.ToSlash(rel), true
}

// fileURI is name as a SARIF artifact URI: relative to wd when it lies inside (resolved against
// the %SRCROOT% base, which is wd), else an absolute file: URI.
func fileURI(wd, name string) (uri string, relative bool) {
	path, inside := relPath(wd, name)
	if name == StdinName {
		return url.PathEscape(name), false
	}
	if inside {
		return (&url.URL{Path: path}).String(), true
	}
	return (&url.URL{Scheme: "file", Path: path}).String(), false
}

// dirURI is wd as an absolute file: URI ending in a slash, as SARIF requires of a base.
func dirURI(wd string) string {
	path := filepath.ToSlash(wd)
	if !strings.HasSuffix(path, "/") {
		path += "/"
	}
	return (&url.URL{Scheme: "file", Path: path}).String()
}
