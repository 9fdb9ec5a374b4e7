// Package tui is the hammer's live dashboard: a bubbletea model that renders engine Snapshots.
// It never talks to Redis: the engine's snapshots are all it sees, and what a limiter's count
// is called comes from the limiter's description (limiter.Kind.Describe).
package tui
