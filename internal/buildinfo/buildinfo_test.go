package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestVersionFrom(t *testing.T) {
	vcs := func(kv ...string) []debug.BuildSetting {
		var out []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			out = append(out, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return out
	}
	tests := []struct {
		name                  string
		build                 Build
		info                  *debug.BuildInfo
		version, commit, date string
	}{
		{"ldflags win", Build{Version: "1.2.3", Commit: "abc", Date: "2026-01-01"},
			&debug.BuildInfo{Main: debug.Module{Version: "v9.9.9"}, Settings: vcs("vcs.revision", "fff", "vcs.time", "2020-01-01T00:00:00Z")},
			"1.2.3", "abc", "2026-01-01"},
		{"no build info", Build{}, nil, "dev", "unknown", "unknown"},
		{"go build without VCS", Build{}, &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "dev", "unknown", "unknown"},
		{"go install at a tag", Build{}, &debug.BuildInfo{Main: debug.Module{Version: "v0.1.0"}}, "0.1.0", "unknown", "unknown"},
		{"go install at a commit", Build{},
			&debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20260102030405-abcdef123456"}},
			"0.0.0-20260102030405-abcdef123456", "abcdef123456", "2026-01-02T03:04:05Z"},
		{"go install after a tag", Build{},
			&debug.BuildInfo{Main: debug.Module{Version: "v0.1.1-0.20260102030405-abcdef123456"}},
			"0.1.1-0.20260102030405-abcdef123456", "abcdef123456", "2026-01-02T03:04:05Z"},
		{"go build in a dirty checkout", Build{},
			&debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20260102030405-abcdef123456+dirty"},
				Settings: vcs("vcs.revision", "abcdef1234567890", "vcs.time", "2026-01-02T03:04:05Z", "vcs.modified", "true")},
			"0.0.0-20260102030405-abcdef123456+dirty", "abcdef1234567890-dirty", "2026-01-02T03:04:05Z"},
		{"ldflags version, VCS commit", Build{Version: "1.0.0"},
			&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("vcs.revision", "abc", "vcs.time", "2026-01-01T00:00:00Z")},
			"1.0.0", "abc", "2026-01-01T00:00:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := From(tt.build, tt.info, "go1.99")
			if v.Version != tt.version || v.Commit != tt.commit || v.Date != tt.date || v.GoVersion != "go1.99" {
				t.Fatalf("got %+v, want version %q commit %q date %q", v, tt.version, tt.commit, tt.date)
			}
		})
	}
}
