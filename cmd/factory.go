package cmd

import (
	"context"
	"os"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/buildinfo"
	"github.com/limitctl/limitctl/internal/redisconn"
	"github.com/limitctl/limitctl/internal/tableprint"
)

// Build describes the binary, set by ldflags in main.
type Build = buildinfo.Build

// Factory carries what commands share: streams, the global flags, the clock, and a Redis
// client opened on first use.
type Factory struct {
	IO     *IOStreams
	Build  Build
	Conn   redisconn.Options
	Output tableprint.Format // -o as given; empty means table on a terminal, tsv otherwise (Format)
	Now    func() time.Time
	Getenv func(string) string

	mu     sync.Mutex
	client redis.UniversalClient
	target redisconn.Target
}

// NewFactory returns a factory on the given streams with the real clock and environment.
func NewFactory(io *IOStreams, build Build) *Factory {
	return &Factory{IO: io, Build: build, Now: time.Now, Getenv: os.Getenv}
}

// Client connects to the target named by the global flags (once) and checks it answers.
func (f *Factory) Client(ctx context.Context) (redis.UniversalClient, redisconn.Target, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.client != nil {
		return f.client, f.target, nil
	}
	c, target, err := redisconn.Open(ctx, f.Conn, f.Getenv)
	if err != nil {
		return nil, redisconn.Target{}, err
	}
	f.client, f.target = c, target
	return c, target, nil
}

// Close releases the client, if one was opened.
func (f *Factory) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.client != nil {
		f.client.Close()
		f.client = nil
	}
}

// secrets lists what must never be printed: the password from any source, URLs included.
func (f *Factory) secrets() []string { return redisconn.Secrets(f.Conn, f.Getenv) }

// Format resolves -o (tableprint.ParseFormat): the flag when given, else table on a terminal
// and tsv when piped. extra are the formats only the running command writes (lint's).
func (f *Factory) Format(extra ...tableprint.Format) (tableprint.Format, error) {
	return tableprint.ParseFormat(f.Output, f.IO.StdoutTTY, extra...)
}
