package cmd

import (
	"fmt"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

type versionInfo struct {
	SchemaVersion int    `json:"schema_version"`
	Version       string `json:"version"`
	Commit        string `json:"commit"`
	Date          string `json:"date"`
	GoVersion     string `json:"go_version"`
}

// resolveVersion fills what ldflags did not set from the module build info (go install builds).
func resolveVersion(b Build) versionInfo {
	info, _ := debug.ReadBuildInfo()
	return versionFrom(b, info, runtime.Version())
}

// pseudoVersion matches a Go pseudo-version (v0.0.0-20260101120000-abcdef123456, also after a
// tag: v1.2.4-0.20260101120000-abcdef123456), which names a commit and its time.
var pseudoVersion = regexp.MustCompile(`^v\d+\.\d+\.\d+-(?:.*\.)?(\d{14})-([0-9a-f]{12})(?:\+.*)?$`)

// versionFrom is resolveVersion on given build info: ldflags win; then the VCS stamp a build in
// a checkout carries; then what the module version says (go install module@version has no VCS
// stamp, but a pseudo-version names the commit and its time). The "v" of a module version is
// dropped, so a go install build prints the version as the release build does.
func versionFrom(b Build, info *debug.BuildInfo, goVersion string) versionInfo {
	v := versionInfo{SchemaVersion: SchemaVersion, Version: b.Version, Commit: b.Commit, Date: b.Date, GoVersion: goVersion}
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

func newVersionCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit, build date and Go version",
		Long: `Prints the version, the commit and its date, and the Go version the binary was built with.
A release build carries them from the build flags; a go install build reads them from the
module version and the build's VCS stamp, and says unknown for what neither holds.`,
		Example: `  limitctl version
  limitctl version -o json`,
		Args:              noArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(c *cobra.Command, args []string) error {
			v := resolveVersion(f.Build)
			if f.Output == "json" {
				return writeJSON(f.IO.Out, v)
			}
			_, err := fmt.Fprintf(f.IO.Out, "limitctl %s\ncommit: %s\ndate: %s\ngo: %s\n", v.Version, v.Commit, v.Date, v.GoVersion)
			return err
		},
	}
}
