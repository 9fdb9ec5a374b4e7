package keys

// Flag marks a key that needs an operator's attention.
type Flag string

// The flags, in the order they are listed.
const (
	FlagNoTTL     Flag = "NO_TTL"     // the key never expires: an abandoned limiter key lives forever
	FlagStale     Flag = "STALE"      // members older than the stale threshold
	FlagOverLimit Flag = "OVER_LIMIT" // more members (or a higher count) than the given limit
)
