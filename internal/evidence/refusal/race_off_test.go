//go:build !race

package refusal_test

// raceDetector: see race_on_test.go.
const raceDetector = false
