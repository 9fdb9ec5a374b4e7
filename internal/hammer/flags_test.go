package hammer

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/limitctl/limitctl/internal/contract"
	"github.com/limitctl/limitctl/internal/limiterfile"
)

// The default stale-after is never finer than the script's clock: two of its units when the
// contract tells it the time or its stale time only in whole seconds or by a window's index, so
// a request held for the default hold is never dropped by rounding. A stale-after given is used
// as given.
func TestDefaultStaleAfterIsTwoUnitsOfAWholeSecondClock(t *testing.T) {
	apisix := Flags{Limiter: limiterfile.Limiter{Script: contract.Spec{File: "../../testdata/limiters/concurrency_deadlines_whole_seconds.lua",
		Keys: "{key}", Args: "{limit} {stale_after_s} {window_index} {member}", Allowed: "reply[1] == 1",
		Release: "ZREM {key} {member}"}}}
	for _, c := range []struct {
		name   string
		fl     Flags
		given  []string
		window time.Duration
		want   time.Duration
	}{
		{"shipped contract", Flags{}, nil, time.Second, time.Second},
		{"a window index at 1s", apisix, nil, time.Second, 2 * time.Second},
		{"a window index at 3s", apisix, nil, 3 * time.Second, 6 * time.Second},
		{"a window index at 250ms, the stale time in seconds", apisix, nil, 250 * time.Millisecond, 2 * time.Second},
		{"given explicitly", withStale(apisix, time.Second), []string{"stale-after"}, time.Second, time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			fl := c.fl
			fl.Kind, fl.Workers, fl.Limit, fl.Duration, fl.Window, fl.Hold = "concurrency", 64, 20, 5*time.Second, c.window, 2*time.Millisecond
			fl.Witness, fl.OnError, fl.Embedded, fl.Prefix, fl.Strategies, fl.Keys = "local", "closed", "auto", "limitctl", []string{"lua"}, 1
			given := map[string]bool{}
			for _, g := range c.given {
				given[g] = true
			}
			fl.Given = func(name string) bool { return given[name] }
			o, err := fl.Resolve()
			if err != nil {
				t.Fatal(err)
			}
			if o.StaleAfter != c.want {
				t.Errorf("stale-after %s, want %s", o.StaleAfter, c.want)
			}
		})
	}
}

func withStale(fl Flags, d time.Duration) Flags {
	fl.StaleAfter = d
	return fl
}

// The script is read once: the text whose TIME calls choose the clock is the text sent. The
// kernel tells every opening of the file (inotify, with its closing between two, so that no two
// events in a row are alike and coalesced).
func TestTheScriptIsReadOnce(t *testing.T) {
	script := filepath.Join(t.TempDir(), "script.lua")
	os.WriteFile(script, []byte("local t = redis.call('TIME')\nreturn {1, 0}\n"), 0o644)
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		t.Skip("no inotify here:", err)
	}
	defer syscall.Close(fd)
	if _, err := syscall.InotifyAddWatch(fd, script, syscall.IN_OPEN|syscall.IN_CLOSE_NOWRITE); err != nil {
		t.Fatal(err)
	}
	fl := Flags{Limiter: limiterfile.Limiter{Kind: "fixed-window", Limit: 20, Window: time.Second,
		Script: contract.Spec{File: script, Keys: "{key}", Args: "{limit} {window_ms}"}},
		Workers: 4, Duration: time.Second, Keys: 1, Witness: "local", OnError: "closed", Embedded: "auto", Prefix: "limitctl"}
	o, err := fl.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	opened := 0
	buf := make([]byte, 4096)
	n, _ := syscall.Read(fd, buf) // the events are queued before the read that caused them returns
	for off := 0; off+syscall.SizeofInotifyEvent <= n; {
		ev := (*syscall.InotifyEvent)(unsafe.Pointer(&buf[off]))
		if ev.Mask&syscall.IN_OPEN != 0 {
			opened++
		}
		off += syscall.SizeofInotifyEvent + int(ev.Len)
	}
	if opened != 1 {
		t.Errorf("the script was opened %d times, want once", opened)
	}
	if o.Contract.Clock != contract.VirtualClock || !strings.Contains(o.ScriptSource, "TIME") {
		t.Errorf("clock %s, source %q: want virtual, chosen by the text that is sent", o.Contract.Clock, o.ScriptSource)
	}
}
