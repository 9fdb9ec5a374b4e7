// Package bench is the hammer's engine: workers that drive limiters concurrently, paced in
// rounds and load shapes, with HDR latency statistics; it hands every decision to the evidence
// (overshoot, refusal), emits Snapshots on a channel and returns a Summary; it never prints.
package bench
