// Package bench is the hammer's engine: workers that drive limiters concurrently, the witness
// and invariant checkers that prove or disprove overshoot, and HDR latency statistics. It emits
// Snapshots on a channel and returns a Summary; it never prints.
package bench
