//go:build !race

package bench

// raceDetector: see race_on_test.go.
const raceDetector = false
