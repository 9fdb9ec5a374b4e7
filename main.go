// Command limitctl operates and load-tests Redis-backed rate limiters.
package main

import (
	"context"
	"os"

	"github.com/limitctl/limitctl/cmd"
)

// Set by the release build (-ldflags "-X main.version=... -X main.commit=... -X main.date=...").
var (
	version string
	commit  string
	date    string
)

func main() {
	os.Exit(cmd.Execute(context.Background(), cmd.Build{Version: version, Commit: commit, Date: date}, os.Args[1:], cmd.SystemStreams()))
}
