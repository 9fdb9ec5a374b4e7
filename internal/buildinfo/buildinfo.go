// Package buildinfo says which limitctl a binary is: the version, commit and date a release
// build sets by ldflags, or what a go install build's module version and VCS stamp say.
package buildinfo

import (
	"fmt"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"time"
)

// Build is what the release build sets (-ldflags -X main.version=... in main).
type Build struct {
	Version string
	Commit  string
	Date    string
}

// Info is the version a binary reports, as limitctl version prints it.
type Info struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	Date      string `json:"date"`
	GoVersion string `json:"go_version"`
}

// String is the version as text: "limitctl 1.2.3", then commit, date and Go version.
func (v Info) String() string {
	return fmt.Sprintf("limitctl %s\ncommit: %s\ndate: %s\ngo: %s\n", v.Version, v.Commit, v.Date, v.GoVersion)
}

// Resolve fills what ldflags did not set from the module build info (go install builds).
func Resolve(b Build) Info {
	info, _ := debug.ReadBuildInfo()
	return From(b, info, runtime.Version())
}

// pseudoVersion matches a Go pseudo-version (v0.0.0-20260101120000-abcdef123456, also after a
// tag: v1.2.4-0.20260101120000-abcdef123456), which names a commit and its time.
var pseudoVersion = regexp.MustCompile(`^v\d+\.\d+\.\d+-(?:.*\.)?(\d{14})-([0-9a-f]{12})(?:\+.*)?$`)

// From is Resolve on given build info: ldflags win; then the VCS stamp a build in
// a checkout carries; then what the module version says (go install module@version has no VCS
// stamp, but a pseudo-version names the commit and its time). The "v" of a module version is
// dropped, so a go install build prints the version as the release build does.
func From(b Build, info *debug.BuildInfo, goVersion string) Info {
	v := Info{Version: b.Version, Commit: b.Commit, Date: b.Date, GoVersion: goVersion}
	if info != nil {
		module := info.Main.Version
		if module == "(devel)" {
			module = ""
		}
		if v.Version == "" && module != "" {
			v.Version = strings.TrimPrefix(module, "v")
		}
		var revision, when string
		modified := false
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				revision = s.Value
			case "vcs.time":
				when = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if m := pseudoVersion.FindStringSubmatch(module); m != nil {
			if revision == "" {
				revision = m[2]
			}
			if t, err := time.Parse("20060102150405", m[1]); err == nil && when == "" {
				when = t.UTC().Format(time.RFC3339)
			}
		}
		if revision != "" && modified {
			revision += "-dirty"
		}
		if v.Commit == "" {
			v.Commit = revision
		}
		if v.Date == "" {
			v.Date = when
		}
	}
	if v.Version == "" {
		v.Version = "dev"
	}
	if v.Commit == "" {
		v.Commit = "unknown"
	}
	if v.Date == "" {
		v.Date = "unknown"
	}
	return v
}
