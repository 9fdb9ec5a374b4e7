package limitapp

import (
	"fmt"
	"os"
	"os/signal"
	"testing"
	"time"
)

// TestServe serves the routes until interrupted, for trying hammer --http by hand (and in tmux):
//
//	LIMITAPP_SERVE=1 LIMITAPP_LIMIT=20 LIMITAPP_WINDOW=1s LIMITAPP_HOLD=20ms go test -run TestServe -v ./internal/limitapp/
//
// It prints each route's URL and --http-keys pattern, then the per-process pair's front.
func TestServe(t *testing.T) {
	if os.Getenv("LIMITAPP_SERVE") == "" {
		t.Skip("serves until interrupted: LIMITAPP_SERVE=1")
	}
	cfg := Config{Limit: 20, Window: time.Second, Hold: 20 * time.Millisecond}
	fmt.Sscan(os.Getenv("LIMITAPP_LIMIT"), &cfg.Limit)
	for name, d := range map[string]*time.Duration{"LIMITAPP_WINDOW": &cfg.Window, "LIMITAPP_HOLD": &cfg.Hold} {
		if v, err := time.ParseDuration(os.Getenv(name)); err == nil {
			*d = v
		}
	}
	app := Start(t, cfg)
	fmt.Printf("redis %s\n", app.Redis.Options().Addr)
	for _, r := range Routes() {
		fmt.Printf("%-26s %-15s %-11s %s  %s\n", r.Pattern, r.Kind, r.Want, app.URL(r.Pattern), app.KeyPattern(r.Pattern))
	}
	fmt.Printf("%-26s %-15s %-11s %s\n", "per-process", "fixed-window", Overshoot, StartPerProcess(t, cfg).URL())
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt)
	<-stop
}
