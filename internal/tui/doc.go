// Package tui is the hammer's live dashboard: a bubbletea model that renders engine Snapshots
// and knows nothing about Redis.
package tui
