package inject

import (
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/exitcode"
)

func TestParse(t *testing.T) {
	evs, err := Parse([]string{"restart@5s, flush-scripts@2s", "pause@3s:500ms"}, false)
	if err != nil {
		t.Fatal(err)
	}
	want := []Event{{Kind: "flush-scripts", At: 2 * time.Second}, {Kind: "pause", At: 3 * time.Second, For: 500 * time.Millisecond}, {Kind: "restart", At: 5 * time.Second}}
	if len(evs) != len(want) {
		t.Fatalf("%+v", evs)
	}
	for i := range want {
		if evs[i] != want[i] {
			t.Errorf("event %d: %+v, want %+v", i, evs[i], want[i])
		}
	}
	for _, bad := range []string{"flush-scripts", "pause@1s", "pause@1s:2m", "kill@1s:1s", "boom@1s", "flush-scripts@-1s"} {
		if _, err := Parse([]string{bad}, false); err == nil {
			t.Errorf("%q accepted", bad)
		} else if c, ok := err.(exitcode.Coder); !ok || c.ExitCode() != exitcode.Usage {
			t.Errorf("%q: %v is not a usage error", bad, err)
		}
	}
	if _, err := Parse([]string{"kill@1s"}, true); err == nil {
		t.Error("kill accepted against the user's server")
	}
}
