package overshoot

// nothing is a kept callback for admits whose trace no test reads.
func nothing() {}
