package bench

import (
	"errors"
	"testing"
)

func TestClassifyPermissionErrors(t *testing.T) {
	for msg, want := range map[string]string{
		"NOPERM this user has no permissions to run the 'zadd' command":                                             "noperm",
		"EXECABORT Transaction discarded because of: NOPERM this user has no permissions to run the 'exec' command": "noperm",
		"ERR The user executing the script can't run this command or subcommand script: e68d, on @user_script:1.":   "noperm",
		"NOAUTH Authentication required.":                                                                             "noperm",
		"WRONGPASS invalid username-password pair or user is disabled.":                                               "noperm",
		"ERR user_script:1: Script attempted to access nonexistent global variable 'x' script: e68d, on @user_script": "script",
		"EXECABORT Transaction discarded because of previous errors.":                                                 "other",
	} {
		if got := Classify(errors.New(msg)); got != want {
			t.Errorf("Classify(%q) = %s, want %s", msg, got, want)
		}
	}
}
