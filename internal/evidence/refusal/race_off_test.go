//go:build !race

package refusal

// raceDetector: see race_on_test.go.
const raceDetector = false
