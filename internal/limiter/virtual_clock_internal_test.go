package limiter

import (
	"errors"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/rediserr"
)

// sha1Reply is an error reply of Redis, as go-redis returns one.
type sha1Reply string

func (r sha1Reply) Error() string { return string(r) }
func (sha1Reply) RedisError()     {}

// The wrapper's SHA1 is replaced by the user's in Redis's replies only, keeping the reply's
// code (so it classifies as before) and what it wraps; the same words in another error stay.
func TestUserSHA1ErrorsRenamesRepliesOnly(t *testing.T) {
	const wrapper, user = "1111111111111111111111111111111111111111", "2222222222222222222222222222222222222222"
	reply := sha1Reply("BUSY Redis is busy running a script. script: " + wrapper + ", on @user_script:3.")
	got := userSHA1Errors(reply, wrapper, user)
	if got.Error() != "BUSY Redis is busy running a script. script: "+user+", on @user_script:3." {
		t.Errorf("renamed %q", got)
	}
	if !errors.Is(got, reply) || rediserr.Classify(got) != rediserr.Busy || !redis.HasErrorPrefix(got, "BUSY") {
		t.Errorf("the renamed reply lost its code or its cause: %v (%s)", got, rediserr.Classify(got))
	}
	if again := userSHA1Errors(got, wrapper, user); again != got {
		t.Errorf("renamed twice: %v", again)
	}
	notReply := errors.New("script: " + wrapper)
	if got := userSHA1Errors(notReply, wrapper, user); got != notReply {
		t.Errorf("an error that is no reply of Redis was rewritten: %v", got)
	}
	if userSHA1Errors(nil, wrapper, user) != nil {
		t.Error("nil became an error")
	}
}
