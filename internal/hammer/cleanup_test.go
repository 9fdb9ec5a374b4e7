package hammer

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/redistest"
)

// A server that refuses UNLINK: the clean-up says how many keys it could not delete, and why.
func TestCleanupReportsFailedUnlinks(t *testing.T) {
	srv := redistest.Start(t, `rename-command UNLINK ""`)
	o := baseOptions()
	o.Limiter, o.Strategies, o.Window = limiter.SlidingWindow, []limiter.Strategy{limiter.Lua}, 10*time.Second
	var log notices
	res, err := Run(context.Background(), o, Deps{Connect: connectTo(t, srv), Timeout: time.Second, Notice: log.add})
	if err != nil {
		t.Fatal(err)
	}
	if res.KeysNotDeleted == 0 || res.KeysDeleted != 0 || len(res.CleanupWarnings) != 1 {
		t.Fatalf("deleted %d, not deleted %d, warnings %q", res.KeysDeleted, res.KeysNotDeleted, res.CleanupWarnings)
	}
	if w := res.CleanupWarnings[0]; !strings.Contains(w, "could not delete") || !strings.Contains(strings.ToLower(w), "unlink") {
		t.Errorf("warning %q", w)
	}
	if !strings.Contains(log.String(), "warning: could not delete") {
		t.Errorf("notices %q lack the warning", log.String())
	}
	if n, _ := srv.Client(t).Exists(context.Background(), "limitctl:{sess1}:lua").Result(); n != 1 {
		t.Errorf("the run's key is gone though UNLINK is refused")
	}
}
