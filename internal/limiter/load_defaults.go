package limiter

import "time"

// The load shapes of --profile.
const (
	ProfileSteady = "steady"
	ProfileBursty = "bursty"
)

// DefaultProfile is the load shape a limiter is hammered with unless --profile says otherwise:
// bursty where its description asks for it (Description.Bursty says why).
func DefaultProfile(k Kind) string {
	if k.Describe().Bursty {
		return ProfileBursty
	}
	return ProfileSteady
}

// DefaultSkew is how far the workers' clocks disagree unless --skew says otherwise, for a limit
// per window (Description.Skew says why).
func DefaultSkew(k Kind, limit int64, window time.Duration) time.Duration {
	return k.Describe().Skew(limit, window)
}
