// Package tui is the hammer's live dashboard: a bubbletea model that renders engine Snapshots.
// It never talks to Redis: the engine's snapshots are all it sees, and what a limiter is named
// and its count called come from the caller in Options.
package tui
