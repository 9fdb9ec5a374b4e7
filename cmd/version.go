package cmd

import (
	"fmt"
	"runtime"
	"runtime/debug"

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
	v := versionInfo{SchemaVersion: SchemaVersion, Version: b.Version, Commit: b.Commit, Date: b.Date, GoVersion: runtime.Version()}
	if info, ok := debug.ReadBuildInfo(); ok {
		if v.Version == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			v.Version = info.Main.Version
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				if v.Commit == "" {
					v.Commit = s.Value
				}
			case "vcs.time":
				if v.Date == "" {
					v.Date = s.Value
				}
			}
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
		Args:  noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			v := resolveVersion(f.Build)
			if f.Output == "json" {
				return writeJSON(f.IO.Out, v)
			}
			fmt.Fprintf(f.IO.Out, "limitctl %s\ncommit: %s\ndate: %s\ngo: %s\n", v.Version, v.Commit, v.Date, v.GoVersion)
			return nil
		},
	}
}
